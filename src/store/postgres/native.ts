/**
 * What the PostgreSQL driver does its own way: running a statement (named prepared statements
 * through `pg`, errors mapped), full-text search over the generated tsvector, and lineage in one
 * recursive statement. Everything else is the shared SQL of src/store/sql/.
 *
 * May import: pg (types), core types, ../driver.js, ../rows.js, ../sql/*, ./errors.js, ./schema.js.
 */
import { createHash } from 'node:crypto';
import type { DerivationEdge } from '../../core/types.js';
import type { SearchHit } from '../driver.js';
import { type Row, lineageFromRows, searchTokens } from '../rows.js';
import { type Stmt, postgresDialect } from '../sql/dialect.js';
import type { NativeReads, SqlExecutor, SqlReader } from '../sql/reader.js';
import { RECORD_COLUMNS } from '../sql/statements.js';
import { type PostgresTarget, mapPgError } from './errors.js';
import { FTS_TEXT_FUNCTION } from './schema.js';
import type { Queryable } from './setup.js';

/** Statement name for pg's per-connection prepared-statement cache. */
const stmtName = (sql: string): string => `m_${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`;

/** Statements over the pool (outside transactions) or one client (inside), errors mapped. */
export function pgExecutor(q: Queryable, target: PostgresTarget): SqlExecutor {
  const all = async (s: Stmt): Promise<Row[]> => {
    try {
      return (await q.query({ name: stmtName(s.text), text: s.text, values: [...s.values] })).rows as Row[];
    } catch (e) {
      throw mapPgError(e, target);
    }
  };
  return {
    all,
    async run(stmts) {
      for (const s of stmts) if (s !== null) await all(s);
    },
  };
}

const RECORD_COLUMNS_OF_R = RECORD_COLUMNS.split(',')
  .map((c) => `r.${c.trim()}`)
  .join(', ');

/**
 * Full-text search with the same tokens as SQLite's: the query's words, OR-ed, matched against
 * the generated tsvector and ranked by `ts_rank` (higher is better). A limit below 1 finds
 * nothing (as on SQLite; a negative LIMIT is an error in PostgreSQL).
 */
async function search(r: SqlReader, tenant: string, scope: string, query: string, limit: number, now: string): Promise<SearchHit[]> {
  const tokens = searchTokens(query);
  if (tokens.length === 0 || limit < 1) return [];
  const text = `WITH q AS (
       SELECT to_tsquery('simple', string_agg(quote_literal(lexeme), ' | ')) AS q
       FROM unnest(to_tsvector('simple', ${FTS_TEXT_FUNCTION}(?)))
     )
     SELECT ${RECORD_COLUMNS_OF_R}, ts_rank(r.search, q.q) AS score
     FROM records r, q
     WHERE q.q IS NOT NULL AND r.search @@ q.q AND r.tenant = ? AND r.scope = ? AND r.status = 'active' AND (r.expires_at IS NULL OR r.expires_at > ?)
     ORDER BY score DESC, r.id LIMIT ?`;
  const rows = await r.rows({ text: postgresDialect.sql(text), values: [tokens.join(' '), tenant, scope, now, limit] });
  const recs = await r.recordsFromRows(rows, now);
  return recs.map((record, i) => ({ record, score: Number((rows[i] as Row).score) }));
}

/** The lineage DAG in one statement; like the SQLite driver's walk, it never leaves the tenant. */
async function lineage(r: SqlReader, tenant: string, ids: readonly string[]): Promise<Map<string, DerivationEdge[]>> {
  if (ids.length === 0) return new Map();
  const text = `WITH RECURSIVE l(id) AS (
       SELECT id FROM records WHERE tenant = $1 AND id = ANY($2::text[])
       UNION
       SELECT r.id FROM l JOIN derivations d ON d.record_id = l.id JOIN records r ON r.id = d.from_id AND r.tenant = $1
     )
     SELECT l.id, d.from_id, d.transform, d.kind FROM l LEFT JOIN derivations d ON d.record_id = l.id ORDER BY l.id, d.ord`;
  return lineageFromRows(await r.rows({ text, values: [tenant, [...new Set(ids)]] }));
}

/** PostgreSQL's own reads (see {@link NativeReads}). */
export const pgNative: NativeReads = { search, lineage };
