/**
 * One "server process" of the concurrency test (test/postgres-concurrency.test.ts): opens the
 * library on a shared PostgreSQL schema and performs `count` writes and `count` authorize
 * decisions, `inflight` requests at a time (as a server handling concurrent requests would),
 * then prints one JSON line: every acknowledged write and decision, and its elapsed time.
 *
 *   node dist/test/concurrency/worker.js --worker '<json WorkerArgs>'
 *
 * Without `--worker` (as when `node --test` loads every file under dist/test/) it does nothing.
 */
import { openMemory } from '../../src/index.js';
import { PostgresDriver } from '../../src/store/postgres/index.js';
import { TEST_POLICY } from '../helpers.js';

export interface WorkerArgs {
  readonly url: string;
  readonly schema: string;
  readonly worker: number;
  readonly count: number;
  readonly tenants: readonly string[];
  readonly inflight: number;
}

export interface WorkerResult {
  readonly worker: number;
  readonly writes: Array<{ tenant: string; id: string }>;
  readonly decisions: Array<{ tenant: string; id: string; outcome: string }>;
  ms: number;
  readonly errors: string[];
}

if (process.argv[2] === '--worker') {
  const a = JSON.parse(process.argv[3] ?? '{}') as WorkerArgs;
  const driver = await PostgresDriver.connect(a.url, { schema: a.schema, poolSize: a.inflight, migrate: false, create: false });
  const mem = await openMemory({ driver, policy: TEST_POLICY, checkpointKey: false });
  const out: WorkerResult = { worker: a.worker, writes: [], decisions: [], ms: 0, errors: [] };
  const tenantOf = (i: number): string => a.tenants[(a.worker * 7 + i) % a.tenants.length] as string;
  // request i: one write, then one decision that depends on it, in the same session
  const one = async (i: number): Promise<void> => {
    const tenant = tenantOf(i);
    const session = `w${a.worker}-s${Math.floor(i / 10)}`;
    const acct = `ACCT-${a.worker}-${i}`;
    const trusted = i % 3 === 0;
    const w = await mem.write({
      tenant,
      scope: 'load',
      principal: trusted ? 'crm' : 'browser',
      content: `Vendor ${i} of worker ${a.worker} is paid through ${acct}`,
      source: trusted ? `crm:vendor/${a.worker}/${i}` : `https://vendor${i}.example/pay`,
      session,
    });
    out.writes.push({ tenant, id: w.record.id });
    const d = await mem.authorize({
      tenant,
      session,
      action: i % 2 === 0 ? { type: 'pay', args: { to: acct, amount: 10 } } : { type: 'answer', args: { q: `who is vendor ${i}` } },
      dependsOn: [w.record.id],
      context: 'declared',
      userTurn: { principal: 'alice', text: `pay vendor ${i} the amount of 10` },
    });
    out.decisions.push({ tenant, id: d.id, outcome: d.outcome });
  };
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: a.inflight }, async () => {
      for (;;) {
        const i = next++;
        if (i >= a.count) return;
        try {
          await one(i);
        } catch (e) {
          out.errors.push(`${i}: ${(e as Error).message}`);
        }
      }
    }),
  );
  out.ms = performance.now() - started;
  await mem.close();
  process.stdout.write(`${JSON.stringify(out)}\n`);
}
