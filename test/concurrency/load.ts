/**
 * The multi-process load behind test/postgres-concurrency.test.ts and the README's throughput
 * figures: N worker processes (test/concurrency/worker.ts) on one PostgreSQL schema, then the
 * checks — every acknowledged write and decision present, every tenant's chain verifies, and
 * decisions replay from the log to the same outcome.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openMemory } from '../../src/index.js';
import { PostgresDriver } from '../../src/store/postgres/index.js';
import { TEST_POLICY } from '../helpers.js';
import type { WorkerArgs, WorkerResult } from './worker.js';

export interface LoadOptions {
  readonly url: string;
  readonly processes: number;
  /** writes (and as many decisions) per process. */
  readonly count: number;
  /** number of tenants the requests are spread over (1 = every process on one chain). */
  readonly tenants: number;
  /** requests in flight per process. Default 4. */
  readonly inflight?: number;
  /** decisions to replay (a random sample); `Infinity` for all. Default 200. */
  readonly replaySample?: number;
}

export interface LoadResult {
  readonly processes: number;
  readonly tenants: number;
  readonly writes: number;
  readonly decisions: number;
  /** the load phase: from the first worker's start to the last worker's end (max of their clocks). */
  readonly seconds: number;
  readonly writesPerSecond: number;
  readonly decisionsPerSecond: number;
  readonly errors: string[];
  readonly missingWrites: number;
  readonly missingDecisions: number;
  readonly chainsOk: boolean;
  readonly chainEntries: number;
  readonly chainMessages: string[];
  readonly replayed: number;
  readonly replayMismatches: string[];
  readonly outcomes: Record<string, number>;
}

const WORKER = fileURLToPath(new URL('./worker.js', import.meta.url));

function runWorker(args: WorkerArgs): Promise<WorkerResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER, '--worker', JSON.stringify(args)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || line === '') reject(new Error(`worker ${args.worker} exited ${code}: ${err.slice(0, 2000)}`));
      else resolve(JSON.parse(line) as WorkerResult);
    });
  });
}

/** Run the load on a fresh schema, check it, drop the schema. */
export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const schema = `load_${randomBytes(5).toString('hex')}`;
  const tenants = Array.from({ length: o.tenants }, (_, i) => (o.tenants === 1 ? 'acme' : `tenant${String(i).padStart(3, '0')}`));
  const setupDriver = await PostgresDriver.connect(o.url, { schema });
  const setup = await openMemory({ driver: setupDriver, policy: TEST_POLICY, checkpointKey: false });
  for (const tenant of tenants) {
    await setup.registerPrincipal({ tenant, id: 'alice', kind: 'user', domain: 'alice' });
    await setup.registerPrincipal({ tenant, id: 'browser', kind: 'tool', domain: 'browser.vendor' });
    await setup.registerPrincipal({ tenant, id: 'crm', kind: 'tool', domain: 'crm.example' });
  }
  await setup.close();
  try {
    const results = await Promise.all(
      Array.from({ length: o.processes }, (_, worker) => runWorker({ url: o.url, schema, worker, count: o.count, tenants, inflight: o.inflight ?? 4 })),
    );
    const seconds = Math.max(...results.map((r) => r.ms)) / 1000;
    const writes = results.flatMap((r) => r.writes);
    const decisions = results.flatMap((r) => r.decisions);
    const errors = results.flatMap((r) => r.errors.map((e) => `worker ${r.worker}: ${e}`));
    const outcomes: Record<string, number> = {};
    for (const d of decisions) outcomes[d.outcome] = (outcomes[d.outcome] ?? 0) + 1;

    const driver = await PostgresDriver.connect(o.url, { schema, migrate: false, create: false });
    const mem = await openMemory({ driver, policy: TEST_POLICY, checkpointKey: false });
    let missingWrites = 0;
    let missingDecisions = 0;
    const client = await driver.unsafeClient();
    try {
      const w = await client.query('SELECT count(*) AS n FROM records WHERE id = ANY($1::text[])', [writes.map((x) => x.id)]);
      missingWrites = writes.length - Number((w.rows[0] as { n: string }).n);
      const d = await client.query('SELECT count(*) AS n FROM decisions WHERE id = ANY($1::text[])', [decisions.map((x) => x.id)]);
      missingDecisions = decisions.length - Number((d.rows[0] as { n: string }).n);
    } finally {
      client.release();
    }
    const report = await mem.verifyAudit({});
    const sample = [...decisions].sort(() => Math.random() - 0.5).slice(0, o.replaySample ?? 200);
    const replayMismatches: string[] = [];
    for (const d of sample) {
      const r = await mem.replay({ tenant: d.tenant, decisionId: d.id });
      if (!r.matches || r.recorded.outcome !== d.outcome) replayMismatches.push(d.id);
    }
    await mem.close();
    return {
      processes: o.processes,
      tenants: o.tenants,
      writes: writes.length,
      decisions: decisions.length,
      seconds,
      writesPerSecond: writes.length / seconds,
      decisionsPerSecond: decisions.length / seconds,
      errors,
      missingWrites,
      missingDecisions,
      chainsOk: report.ok && report.tenants.length === tenants.length,
      chainEntries: report.tenants.reduce((n, t) => n + t.chain.entries, 0),
      chainMessages: report.tenants.filter((t) => !t.ok).map((t) => t.message),
      replayed: sample.length,
      replayMismatches,
      outcomes,
    };
  } finally {
    const c = new pg.Client({ connectionString: o.url });
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await c.end();
  }
}
