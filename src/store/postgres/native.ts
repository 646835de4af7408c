/**
 * What the PostgreSQL driver does its own way: running a statement (named prepared statements
 * through `pg`, errors mapped), full-text search (./search.ts), and lineage in one
 * recursive statement. Everything else is the shared SQL of src/store/sql/.
 *
 * May import: pg (types), core types, ../driver.js, ../rows.js, ../sql/*, ./errors.js, ./search.js.
 */
import { createHash } from 'node:crypto';
import type { DerivationEdge } from '../../core/types.js';
import { type Row, lineageFromRows } from '../rows.js';
import type { Stmt } from '../sql/dialect.js';
import type { NativeReads, SqlExecutor, SqlReader } from '../sql/reader.js';
import { type PostgresTarget, mapPgError } from './errors.js';
import { pgSearch } from './search.js';
import type { Queryable } from './setup.js';

/** Statement name for pg's per-connection prepared-statement cache. */
const stmtName = (sql: string): string => `m_${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`;

/**
 * Statements over the pool (outside transactions) or one client (inside), errors mapped. A
 * statement is prepared once per connection under its name, except one asking for a
 * {@link Stmt.customPlan}: it runs unnamed, which PostgreSQL plans with the call's values.
 */
export function pgExecutor(q: Queryable, target: PostgresTarget): SqlExecutor {
  const all = async (s: Stmt): Promise<Row[]> => {
    try {
      return (await q.query(s.customPlan === true ? { text: s.text, values: [...s.values] } : { name: stmtName(s.text), text: s.text, values: [...s.values] })).rows as Row[];
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
export const pgNative: NativeReads = { search: pgSearch, lineage };
