/**
 * Benchmark (prints, asserts nothing on time): memauth's MCP server against the MCP reference
 * memory server (`@modelcontextprotocol/server-memory`, a dev dependency), both spawned over stdio
 * and driven by the same client code in one run, on the same corpus:
 *
 * - bulk load: N records, `inFlight` tool calls outstanding, a new connection every
 *   `perConnection` records (memauth: one `remember` per record, each connection its own session;
 *   server-memory: `create_entities` with one entity per call, and again with `batch` per call);
 * - single write at N records: `remember` vs `add_observations`, one after another;
 * - recall at N records: a query with 10 hits, `recall` (limit 10) vs `search_nodes`.
 *
 * Each line prints memauth, the reference server and the ratio (reference ÷ memauth: > 1 means
 * memauth is faster). Run: `node dist/perf/mcp-compare.js [--records 5000] [--per-connection 500]
 * [--in-flight 16] [--batch 100] [--queries 30] [--skip-single-load] [--memauth-db FILE] [--cpu-prof-dir DIR]`
 * (`--skip-single-load`: no one-entity-per-call load of the reference, which rewrites its whole
 * file per call; `--memauth-db`: memauth's store, loaded and kept when missing, reused without a
 * load when present — to compare two builds on one store; `--cpu-prof-dir`: each memauth server process writes a V8
 * CPU profile there). Imports the facade (to set up the store and a
 * token), the token service and the SDK client; both servers run as child processes.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { openMemory } from '../src/api/open.js';
import { createProgress } from '../src/cli/progress.js';
import { TokenService } from '../src/server/tokens.js';
import { fmtBytes, fmtNs, fmtRatio, nowNs, summarize } from './stats.js';

const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const REFERENCE = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-memory/dist/index.js');
/** records whose text carries the recall tag: a query for it has this many hits. */
const HITS = 10;

interface Options {
  records: number;
  perConnection: number;
  inFlight: number;
  batch: number;
  queries: number;
  /** skip the reference's one-entity-per-call load (it rewrites its whole file per call: O(N²)) and its line. */
  skipSingleLoad: boolean;
  /** memauth's database: reused when it exists (no memauth load), else loaded and kept. */
  memauthDb: string | undefined;
  /** where each memauth server process writes a V8 CPU profile (`--cpu-prof-dir`), if anywhere. */
  cpuProfDir: string | undefined;
}

/** One of the two servers, as the harness drives it. */
interface Target {
  readonly name: string;
  connect(): Promise<Client>;
  /** the tool call that stores record `k` (or records `ks` in one call). */
  write(c: Client, ks: number[]): Promise<unknown>;
  /** one more fact about an existing record (the "single write" measurement). */
  writeOne(c: Client, k: number): Promise<unknown>;
  recall(c: Client, tag: string): Promise<number>;
  bytes(): number;
}

/** The text of record `k`; every record whose k % (N / HITS) is 0 carries the tag of its group. */
function text(k: number, n: number): string {
  const tag = k % Math.max(1, Math.floor(n / HITS)) === 0 ? ' rqtag' : '';
  return `Vendor V${k} invoice note: account ACCT-${(k * 7919) % 100000} due on day ${k % 28}${tag}`;
}

function spawnClient(command: string, args: string[], env: Record<string, string>): Promise<Client> {
  const transport = new StdioClientTransport({ command, args, env: { ...(process.env as Record<string, string>), ...env }, stderr: 'pipe' });
  const client = new Client({ name: 'memauth-perf', version: '1.0.0' });
  return client.connect(transport).then(() => client);
}

async function memauthTarget(db: string, n: number, cpuProfDir?: string): Promise<Target> {
  const mem = await openMemory({ path: db });
  await mem.registerPrincipal({ tenant: 'perf', id: 'agent', kind: 'agent', domain: 'agent' });
  const { token } = await new TokenService(mem.driver).issue({ tenant: 'perf', principal: 'agent' });
  await mem.close();
  const call = (c: Client, name: string, args: Record<string, unknown>) => c.callTool({ name, arguments: args });
  return {
    name: 'memauth mcp',
    connect: () => spawnClient(process.execPath, [...(cpuProfDir !== undefined ? ['--cpu-prof', '--cpu-prof-dir', cpuProfDir] : []), CLI, '--db', db, 'mcp'], { MEMAUTH_TOKEN: token }),
    write: (c, ks) => Promise.all(ks.map((k) => call(c, 'remember', { scope: 'notes', content: text(k, n) }))),
    writeOne: (c, k) => call(c, 'remember', { scope: 'notes', content: `follow-up on V${k}: paid` }),
    recall: async (c, tag) => {
      const r = (await call(c, 'recall', { scope: 'notes', query: tag, limit: HITS })) as { structuredContent?: { hits?: unknown[] } };
      return r.structuredContent?.hits?.length ?? -1;
    },
    bytes: () => ['', '-wal'].reduce((s, x) => s + sizeOf(db + x), 0),
  };
}

