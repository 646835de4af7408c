/**
 * `npm run perf:pg` — PostgreSQL throughput (prints, asserts nothing on time): in one run, on one
 * cluster, the database's own rate (single-row INSERT transactions through `pg`, 64 in flight)
 * and memauth's writes and decisions at 64 in flight, for 1 tenant and for 16, through the
 * library (`openMemory({ driver: PostgresDriver })`) and over HTTP (`startServer` in process on a
 * random port, real HTTP requests). Each row: rows/s and the ratio to the baseline. While each
 * phase runs, `pg_stat_activity` is sampled every 10 ms and the share of memauth's backends per
 * wait event is printed (the wait breakdown).
 *
 * The server: MEMAUTH_TEST_PG_URL (each run uses a fresh schema), else a throwaway cluster started
 * like the tests' (test/support/postgres.ts) but durable (fsync and synchronous_commit on).
 *
 * Usage: node dist/perf/pg-throughput.js [--seconds S] [--inflight N] [--json]
 * May import: pg, src/api, src/server, src/store/postgres, test/support/postgres, ./stats.
 */
import http from 'node:http';
import { parseArgs } from 'node:util';
import { cpus, loadavg } from 'node:os';
import pg from 'pg';
import { openMemory } from '../src/api/open.js';
import type { Memory } from '../src/api/memory.js';
import { startServer } from '../src/server/http.js';
import { TokenService } from '../src/server/tokens.js';
import { PostgresDriver } from '../src/store/postgres/driver.js';
import { startCluster } from '../test/support/postgres.js';
import { fmtRatio } from './stats.js';

interface Opts {
  readonly seconds: number;
  readonly inflight: number;
  readonly json: boolean;
}

interface Row {
  readonly metric: string;
  readonly perSecond: number;
  readonly ratio: number | null;
  readonly waits: string;
}

/** Run `op(i)` from `inflight` loops for `seconds`; completed operations per second. */
async function drive(opts: Opts, op: (i: number) => Promise<unknown>): Promise<number> {
  let done = 0;
  let next = 0;
  const t0 = performance.now();
  const until = t0 + opts.seconds * 1000;
  await Promise.all(
    Array.from({ length: opts.inflight }, async () => {
      while (performance.now() < until) {
        await op(next++);
        done++;
      }
    }),
  );
  return done / ((performance.now() - t0) / 1000);
}

/** Sample memauth's (and the baseline's) backends in pg_stat_activity until stopped; the top waits as "event share%". */
function sampleWaits(url: string, appName: string): { stop: () => Promise<string> } {
  const counts = new Map<string, number>();
  let total = 0;
  let running = true;
  const client = new pg.Client({ connectionString: url });
  const loop = (async () => {
    await client.connect();
    while (running) {
      const r = await client.query(
        `SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') AS w FROM pg_stat_activity WHERE application_name = $1 AND state <> 'idle' AND pid <> pg_backend_pid()`,
        [appName],
      );
      for (const row of r.rows as Array<{ w: string }>) {
        counts.set(row.w, (counts.get(row.w) ?? 0) + 1);
        total++;
      }
      await new Promise((res) => setTimeout(res, 10));
    }
    await client.end();
  })();
  return {
    async stop() {
      running = false;
      await loop;
      if (total === 0) return '(no busy backend sampled)';
      return [...counts.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 4)
        .map(([w, n]) => `${w} ${Math.round((100 * n) / total)}%`)
        .join(', ');
    },
  };
}

/** The database's own rate: one-row INSERT transactions (autocommit) from `inflight` pooled connections. */
async function rawInserts(url: string, opts: Opts): Promise<number> {
  const pool = new pg.Pool({ connectionString: url, max: opts.inflight, application_name: 'perf_raw' });
  await pool.query('CREATE TABLE IF NOT EXISTS perf_raw (id bigserial PRIMARY KEY, tenant text NOT NULL, content text NOT NULL, at timestamptz NOT NULL DEFAULT now())');
  try {
    return await drive(opts, (i) => pool.query({ name: 'perf_raw_insert', text: 'INSERT INTO perf_raw (tenant, content) VALUES ($1, $2)', values: ['t', `raw note ${i}`] }));
  } finally {
    await pool.end();
  }
}

const tenantsOf = (n: number): string[] => Array.from({ length: n }, (_, k) => `perf${k}`);

/** Register the principals of each tenant and two trusted records per tenant the decisions depend on. */
async function seed(mem: Memory, tenants: readonly string[]): Promise<Map<string, string[]>> {
  const deps = new Map<string, string[]>();
  for (const tenant of tenants) {
    await mem.registerPrincipal({ tenant, id: 'alice', kind: 'user', domain: 'acme-staff' });
    await mem.registerPrincipal({ tenant, id: 'assistant', kind: 'agent', domain: 'agent-runtime' });
    const a = await mem.write({ tenant, scope: 'vendors', principal: 'alice', content: 'vendor-1 IBAN DE00 1234' });
    const b = await mem.write({ tenant, scope: 'vendors', principal: 'alice', content: 'invoice 42 is due: 100 EUR' });
    deps.set(tenant, [a.record.id, b.record.id]);
  }
  return deps;
}

