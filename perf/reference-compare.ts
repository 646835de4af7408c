/**
 * Benchmark (prints, asserts nothing on time): memauth in process against the paper's reference
 * monitor re-stated in TypeScript (./reference-monitor.ts), one process, the same workload,
 * alternating rounds after a warm-up:
 *
 * - write: a user's fact (memauth: `Memory.write` on an in-memory SQLite store and on a file
 *   store with group commit; reference: `write` in RAM);
 * - authorize with 5 dependencies, all user facts (memauth: `Memory.authorize`, context
 *   `declared`; reference: `authorize`);
 * - search, 10 hits, over the records written.
 *
 * Each line prints memauth, the reference monitor and the ratio memauth ÷ reference (≤ 1: memauth
 * as fast or faster). Run: `node dist/perf/reference-compare.js [--records 5000] [--ops 2000]`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Memory } from '../src/api/memory.js';
import { DEFAULT_POLICY, loadPolicy } from '../src/core/policy.js';
import { SqliteDriver } from '../src/store/sqlite/driver.js';
import { ReferenceMonitor, Origin } from './reference-monitor.js';
import { fmtNs, nowNs, summarize } from './stats.js';

const TENANT = 'acme';

async function timeEach(n: number, op: (i: number) => unknown): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = nowNs();
    await op(i);
    out.push(Number(nowNs() - t0));
  }
  return out;
}

/** `rounds` alternating runs of both ops (`per` each); p50 of each side. */
async function alternate(rounds: number, per: number, ours: (i: number) => unknown, theirs: (i: number) => unknown): Promise<{ ours: number; theirs: number }> {
  const a: number[] = [];
  const b: number[] = [];
  let off = 0;
  for (let r = 0; r < rounds; r++) {
    if (r % 2 === 0) {
      a.push(...(await timeEach(per, (i) => ours(off + i))));
      b.push(...(await timeEach(per, (i) => theirs(off + i))));
    } else {
      b.push(...(await timeEach(per, (i) => theirs(off + i))));
      a.push(...(await timeEach(per, (i) => ours(off + i))));
    }
    off += per;
  }
  return { ours: summarize(a).p50, theirs: summarize(b).p50 };
}

async function setUp(path: string, groupCommit: boolean): Promise<Memory> {
  const driver = SqliteDriver.open({ path, groupCommit: groupCommit ? { maxOps: 512, maxDelayMs: 0 } : false });
  const mem = new Memory({ driver, policy: loadPolicy(DEFAULT_POLICY), checkpointKey: null });
  await mem.registerPrincipal({ tenant: TENANT, id: 'alice', kind: 'user', domain: 'acme-staff' });
  return mem;
}

const fact = (i: number): string => `Vendor V${i} is paid to account ACCT-${(i * 7919) % 100000}; terms net ${i % 60} days`;
const line = (label: string, r: { ours: number; theirs: number }): void => {
  process.stdout.write(`${label.padEnd(44)} ${fmtNs(r.ours).padStart(10)} ${fmtNs(r.theirs).padStart(10)} ${(r.ours / r.theirs).toFixed(2).padStart(7)}×\n`);
};

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { records: { type: 'string' }, ops: { type: 'string' } } });
  const records = Number(values.records ?? 5000);
  const ops = Number(values.ops ?? 2000);
  const dir = mkdtempSync(join(tmpdir(), 'memauth-ref-'));
  try {
    const rm = new ReferenceMonitor();
    const mem = await setUp(':memory:', false);
    const file = await setUp(join(dir, 'ref.db'), true);
    const ids: string[] = [];
    const refIds: string[] = [];
    for (let i = 0; i < records; i++) {
      ids.push((await mem.write({ tenant: TENANT, scope: 'vendors', principal: 'alice', content: fact(i) })).record.id);
      refIds.push(rm.write(fact(i), Origin.user));
    }
    const rounds = 6;
    const per = Math.max(1, Math.floor(ops / rounds));
    const w = (m: Memory) => (i: number) => m.write({ tenant: TENANT, scope: 'notes', principal: 'alice', content: `note ${i}` });
    const deps = (list: string[], i: number): string[] => Array.from({ length: 5 }, (_, k) => list[(i * 5 + k) % list.length]!);
    const act = (i: number) => ({ type: 'pay', args: { to: `ACCT-${(i * 7919) % 100000}`, amount: 100 + (i % 50) } });
    const pay = (m: Memory) => (i: number) => m.authorize({ tenant: TENANT, action: act(i), dependsOn: deps(ids, i), context: 'declared' });
    const refPay = (i: number) => rm.authorize({ tool: 'pay', ...act(i).args }, deps(refIds, i));
    await alternate(2, 200, pay(mem), refPay); // warm-up
    const results = {
      writeMem: await alternate(rounds, per, w(mem), (i) => rm.write(`note ${i}`, Origin.user)),
      writeFile: await alternate(rounds, per, w(file), (i) => rm.write(`note ${i}`, Origin.user)),
      payMem: await alternate(rounds, per, pay(mem), refPay),
      search: await alternate(
        rounds,
        Math.max(1, Math.floor(per / 10)),
        (i) => mem.search({ tenant: TENANT, scope: 'vendors', query: `V${i % records}`, limit: 10 }),
        (i) => rm.search(`V${i % records}`, 10),
      ),
    };
    process.stdout.write(`\nIn process, ${records} facts, ${ops} operations per line; ${cpus().length} CPUs, load ${loadavg()[0]?.toFixed(2) ?? '?'}\n`);
    process.stdout.write(`${''.padEnd(44)} ${'memauth'.padStart(10)} ${'reference'.padStart(10)} ${'ratio'.padStart(8)}\n`);
    line('write p50 (in-memory store)', results.writeMem);
    line('write p50 (file, group commit, awaited)', results.writeFile);
    line('authorize, 5 deps, p50 (in-memory store)', results.payMem);
    line('search, 10 hits, p50', results.search);
    process.stdout.write(`ratio = memauth ÷ reference monitor (≤ 1: memauth as fast or faster); reference log verifies: ${rm.verify()}\n`);
    await Promise.all([mem.close(), file.close()]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
