/**
 * The reads that authenticating one bearer token makes (src/server/tokens.ts: the token row, its
 * `token_*` entries and the successor of each, its principal's row, that principal's registration
 * entries and the successor of each), sent to PostgreSQL as one simple query — one round trip
 * instead of six, on every request of an HTTP or MCP server. Outside a transaction each statement
 * reads its own snapshot either way (READ COMMITTED), so the answers are those the six reads would
 * have given one after another; nothing is kept past the request (a revocation counts from the
 * next one).
 *
 * The answers are handed out by a {@link SqlReader} whose executor answers exactly the statements
 * those reads make (same text, same values) from the query, and sends any other to the pool.
 *
 * May import: core/identity, ../rows.js, ../sql/*, ./batch-exec.js (literals), ./kept-reads.js (statement keys).
 */
import { TOKEN_OPS, tokenChain } from '../../core/identity.js';
import type { StorageReader } from '../driver.js';
import type { Row } from '../rows.js';
import { postgresDialect } from '../sql/dialect.js';
import { type NativeReads, type SqlExecutor, SqlReader } from '../sql/reader.js';
import * as S from '../sql/statements.js';
import { escapeLiteral, sqlArrayLiteral } from './batch-exec.js';
import { stmtKey } from './kept-reads.js';

const d = postgresDialect;

/** The six statements for the token whose hash is `hash` (hex), values inlined. */
function statements(hash: string): string[] {
  const h = escapeLiteral(hash);
  const token = `SELECT * FROM tokens WHERE hash = ${h}`;
  const entries = `SELECT * FROM audit WHERE tenant = (SELECT coalesce(tenant, ${escapeLiteral(tokenChain(null))}) FROM tokens WHERE hash = ${h}) AND op = ANY(${sqlArrayLiteral([...new Set(TOKEN_OPS)])}::text[]) AND (payload::json ->> 'tokenId') = (SELECT id FROM tokens WHERE hash = ${h})`;
  const registrations = `SELECT * FROM audit WHERE tenant = (SELECT tenant FROM tokens WHERE hash = ${h}) AND op = 'principal' AND (payload::json ->> 'principalId') = (SELECT principal_id FROM tokens WHERE hash = ${h})`;
  const successors = (of: string) => `SELECT a.* FROM audit a JOIN (${of}) e ON a.tenant = e.tenant AND a.seq = e.seq + 1 ORDER BY a.seq`;
  return [
    token,
    `${entries} ORDER BY seq`,
    successors(entries),
    `SELECT * FROM principals WHERE (tenant, id) = (SELECT tenant, principal_id FROM tokens WHERE hash = ${h})`,
    `${registrations} ORDER BY seq`,
    successors(registrations),
  ];
}

/** Answers to the statements the token reads make, keyed by statement (see the module header). */
function answers(hash: string, rows: ReadonlyArray<readonly Row[]>): Map<string, Row[]> {
  const [tokens = [], entries = [], entrySuccessors = [], principals = [], registrations = [], regSuccessors = []] = rows;
  const out = new Map<string, Row[]>([[stmtKey(S.token(d, { hash })), [...tokens]]]);
  const t = tokens[0];
  if (t === undefined) return out;
  const chain = tokenChain(t.tenant === null ? null : String(t.tenant));
  out.set(stmtKey(S.auditNaming(d, chain, [...new Set(TOKEN_OPS)], { field: 'tokenId', value: String(t.id) })), [...entries]);
  // the successor of each entry, or none (the entry is the chain's head)
  const next = new Map([...entrySuccessors, ...regSuccessors].map((e) => [`${String(e.tenant)}:${Number(e.seq)}`, e]));
  for (const e of [...entries, ...registrations]) {
    const [tenant, seq] = [String(e.tenant), Number(e.seq) + 1];
    const n = next.get(`${tenant}:${seq}`);
    out.set(stmtKey(S.auditRange(d, tenant, seq, seq)), n === undefined ? [] : [n]);
  }
  if (t.tenant === null || t.principal_id === null) return out;
  const [tenant, pid] = [String(t.tenant), String(t.principal_id)];
  out.set(stmtKey(S.principal(d, tenant, pid)), [...principals]);
  out.set(stmtKey(S.auditNaming(d, tenant, ['principal'], { field: 'principalId', value: pid })), [...registrations]);
  return out;
}

/**
 * A reader that answers the reads of authenticating the token whose hash is `hash` from one
 * round trip of `query`, and sends any other read through `exec`.
 * @param hash - the token's SHA-256, hex (src/server/tokens.ts `tokenHash`).
 * @throws what `query` throws (the caller maps it: `DATABASE_UNAVAILABLE`).
 */
export async function tokenReads(hash: string, query: (sql: string) => Promise<ReadonlyArray<readonly Row[]>>, exec: SqlExecutor, native: NativeReads): Promise<StorageReader> {
  const kept = answers(hash, await query(statements(hash).join(';\n')));
  const prefetched: SqlExecutor = {
    all: (s) => {
      const hit = kept.get(stmtKey(s));
      return hit !== undefined ? [...hit] : exec.all(s);
    },
    run: (stmts) => exec.run(stmts),
  };
  return new SqlReader(prefetched, d, native);
}
