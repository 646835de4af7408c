/**
 * Benchmark (prints, asserts nothing on time): search p50 on one SQLite file of N records
 * (default 20,000) for a term present in every record (`acct`: every BM25 score ties), for a
 * selective term and for both in one query, through the driver (ranking and row reads) and the
 * library (`Memory.search`, views included), each against a baseline in the same process: one
 * statement ranking every match by BM25 with the row filter (what the driver did before it bounded
 * the matches it scores), with the ratio driver / baseline.
 *
 * Usage: node dist/perf/search-ties.js [--records N] [--queries K] [--db FILE] (an existing FILE is
 * reused; K queries per line, default 30).
 */
import { existsSync } from 'node:fs';
import { openMemory } from '../src/api/open.js';
import { SqliteDriver, ftsQuery } from '../src/store/sqlite/driver.js';
import { fmtNs, nowNs, summarize } from './stats.js';

const TENANT = 'perf';
const SCOPE = 's0';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

/** Time `k` sequential calls of `fn`; their p50 and p99 (ns). */
async function timed(k: number, fn: () => unknown): Promise<{ p50: number; p99: number }> {
  const lat: number[] = [];
  for (let i = 0; i < k; i++) {
    const t0 = nowNs();
    await fn();
    lat.push(Number(nowNs() - t0));
  }
  return summarize(lat);
}

const fmt = (s: { p50: number; p99: number }): string => `p50 ${fmtNs(s.p50)}  p99 ${fmtNs(s.p99)}`;

/** The baseline: every match ranked by BM25 (ties by id) with the row filter, the top `limit` kept. */
function rankEvery(d: SqliteDriver, query: string, limit: number, now: string): unknown[] {
  const fts = d.searchIndexTable(TENANT) as string;
  return d
    .unsafeDatabase()
    .prepare(
      `SELECT r.*, bm25(${fts}, 1.0, 0.0) AS score FROM ${fts} JOIN records r ON r.rowid = ${fts}.rowid
       WHERE ${fts} MATCH ? AND r.tenant = ? AND r.scope = ? AND r.status = 'active' AND (r.expires_at IS NULL OR r.expires_at > ?)
       ORDER BY score, r.id LIMIT ?`,
    )
    .all(`content : (${ftsQuery(query) as string})`, TENANT, SCOPE, now, limit);
}

async function main(): Promise<void> {
  const n = Number(arg('--records', '20000'));
  const path = arg('--db', `/tmp/memauth-search-ties-${n}.db`);
  const fresh = !existsSync(path);
  const mem = await openMemory({ path, groupCommit: true, checkpointKey: false });
  if (fresh) {
    await mem.registerPrincipal({ tenant: TENANT, id: 'alice', kind: 'user', domain: 'alice' });
    for (let i = 0; i < n; i += 256) {
      const batch = Array.from({ length: Math.min(256, n - i) }, (_, j) => mem.write({ tenant: TENANT, scope: SCOPE, principal: 'alice', content: `vendor v${i + j}x pays ACCT-${i + j}` }));
      await Promise.all(batch);
    }
  }
  const now = new Date().toISOString();
  process.stdout.write(`search at ${n} records (${path})\n`);
  const k = Number(arg('--queries', '30'));
  for (const [label, query] of [
    ['term in every record (acct)', 'acct'],
    ['selective term (v777x)', 'v777x'],
    ['both (acct v777x)', 'acct v777x'],
  ] as const) {
    const base = await timed(k, () => rankEvery(mem.driver as SqliteDriver, query, 10, now));
    const drv = await timed(k, () => mem.driver.search(TENANT, SCOPE, query, 10, now));
    const lib = await timed(k, () => mem.search({ tenant: TENANT, scope: SCOPE, query }));
    const ratio = (s: { p50: number }): string => `${(s.p50 / base.p50).toFixed(3)}×`;
    process.stdout.write(`  ${label}: baseline (rank every match) ${fmt(base)}\n`);
    process.stdout.write(`    driver.search ${fmt(drv)}  p50 ratio ${ratio(drv)}\n`);
    process.stdout.write(`    Memory.search ${fmt(lib)}  p50 ratio ${ratio(lib)}\n`);
  }
  await mem.close();
}

await main();
