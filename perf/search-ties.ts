/**
 * Benchmark (prints, asserts nothing on time): search p50 on one SQLite file of N records
 * (default 20,000) for a term present in every record (`acct`: every BM25 score ties) and for a
 * selective term, through the driver (ranking and row reads) and the library (`Memory.search`,
 * views included). Issue 16, finding 4: a term in every record once read every row.
 *
 * Usage: node dist/perf/search-ties.js [--records N] [--db FILE] (an existing FILE is reused).
 */
import { existsSync } from 'node:fs';
import { openMemory } from '../src/api/open.js';
import { fmtNs, nowNs, summarize } from './stats.js';

const TENANT = 'perf';
const SCOPE = 's0';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
}

/** Time `k` sequential calls of `fn`; their p50 and p99. */
async function timed(k: number, fn: () => Promise<unknown>): Promise<string> {
  const lat: number[] = [];
  for (let i = 0; i < k; i++) {
    const t0 = nowNs();
    await fn();
    lat.push(Number(nowNs() - t0));
  }
  const s = summarize(lat);
  return `p50 ${fmtNs(s.p50)}  p99 ${fmtNs(s.p99)}  (n=${k})`;
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
  for (const [label, query] of [
    ['term in every record (acct)', 'acct'],
    ['selective term (v777x)', 'v777x'],
  ] as const) {
    process.stdout.write(`  driver.search  ${label}: ${await timed(30, () => mem.driver.search(TENANT, SCOPE, query, 10, now))}\n`);
    process.stdout.write(`  Memory.search  ${label}: ${await timed(30, () => mem.search({ tenant: TENANT, scope: SCOPE, query }))}\n`);
  }
  await mem.close();
}

await main();
