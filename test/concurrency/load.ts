/**
 * The multi-process load behind test/postgres-concurrency.test.ts and the throughput figures
 * of docs/postgresql.md: N memauth processes on one fresh PostgreSQL database — real `memauth serve
 * --database postgres://…` server processes driven over HTTP (default), or library worker
 * processes (test/concurrency/worker.ts) — then the checks: every acknowledged write and
 * decision present, every tenant's chain verifies, and decisions replay from the log to the
 * recorded outcome.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openMemory } from '../../src/index.js';
import { TokenService } from '../../src/server/tokens.js';
import { PostgresDriver } from '../../src/store/postgres/index.js';
import { TEST_POLICY, tempDir } from '../helpers.js';
import { withPgClient } from '../support/postgres.js';
import { type Request, type WorkerArgs, type WorkerResult, requestOf } from './worker.js';

export interface LoadOptions {
  /** a PostgreSQL URL whose user may CREATE DATABASE; the load gets a fresh database, dropped afterwards. */
  readonly url: string;
  readonly processes: number;
  /** writes (and as many decisions) per process. */
  readonly count: number;
  /** number of tenants the requests are spread over (1 = every process on one chain). */
  readonly tenants: number;
  /** `http`: `memauth serve` processes over HTTP (default); `library`: worker processes using the library. */
  readonly via?: 'http' | 'library';
  /** requests in flight per process. Default 4. */
  readonly inflight?: number;
  /** decisions to replay (a random sample); `Infinity` for all. Default 200. */
  readonly replaySample?: number;
}

export interface LoadResult {
  readonly via: 'http' | 'library';
  readonly processes: number;
  readonly tenants: number;
  readonly writes: number;
  readonly decisions: number;
  /** the load phase (requests only; not process start-up or the checks). */
  readonly seconds: number;
  readonly writesPerSecond: number;
  readonly decisionsPerSecond: number;
  readonly errors: string[];
  readonly missingWrites: number;
  readonly missingDecisions: number;
  readonly chainsOk: boolean;
  /** `token_issue` entries of the tenants' chains (one per token issued before the load). */
  readonly tokenEntries: number;
  readonly chainEntries: number;
  readonly chainMessages: string[];
  readonly replayed: number;
  readonly replayMismatches: string[];
  readonly outcomes: Record<string, number>;
}

const WORKER = fileURLToPath(new URL('./worker.js', import.meta.url));
const CLI = fileURLToPath(new URL('../../src/cli/main.js', import.meta.url));

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

/** Start `memauth serve --database url` on a free port; resolves with its base URL once it listens. */
function startServe(dbUrl: string, policyFile: string): Promise<{ child: ChildProcess; base: string }> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const k of ['MEMAUTH_DB', 'DATABASE_URL', 'MEMAUTH_PORT', 'MEMAUTH_HOST', 'MEMAUTH_CONFIG', 'MEMAUTH_POLICY']) delete env[k];
    const child = spawn(process.execPath, [CLI, 'serve', '--database', dbUrl, '--policy', policyFile, '--port', '0', '--log-level', 'silent'], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`memauth serve did not start: ${err.slice(0, 2000)}`)), 60_000);
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1] !== undefined) {
        clearTimeout(timer);
        resolve({ child, base: m[1] });
      }
    });
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`memauth serve exited ${code}: ${err.slice(0, 2000)}`));
    });
  });
}

