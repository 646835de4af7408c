/**
 * Benchmark (prints, asserts nothing on time): search p50 on one store of N records (default
 * 20,000) for a term present in every record (`acct`: every score ties), for a selective term and
 * for both in one query, through the driver (ranking and row reads) and the library
 * (`Memory.search`, views included), each against a baseline in the same process: one statement
 * ranking every match with the row filter (BM25 on SQLite, `ts_rank` on PostgreSQL — what the
 * drivers did before they bounded the matches they score), with the ratio driver / baseline.
 *
 * Usage: node dist/perf/search-ties.js [--records N] [--queries K] [--db FILE] [--postgres]
 * (an existing FILE is reused; K queries per line, default 30). With --postgres the store is the
 * schema `search_ties_<N>` (reused when it holds the records) on MEMAUTH_TEST_PG_URL, else on a
 * throwaway cluster started like the tests' (test/support/postgres.ts).
 * May import: src/api, src/store/sqlite, src/store/postgres, test/support/postgres, ./stats.
 */
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import type { Memory } from '../src/api/memory.js';
import { openMemory } from '../src/api/open.js';
import { PostgresDriver } from '../src/store/postgres/driver.js';
import { SqliteDriver, ftsQuery } from '../src/store/sqlite/driver.js';
import { startCluster } from '../test/support/postgres.js';
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

/** The store under test: the memory, its baseline search (rank every match, top `limit` rows), where it is, and how to let go. */
interface Bench {
  readonly mem: Memory;
  readonly where: string;
  /** whether the store already holds the records (then nothing is loaded). */
  readonly loaded: boolean;
  baseline(query: string, limit: number, now: string): Promise<unknown[]>;
  close(): Promise<void>;
}

/** SQLite baseline: every match ranked by BM25 (ties by id) with the row filter, the top `limit` kept. */
async function sqliteBench(n: number): Promise<Bench> {
  const path = arg('--db', `/tmp/memauth-search-ties-${n}.db`);
  const loaded = existsSync(path);
  const mem = await openMemory({ path, groupCommit: true, checkpointKey: false });
  const d = mem.driver as SqliteDriver;
  return {
    mem,
    where: path,
    loaded,
    baseline: async (query, limit, now) => {
      const fts = d.searchIndexTable(TENANT) as string;
      return d
        .unsafeDatabase()
        .prepare(
          `SELECT r.*, bm25(${fts}, 1.0, 0.0) AS score FROM ${fts} JOIN records r ON r.rowid = ${fts}.rowid
           WHERE ${fts} MATCH ? AND r.tenant = ? AND r.scope = ? AND r.status = 'active' AND (r.expires_at IS NULL OR r.expires_at > ?)
           ORDER BY score, r.id LIMIT ?`,
        )
        .all(`content : (${ftsQuery(query) as string})`, TENANT, SCOPE, now, limit);
    },
    close: () => mem.close(),
  };
}

/** PostgreSQL baseline: every match ranked by `ts_rank` (ties by id) with the row filter, the top `limit` kept. */
async function postgresBench(n: number): Promise<Bench> {
  let url = process.env.MEMAUTH_TEST_PG_URL ?? '';
  let stop = (): void => undefined;
  if (url === '') {
    const server = await startCluster();
    if ('unavailable' in server) throw new Error(`--postgres: ${server.unavailable}`);
    ({ url, stop } = server);
  }
  const schema = `search_ties_${n}`;
  const driver = await PostgresDriver.connect(url, { schema, poolSize: 4 });
  const mem = await openMemory({ driver, checkpointKey: false });
  const client = await driver.unsafeClient();
  const count = (await client.query('SELECT count(*) AS n FROM records WHERE tenant = $1', [TENANT])).rows;
  return {
    mem,
    where: `${url.replace(/\/\/[^@]*@/, '//')} schema ${schema}`,
    loaded: Number(count[0]?.n) >= n,
    baseline: async (query, limit, now) =>
      (
        await client.query(
          `WITH q AS (SELECT to_tsquery('simple', string_agg(quote_literal(lexeme), ' | ')) AS q FROM unnest(to_tsvector('simple', memauth_fts_text($1))))
         SELECT r.*, ts_rank(r.search, q.q) AS score FROM records r, q
         WHERE q.q IS NOT NULL AND r.search @@ q.q AND r.tenant = $2 AND r.scope = $3 AND r.status = 'active' AND (r.expires_at IS NULL OR r.expires_at > $4)
         ORDER BY score DESC, r.id LIMIT $5`,
          [query, TENANT, SCOPE, now, limit],
        )
      ).rows,
    close: async () => {
      client.release();
      await mem.close();
      stop();
    },
  };
}

async function main(): Promise<void> {
  const n = Number(arg('--records', '20000'));
  const b = process.argv.includes('--postgres') ? await postgresBench(n) : await sqliteBench(n);
  const { mem } = b;
  if (!b.loaded) {
    await mem.registerPrincipal({ tenant: TENANT, id: 'alice', kind: 'user', domain: 'alice' });
    for (let i = 0; i < n; i += 256) {
      const batch = Array.from({ length: Math.min(256, n - i) }, (_, j) => mem.write({ tenant: TENANT, scope: SCOPE, principal: 'alice', content: `vendor v${i + j}x pays ACCT-${i + j}` }));
      await Promise.all(batch);
    }
  }
  const now = new Date().toISOString();
  process.stdout.write(
    `search at ${n} records (${b.where}); load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}\n`,
  );
  const k = Number(arg('--queries', '30'));
  for (const [label, query] of [
    ['term in every record (acct)', 'acct'],
    ['selective term (v777x)', 'v777x'],
    ['both (acct v777x)', 'acct v777x'],
    ['three words in every record (vendor pays acct)', 'vendor pays acct'],
  ] as const) {
    const base = await timed(k, () => b.baseline(query, 10, now));
    const drv = await timed(k, () => mem.driver.search(TENANT, SCOPE, query, 10, now));
    const lib = await timed(k, () => mem.search({ tenant: TENANT, scope: SCOPE, query }));
    const ratio = (s: { p50: number }): string => `${(s.p50 / base.p50).toFixed(3)}×`;
    process.stdout.write(`  ${label}: baseline (rank every match) ${fmt(base)}\n`);
    process.stdout.write(`    driver.search ${fmt(drv)}  p50 ratio ${ratio(drv)}\n`);
    process.stdout.write(`    Memory.search ${fmt(lib)}  p50 ratio ${ratio(lib)}\n`);
  }
  await b.close();
}

await main();
