/**
 * Benchmark (prints, asserts nothing on time): the gate's repeat check in a long session — the
 * session's first allowed decision of one action type (`StorageTx.allowedInSession`, one index
 * look-up) — against the baseline of loading every allowed decision of the session and parsing it
 * (what a look-up without the `action_type` column has to do), in the same process, on SQLite and,
 * when MEMAUTH_TEST_PG_URL is set, on PostgreSQL (a fresh schema). The session holds N allowed
 * decisions of 20 action types, each listing D dependencies (as a decision in a long session
 * does); the type looked up is the newest one's.
 *
 * Usage: node dist/perf/repeat-lookup.js [--n N] [--deps D]
 * May import: src/core types, src/store drivers, ./stats.js.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Decision } from '../src/core/types.js';
import type { StorageDriver, StorageTx } from '../src/store/driver.js';
import type { SqlReader } from '../src/store/sql/reader.js';
import { PostgresDriver } from '../src/store/postgres/driver.js';
import { SqliteDriver } from '../src/store/sqlite/driver.js';

const T = 't';
const S = 's';

function decision(i: number, type: string, deps: number): Decision {
  const dependencies = Array.from({ length: deps }, (_, j) => ({ memoryId: `mem_${j}`, why: ['context'], lowestAuthority: 'user_confirmed', actionAuthority: 'user_confirmed', status: 'active' }));
  const at = new Date(1.7e12 + i).toISOString();
  const d = { formatVersion: 1, id: `dec_${String(i).padStart(8, '0')}`, tenant: T, sessionId: S, at, action: { type, args: { n: i } }, argsHash: 'h', tier: 'high', mode: 'enforce' };
  return { ...d, outcome: 'allow', reasons: [], dependencies, values: [], confirmationId: null, policyVersion: 'p', auditSeq: i } as unknown as Decision;
}

/** Median milliseconds of `runs` calls of `fn` in a transaction each. */
async function median(driver: StorageDriver, runs: number, fn: (tx: StorageTx) => Promise<unknown>): Promise<number> {
  const ms: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now();
    await driver.transaction(T, fn);
    ms.push(performance.now() - t0);
  }
  return ms.sort((a, b) => a - b)[Math.floor(runs / 2)] as number;
}

async function measure(name: string, driver: StorageDriver & SqlReader, n: number, deps: number): Promise<string> {
  await driver.transaction(T, async (tx) => {
    for (let i = 0; i < n; i++) await tx.insertDecision(decision(i, i === n - 1 ? 'pay' : `type${i % 20}`, deps));
  });
  const text = "SELECT body FROM decisions WHERE tenant = ? AND session_id = ? AND outcome = 'allow' ORDER BY at, id";
  const baseline = await median(driver, 15, async () =>
    (await driver.rows({ text: driver.dialect.sql(text), values: [T, S] })).map((r) => JSON.parse(String(r.body)) as Decision).find((d) => d.action.type === 'pay'),
  );
  const memauth = await median(driver, 15, (tx) => tx.allowedInSession(T, S, 'pay'));
  await driver.close();
  return `| ${name} | ${memauth.toFixed(2)} ms | ${baseline.toFixed(2)} ms | ${(memauth / baseline).toFixed(4)}× |`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { n: { type: 'string', default: '1000' }, deps: { type: 'string', default: '200' } } });
  const n = Number(values.n);
  const deps = Number(values.deps);
  const dir = mkdtempSync(join(tmpdir(), 'memauth-repeat-'));
  const rows = [await measure('SQLite', SqliteDriver.open({ path: join(dir, 'memauth.db') }), n, deps)];
  const url = process.env.MEMAUTH_TEST_PG_URL ?? '';
  if (url !== '') rows.push(await measure('PostgreSQL', await PostgresDriver.connect(url, { schema: `perf_repeat_${process.pid}` }), n, deps));
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`repeat check: ${n} allowed decisions (${deps} dependencies each) in one session; median of 15, a transaction each; load ${loadavg()[0]?.toFixed(1)}\n\n`);
  process.stdout.write(`| store | allowedInSession | baseline: load and parse every allowed decision | ratio |\n|---|---:|---:|---:|\n${rows.join('\n')}\n`);
}

await main();