/** One measured phase with its wait breakdown. */
async function phase(url: string, rows: Row[], base: number | null, metric: string, run: () => Promise<number>): Promise<number> {
  const waits = sampleWaits(url, 'memauth');
  const perSecond = await run();
  rows.push({ metric, perSecond, ratio: base === null ? null : perSecond / base, waits: await waits.stop() });
  process.stderr.write(`  ${metric}: ${perSecond.toFixed(0)}/s\n`);
  return perSecond;
}

/** Library and HTTP writes and decisions for `n` tenants, in a fresh schema. */
async function memauthPhases(url: string, opts: Opts, n: number, base: number, rows: Row[]): Promise<void> {
  const driver = await PostgresDriver.connect(url, { schema: `perf_${n}_${process.pid}` });
  const mem = await openMemory({ driver });
  const tenants = tenantsOf(n);
  const deps = await seed(mem, tenants);
  const t = (i: number): string => tenants[i % n] as string;
  const act = (i: number) => ({ type: 'pay', args: { to: 'vendor-1', amount: 100 + (i % 7) } });
  const label = `${n} tenant${n === 1 ? '' : 's'}`;
  await phase(url, rows, base, `library writes, ${label}`, () => drive(opts, (i) => mem.write({ tenant: t(i), scope: 'notes', principal: 'assistant', content: `note ${i}` })));
  await phase(url, rows, base, `library decisions, ${label}`, () => drive(opts, (i) => mem.authorize({ tenant: t(i), action: act(i), dependsOn: deps.get(t(i)) as string[], context: 'declared' })));
  const srv = await startServer({ memory: mem, config: { port: 0, host: '127.0.0.1' }, ensureAdminToken: false, logStream: { write: () => true } as unknown as NodeJS.WritableStream });
  try {
    const tokens = new TokenService(mem.driver);
    const bearer = new Map<string, string>();
    for (const tenant of tenants) bearer.set(tenant, (await tokens.issue({ tenant, principal: 'assistant' })).token);
    // node:http with keep-alive, not fetch: the load generator shares the CPUs with the server
    const agent = new http.Agent({ keepAlive: true, maxSockets: opts.inflight });
    const post = (i: number, path: string, body: unknown): Promise<void> =>
      new Promise((resolve, reject) => {
        const data = JSON.stringify(body);
        const req = http.request(
          `${srv.url}${path}`,
          { method: 'POST', agent, headers: { authorization: `Bearer ${bearer.get(t(i))}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => ((res.statusCode ?? 0) >= 300 ? reject(new Error(`${path}: HTTP ${res.statusCode} ${Buffer.concat(chunks).toString()}`)) : resolve()));
          },
        );
        req.on('error', reject);
        req.end(data);
      });
    await phase(url, rows, base, `HTTP writes, ${label}`, () => drive(opts, (i) => post(i, '/v1/memories', { scope: 'notes', content: `http note ${i}` })));
    await phase(url, rows, base, `HTTP decisions, ${label}`, () => drive(opts, (i) => post(i, '/v1/decisions', { action: act(i), dependsOn: deps.get(t(i)) as string[], context: 'declared' })));
    agent.destroy();
  } finally {
    await srv.close();
    await mem.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seconds: { type: 'string', default: '8' }, inflight: { type: 'string', default: '64' }, json: { type: 'boolean', default: false } } });
  const opts: Opts = { seconds: Number(values.seconds), inflight: Number(values.inflight), json: values.json === true };
  let url = process.env.MEMAUTH_TEST_PG_URL ?? '';
  let stop = (): void => undefined;
  if (url === '') {
    const server = await startCluster({ durable: true });
    if ('unavailable' in server) throw new Error(`no PostgreSQL: ${server.unavailable} (or set MEMAUTH_TEST_PG_URL)`);
    url = server.url;
    stop = server.stop;
  }
  try {
    const rows: Row[] = [];
    const rawWaits = sampleWaits(url, 'perf_raw');
    const base = await rawInserts(url, opts);
    rows.push({ metric: `raw INSERT transactions (pg, ${opts.inflight} in flight)`, perSecond: base, ratio: 1, waits: await rawWaits.stop() });
    for (const n of [1, 16]) await memauthPhases(url, opts, n, base, rows);
    print(rows, opts);
  } finally {
    stop();
  }
}

function print(rows: readonly Row[], opts: Opts): void {
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return;
  }
  const out = [
    `PostgreSQL throughput, ${opts.inflight} in flight, ${opts.seconds} s per row; ${cpus().length} × ${cpus()[0]?.model ?? '?'}, load ${loadavg()[0]?.toFixed(2)}`,
    '',
    '| workload | rows/s | ratio to raw INSERT | waits of busy backends (pg_stat_activity) |',
    '|---|---:|---:|---|',
    ...rows.map((r) => `| ${r.metric} | ${r.perSecond.toFixed(0)} | ${fmtRatio(r.ratio)} | ${r.waits} |`),
  ];
  process.stdout.write(`${out.join('\n')}\n`);
}

await main();