/** Drive one server over HTTP the way a worker drives the library. */
async function httpClient(base: string, worker: number, count: number, tenants: readonly string[], inflight: number, tokens: Map<string, string>): Promise<WorkerResult> {
  const out: WorkerResult = { worker, writes: [], decisions: [], ms: 0, errors: [] };
  const post = async (pathName: string, token: string, body: unknown): Promise<Record<string, unknown>> => {
    const r = await fetch(`${base}${pathName}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const j = (await r.json()) as Record<string, unknown>;
    if (r.status !== 201 && r.status !== 200) throw new Error(`${pathName} ${r.status}: ${JSON.stringify(j).slice(0, 300)}`);
    return j;
  };
  const one = async (i: number): Promise<void> => {
    const q: Request = requestOf(worker, i, tenants);
    const w = await post('/v1/memories', tokens.get(`${q.tenant}/${q.writer}`) as string, { scope: 'load', content: q.content, source: q.source, session: `${q.session}-${q.writer}` });
    const id = String((w.record as { id: string }).id);
    out.writes.push({ tenant: q.tenant, id });
    const d = await post('/v1/decisions', tokens.get(`${q.tenant}/alice`) as string, {
      session: `${q.session}-alice`,
      action: q.action,
      dependsOn: [id],
      context: 'declared',
      userTurn: { text: q.userTurn },
    });
    out.decisions.push({ tenant: q.tenant, id: String(d.id), outcome: String(d.outcome) });
  };
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: inflight }, async () => {
      for (;;) {
        const i = next++;
        if (i >= count) return;
        try {
          await one(i);
        } catch (e) {
          out.errors.push(`${i}: ${(e as Error).message}`);
        }
      }
    }),
  );
  out.ms = performance.now() - started;
  return out;
}

/** Run the load on a fresh database, check it, drop the database. */
export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const via = o.via ?? 'http';
  const inflight = o.inflight ?? 4;
  const name = `memauth_load_${randomBytes(5).toString('hex')}`;
  await withPgClient(o.url, (c) => c.query(`CREATE DATABASE ${name}`));
  const u = new URL(o.url);
  u.pathname = `/${name}`;
  const dbUrl = u.toString();
  const dir = tempDir('memauth-load-');
  const tenants = Array.from({ length: o.tenants }, (_, i) => (o.tenants === 1 ? 'acme' : `tenant${String(i).padStart(3, '0')}`));
  const servers: ChildProcess[] = [];
  try {
    // principals (and, for HTTP, their bearer tokens) registered once, before the load
    const setup = await openMemory({ driver: await PostgresDriver.connect(dbUrl), policy: TEST_POLICY, checkpointKey: false });
    const tokens = new Map<string, string>();
    try {
      const ts = new TokenService(setup.driver);
      for (const tenant of tenants) {
        await setup.registerPrincipal({ tenant, id: 'alice', kind: 'user', domain: 'alice' });
        await setup.registerPrincipal({ tenant, id: 'browser', kind: 'tool', domain: 'browser.vendor' });
        await setup.registerPrincipal({ tenant, id: 'crm', kind: 'tool', domain: 'crm.example' });
        if (via === 'http') for (const p of ['alice', 'browser', 'crm']) tokens.set(`${tenant}/${p}`, (await ts.issue({ tenant, principal: p })).token);
      }
    } finally {
      await setup.close();
    }
    let results: WorkerResult[];
    if (via === 'http') {
      const policyFile = path.join(dir, 'policy.json');
      fs.writeFileSync(policyFile, JSON.stringify(TEST_POLICY));
      const started = await Promise.all(Array.from({ length: o.processes }, () => startServe(dbUrl, policyFile)));
      for (const s of started) servers.push(s.child);
      results = await Promise.all(started.map((s, worker) => httpClient(s.base, worker, o.count, tenants, inflight, tokens)));
    } else {
      results = await Promise.all(Array.from({ length: o.processes }, (_, worker) => runWorker({ url: dbUrl, worker, count: o.count, tenants, inflight })));
    }
    await Promise.all(
      servers.map(
        (c) =>
          new Promise<void>((resolve) => {
            c.removeAllListeners('exit');
            c.once('exit', () => resolve());
            c.kill('SIGTERM');
          }),
      ),
    );
    servers.length = 0;
    const seconds = Math.max(...results.map((r) => r.ms)) / 1000;
    const writes = results.flatMap((r) => r.writes);
    const decisions = results.flatMap((r) => r.decisions);
    const errors = results.flatMap((r) => r.errors.map((e) => `process ${r.worker}: ${e}`));
    const outcomes: Record<string, number> = {};
    for (const d of decisions) outcomes[d.outcome] = (outcomes[d.outcome] ?? 0) + 1;

    const driver = await PostgresDriver.connect(dbUrl, { migrate: false, create: false });
    const mem = await openMemory({ driver, policy: TEST_POLICY, checkpointKey: false });
    try {
      const client = await driver.unsafeClient();
      let missingWrites = 0;
      let missingDecisions = 0;
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
      return {
        via,
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
        // the tenants' chains, and the reserved chain of admin tokens (each server may create one)
        chainsOk: report.ok && tenants.every((t) => report.tenants.some((r) => r.tenant === t)),
        chainEntries: report.tenants.filter((t) => tenants.includes(t.tenant)).reduce((n, t) => n + t.chain.entries, 0),
        tokenEntries: via === 'http' ? tenants.length * 3 : 0,
        chainMessages: report.tenants.filter((t) => !t.ok).map((t) => t.message),
        replayed: sample.length,
        replayMismatches,
        outcomes,
      };
    } finally {
      await mem.close();
    }
  } finally {
    for (const c of servers) c.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
    await withPgClient(o.url, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  }
}
