/**
 * One library "process" of the concurrency load (test/concurrency/load.ts, `via: 'library'`):
 * opens the library on a shared PostgreSQL database and performs `count` writes and `count`
 * authorize decisions, `inflight` requests at a time, then prints one JSON line: every
 * acknowledged write and decision, and its elapsed time. The HTTP variant sends the same
 * requests ({@link requestOf}) to `memauth serve` processes.
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

/** Request i of process `worker`: one write, then one decision that depends on it, in the same session. */
export interface Request {
  readonly tenant: string;
  readonly session: string;
  readonly writer: 'crm' | 'browser';
  readonly content: string;
  readonly source: string;
  readonly action: { type: string; args: Record<string, unknown> };
  readonly userTurn: string;
}

export function requestOf(worker: number, i: number, tenants: readonly string[]): Request {
  const acct = `ACCT-${worker}-${i}`;
  const trusted = i % 3 === 0;
  return {
    tenant: tenants[(worker * 7 + i) % tenants.length] as string,
    session: `w${worker}-s${Math.floor(i / 10)}`,
    writer: trusted ? 'crm' : 'browser',
    content: `Vendor ${i} of worker ${worker} is paid through ${acct}`,
    source: trusted ? `crm:vendor/${worker}/${i}` : `https://vendor${i}.example/pay`,
    action: i % 2 === 0 ? { type: 'pay', args: { to: acct, amount: 10 } } : { type: 'answer', args: { q: `who is vendor ${i}` } },
    userTurn: `pay vendor ${i} the amount of 10`,
  };
}

if (process.argv[2] === '--worker') {
  const a = JSON.parse(process.argv[3] ?? '{}') as WorkerArgs;
  const driver = await PostgresDriver.connect(a.url, { poolSize: a.inflight, migrate: false, create: false });
  const mem = await openMemory({ driver, policy: TEST_POLICY, checkpointKey: false });
  const out: WorkerResult = { worker: a.worker, writes: [], decisions: [], ms: 0, errors: [] };
  const one = async (i: number): Promise<void> => {
    const q = requestOf(a.worker, i, a.tenants);
    const w = await mem.write({ tenant: q.tenant, scope: 'load', principal: q.writer, content: q.content, source: q.source, session: q.session });
    out.writes.push({ tenant: q.tenant, id: w.record.id });
    const d = await mem.authorize({ tenant: q.tenant, session: q.session, action: q.action, dependsOn: [w.record.id], context: 'declared', userTurn: { principal: 'alice', text: q.userTurn } });
    out.decisions.push({ tenant: q.tenant, id: d.id, outcome: d.outcome });
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