function referenceTarget(dir: string, n: number): Target {
  const file = join(dir, 'memory.jsonl');
  const entity = (k: number) => ({ name: `V${k}`, entityType: 'vendor', observations: [text(k, n)] });
  return {
    name: 'server-memory',
    connect: () => spawnClient(process.execPath, [REFERENCE], { MEMORY_FILE_PATH: file }),
    write: (c, ks) => c.callTool({ name: 'create_entities', arguments: { entities: ks.map(entity) } }),
    writeOne: (c, k) => c.callTool({ name: 'add_observations', arguments: { observations: [{ entityName: `V${k}`, contents: [`follow-up on V${k}: paid`] }] } }),
    recall: async (c, tag) => {
      const r = (await c.callTool({ name: 'search_nodes', arguments: { query: tag } })) as { structuredContent?: { entities?: unknown[] } };
      return r.structuredContent?.entities?.length ?? -1;
    },
    bytes: () => sizeOf(file),
  };
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** Load N records, `perCall` per tool call, `o.inFlight` calls outstanding; ns per record. */
async function bulkLoad(t: Target, o: Options, perCall: number): Promise<number> {
  const progress = createProgress(process.stderr, `${t.name} load ×${perCall}`);
  const t0 = nowNs();
  for (let start = 0; start < o.records; start += o.perConnection) {
    const c = await t.connect();
    const end = Math.min(o.records, start + o.perConnection);
    let next = start;
    const worker = async (): Promise<void> => {
      while (next < end) {
        const ks = Array.from({ length: Math.min(perCall, end - next) }, (_, i) => next + i);
        next += ks.length;
        await t.write(c, ks);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.floor(o.inFlight / perCall)) || 1 }, worker));
    await c.close();
    progress.update(end, o.records, `${end}/${o.records}`);
  }
  progress.finish();
  return Number(nowNs() - t0) / o.records;
}

async function latencies(fn: (k: number) => Promise<unknown>, count: number): Promise<number[]> {
  const out: number[] = [];
  for (let k = 0; k < count; k++) {
    const t0 = nowNs();
    await fn(k);
    out.push(Number(nowNs() - t0));
  }
  return out;
}

function line(label: string, ours: number, theirs: number, unit = 'ns'): void {
  const f = unit === 'ns' ? fmtNs : fmtBytes;
  process.stdout.write(`${label.padEnd(40)} ${f(ours).padStart(10)} ${f(theirs).padStart(12)} ${fmtRatio(theirs / ours).padStart(8)}\n`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      records: { type: 'string' },
      'per-connection': { type: 'string' },
      'in-flight': { type: 'string' },
      batch: { type: 'string' },
      queries: { type: 'string' },
      'skip-single-load': { type: 'boolean' },
      'memauth-db': { type: 'string' },
      'cpu-prof-dir': { type: 'string' },
    },
  });
  const o: Options = {
    records: Number(values.records ?? 5000),
    perConnection: Number(values['per-connection'] ?? 500),
    inFlight: Number(values['in-flight'] ?? 16),
    batch: Number(values.batch ?? 100),
    queries: Number(values.queries ?? 30),
    skipSingleLoad: values['skip-single-load'] === true,
    memauthDb: values['memauth-db'],
    cpuProfDir: values['cpu-prof-dir'],
  };
  const dir = mkdtempSync(join(tmpdir(), 'memauth-mcp-compare-'));
  try {
    const reuse = o.memauthDb !== undefined && existsSync(o.memauthDb);
    const ours = await memauthTarget(o.memauthDb ?? join(dir, 'memauth.db'), o.records, o.cpuProfDir);
    const theirs1 = referenceTarget(mkdtempSync(join(dir, 'ref1-')), o.records);
    const theirsB = referenceTarget(mkdtempSync(join(dir, 'refb-')), o.records);
    const load = reuse ? Number.NaN : await bulkLoad(ours, o, 1);
    const load1 = o.skipSingleLoad ? Number.NaN : await bulkLoad(theirs1, o, 1);
    const loadB = await bulkLoad(theirsB, o, o.batch);
    const [a, b] = [await ours.connect(), await theirsB.connect()];
    const single = { ours: summarize(await latencies((k) => ours.writeOne(a, k), o.queries)), theirs: summarize(await latencies((k) => theirsB.writeOne(b, k), o.queries)) };
    const hits = `${await ours.recall(a, 'rqtag')}/${await theirsB.recall(b, 'rqtag')}`;
    const recall = { ours: summarize(await latencies(() => ours.recall(a, 'rqtag'), o.queries)), theirs: summarize(await latencies(() => theirsB.recall(b, 'rqtag'), o.queries)) };
    await Promise.all([a.close(), b.close()]);
    process.stdout.write(`\nMCP over stdio, ${o.records} records, ${o.perConnection} per connection, ${o.inFlight} calls in flight; ${cpus().length} CPUs, load ${loadavg()[0]?.toFixed(2) ?? '?'}\n`);
    process.stdout.write(`${''.padEnd(40)} ${'memauth'.padStart(10)} ${'server-memory'.padStart(12)} ${'ratio'.padStart(8)}\n`);
    if (!o.skipSingleLoad && !reuse) line('bulk load, per record (1 per call)', load, load1);
    if (!reuse) line(`bulk load, per record (ref: ${o.batch} per call)`, load, loadB);
    line('single write p50 (remember / add_obs.)', single.ours.p50, single.theirs.p50);
    line(`recall p50, ${hits} hits (recall / search)`, recall.ours.p50, recall.theirs.p50);
    line('recall p99', recall.ours.p99, recall.theirs.p99);
    line('bytes on disk', ours.bytes(), theirsB.bytes(), 'bytes');
    process.stdout.write('ratio = server-memory ÷ memauth (> 1: memauth faster or smaller)\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
