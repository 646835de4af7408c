/**
 * `npm run perf` — memauth against an ungated baseline (the same SQLite driver, schema, pragmas
 * and FTS5 index with authority, taint and audit switched off; see `baseline.ts`), on the same
 * workloads, in one process, alternating between the two in rounds after a warm-up.
 *
 * Prints a Markdown table (figures and memauth/baseline cost ratios) and the goals met or
 * missed; `--json` prints the same as JSON. A benchmark, not a test: nothing here asserts a time.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Memory, type OpTiming } from '../src/api/memory.js';
import { createProgress, type Progress } from '../src/cli/progress.js';
import { TRUSTED_THRESHOLD } from '../src/core/authority.js';
import { type DependencyFacts, decide } from '../src/core/gate.js';
import { DEFAULT_POLICY, type Policy, type PolicyInput, loadPolicy } from '../src/core/policy.js';
import { SqliteDriver } from '../src/store/sqlite/driver.js';
import { BaselineStore } from './baseline.js';
import { Corpus } from './corpus.js';
import { machine } from './machine.js';
import { Profiler, selfTimes } from './profile.js';
import { type Summary, fmtBytes, fmtNs, fmtRate, fmtRatio, nowNs, summarize } from './stats.js';

const SECTIONS = ['gate', 'write', 'depth', 'search'] as const;
type Section = (typeof SECTIONS)[number];

interface Options {
  readonly quick: boolean;
  readonly full: boolean;
  readonly json: boolean;
  readonly out: string | null;
  readonly sizes: readonly number[];
  readonly depth: number;
  readonly concurrency: number;
  readonly only: ReadonlySet<Section>;
  readonly dir: string | null;
  readonly keep: boolean;
  readonly cpuProf: string | null;
  readonly scale: number;
}

/** One figure of the report. `ratio` is a cost ratio: memauth time (or size) / baseline time (or size). */
interface Row {
  readonly section: string;
  readonly metric: string;
  readonly unit: 'ns' | 'ops/s' | 'bytes' | 'entries/s';
  readonly memauth: number | null;
  readonly baseline: number | null;
  readonly ratio: number | null;
  readonly note?: string;
}

interface Goal {
  readonly goal: string;
  readonly measured: string;
  readonly met: boolean | null;
}

const TENANT = 'perf';
const rows: Row[] = [];
const goals: Goal[] = [];
const extra: Record<string, unknown> = {};

function parseOptions(argv: readonly string[]): Options {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: 'boolean', default: false },
      full: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      out: { type: 'string' },
      sizes: { type: 'string' },
      depth: { type: 'string' },
      concurrency: { type: 'string' },
      only: { type: 'string' },
      dir: { type: 'string' },
      keep: { type: 'boolean', default: false },
      'cpu-prof': { type: 'boolean', default: false },
      'cpu-prof-file': { type: 'string' },
      scale: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`npm run perf -- [options]
  --quick              small sizes and few samples (a smoke run, ~1 min)
  --full               add the 1,000,000-record search case (minutes)
  --sizes a,b,c        search sizes (default 10000,100000; --quick 10000; --full adds 1000000)
  --depth N            derivation chain depth (default 10000; --quick 1000)
  --concurrency N      callers in flight for group commit runs (default 64)
  --only a,b           sections: ${SECTIONS.join(', ')}
  --scale X            multiply sample counts by X
  --json               print JSON instead of the table
  --out FILE           also write the JSON report to FILE
  --dir DIR            where the SQLite files go (default: a temp folder, removed unless --keep)
  --cpu-prof           write a V8 CPU profile (--cpu-prof-file FILE, default memauth-perf.cpuprofile) and print top self time
`);
    process.exit(0);
  }
  const quick = values.quick === true;
  const full = values.full === true;
  const sizes = values.sizes !== undefined ? values.sizes.split(',').map((x) => Number(x.replace(/_/g, ''))) : quick ? [10_000] : full ? [10_000, 100_000, 1_000_000] : [10_000, 100_000];
  if (sizes.some((n) => !Number.isInteger(n) || n < 100)) throw new Error('--sizes: integers >= 100');
  const only = new Set<Section>();
  for (const s of (values.only ?? SECTIONS.join(',')).split(',')) {
    if (!(SECTIONS as readonly string[]).includes(s)) throw new Error(`--only: unknown section ${s} (${SECTIONS.join(', ')})`);
    only.add(s as Section);
  }
  return {
    quick,
    full,
    json: values.json === true,
    out: values.out ?? null,
    sizes: [...new Set(sizes)].sort((a, b) => a - b),
    depth: values.depth !== undefined ? Number(values.depth) : quick ? 1_000 : 10_000,
    concurrency: values.concurrency !== undefined ? Number(values.concurrency) : 64,
    only,
    dir: values.dir ?? null,
    keep: values.keep === true,
    cpuProf: values['cpu-prof'] === true ? (values['cpu-prof-file'] ?? 'memauth-perf.cpuprofile') : null,
    scale: values.scale !== undefined ? Number(values.scale) : 1,
  };
}

/** memauth's default policy plus one verified upstream (`erp://…`) whose data tools may vouch for. */
function perfPolicy(): Policy {
  const base = DEFAULT_POLICY as PolicyInput & { sources: unknown[] };
  return loadPolicy({ ...base, name: 'memauth-perf', sources: [{ match: 'erp://*', authority: 'trusted_tool_verified' }, ...base.sources] });
}

const POLICY = perfPolicy();

/** How a store commits: one COMMIT per operation, or group commit (`back` = a window for back-to-back runs). */
type CommitMode = 'durable' | 'group' | 'back';

function groupOpts(mode: CommitMode): false | { maxOps: number; maxDelayMs: number } {
  if (mode === 'durable') return false;
  // back-to-back runs: wait up to 5 ms for the next operation so the thread does not block on a COMMIT between two of them
  return mode === 'back' ? { maxOps: 512, maxDelayMs: 5 } : { maxOps: 512, maxDelayMs: 0 };
}

/** A memauth store on `path`; `sink` receives its timings. */
function openMemauth(path: string, mode: CommitMode, sink?: TimingSink): Memory {
  const driver = SqliteDriver.open({ path, groupCommit: groupOpts(mode) });
  return new Memory({ driver, policy: POLICY, checkpointKey: null, ...(sink ? { onTiming: sink.hook } : {}) });
}

function openBaseline(path: string, mode: CommitMode, sink?: TimingSink): BaselineStore {
  return BaselineStore.open({ path, groupCommit: groupOpts(mode) }, sink?.hook);
}

/** Timings of one operation, by phase. */
type Phases = Partial<Record<OpTiming['phase'], OpTiming>>;

/**
 * Collects timing reports and runs operations back to back: each starts as soon as the previous
 * one has written its rows (not committed) and finished its transaction body, on a group-commit store. The thread then never waits
 * for a COMMIT between two operations and no two operations' work interleaves, so the spans are
 * the operations' own cost — not the scheduler's delay after an fsync, nor other callers' work.
 */
class TimingSink {
  private current: Phases | null = null;
  private wake: (() => void) | null = null;
  readonly done: OpTiming[] = [];
  readonly hook = (t: OpTiming): void => {
    if (t.phase === 'done') {
      this.done.push(t);
      return;
    }
    if (this.current) this.current[t.phase] = t;
    if (t.phase === 'written' && this.wake) {
      const w = this.wake;
      this.wake = null;
      w();
    }
  };

  async backToBack(n: number, op: (i: number) => Promise<unknown>): Promise<Phases[]> {
    const out: Phases[] = [];
    const inFlight: Array<Promise<unknown>> = [];
    for (let i = 0; i < n; i++) {
      const phases: Phases = {};
      this.current = phases;
      const written = new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      const p = op(i);
      inFlight.push(p);
      await Promise.race([
        written,
        p.then(() => {
          if (!phases.written) throw new Error('an operation finished without reporting its timing');
        }),
      ]);
      // let the previous operation's tail (its SAVEPOINT release, cache merge) finish first
      await new Promise((resolve) => setImmediate(resolve));
      out.push(phases);
    }
    this.current = null;
    await Promise.all(inFlight);
    return out;
  }
}

const span = (p: Phases, phase: 'decided' | 'written'): number => {
  const t = p[phase];
  return t ? t.beforeNs + t.bodyNs : Number.NaN;
};

async function registerPrincipals(mem: Memory): Promise<void> {
  await mem.registerPrincipal({ tenant: TENANT, id: 'alice', kind: 'user', domain: 'acme-staff' });
  await mem.registerPrincipal({ tenant: TENANT, id: 'assistant', kind: 'agent', domain: 'agent-runtime' });
  await mem.registerPrincipal({ tenant: TENANT, id: 'erp1', kind: 'tool', domain: 'erp-a' });
  await mem.registerPrincipal({ tenant: TENANT, id: 'erp2', kind: 'tool', domain: 'erp-b' });
}

function gc(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g) {
    g();
    g();
  }
}

function dbBytes(path: string, driver: SqliteDriver): number {
  driver.unsafeDatabase().pragma('wal_checkpoint(TRUNCATE)');
  const size = (p: string): number => (existsSync(p) ? statSync(p).size : 0);
  return size(path) + size(`${path}-wal`);
}

/** Run `total` operations with `concurrency` callers in flight; per-op latency and wall time. */
async function concurrently(total: number, concurrency: number, op: (i: number) => Promise<unknown>): Promise<{ wallNs: number; lat: number[] }> {
  let next = 0;
  const lat: number[] = [];
  const t0 = nowNs();
  const worker = async (): Promise<void> => {
    for (;;) {
      const i = next++;
      if (i >= total) return;
      const s = nowNs();
      await op(i);
      lat.push(Number(nowNs() - s));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, worker));
  return { wallNs: Number(nowNs() - t0), lat };
}

/** Sequential operations; per-op latency and wall time. */
async function sequentially(total: number, op: (i: number) => Promise<unknown>): Promise<{ wallNs: number; lat: number[] }> {
  return concurrently(total, 1, op);
}

function ratio(m: number | null, b: number | null): number | null {
  return m === null || b === null || b === 0 ? null : m / b;
}

function latencyRows(section: string, label: string, m: Summary | null, b: Summary | null, note?: string): void {
  rows.push({ section, metric: `${label} p50`, unit: 'ns', memauth: m?.p50 ?? null, baseline: b?.p50 ?? null, ratio: ratio(m?.p50 ?? null, b?.p50 ?? null), ...(note ? { note } : {}) });
  rows.push({ section, metric: `${label} p99`, unit: 'ns', memauth: m?.p99 ?? null, baseline: b?.p99 ?? null, ratio: ratio(m?.p99 ?? null, b?.p99 ?? null) });
}

function rateRow(section: string, label: string, m: number | null, b: number | null, note?: string): void {
  // cost ratio: time per op of memauth over time per op of the baseline
  rows.push({ section, metric: label, unit: 'ops/s', memauth: m, baseline: b, ratio: m !== null && b !== null && m > 0 ? b / m : null, ...(note ? { note } : {}) });
}

/** Alternate memauth and baseline in `rounds` rounds of `perRound` operations each, after a warm-up. */
async function alternate(
  rounds: number,
  perRound: number,
  warmup: number,
  run: (who: 'memauth' | 'baseline', n: number, offset: number) => Promise<{ wallNs: number; lat: number[] }>,
): Promise<{ memauth: { wallNs: number; lat: number[] }; baseline: { wallNs: number; lat: number[] } }> {
  await run('memauth', warmup, 0);
  await run('baseline', warmup, 0);
  const acc = { memauth: { wallNs: 0, lat: [] as number[] }, baseline: { wallNs: 0, lat: [] as number[] } };
  for (let r = 0; r < rounds; r++) {
    const order: Array<'memauth' | 'baseline'> = r % 2 === 0 ? ['memauth', 'baseline'] : ['baseline', 'memauth'];
    for (const who of order) {
      const res = await run(who, perRound, warmup + r * perRound);
      acc[who].wallNs += res.wallNs;
      for (const x of res.lat) acc[who].lat.push(x);
    }
  }
  return acc;
}

// ---------------------------------------------------------------------------- gate

interface GateTask {
  readonly deps: string[];
  readonly baseDeps: string[];
  readonly args: { to: string; amount: number };
}

interface PoolFact {
  readonly id: string;
  readonly bid: string;
  readonly vendor: string;
  readonly amount: number;
}

/**
 * The dependency pool of the gate workload: `n` user facts (trusted by origin) and `n` agent
 * notes derived from them (model_inferred), each lifted by two independent trusted corroborations.
 */
async function buildGatePool(memPath: string, basePath: string, corpus: Corpus, n: number, progress: Progress): Promise<{ facts: PoolFact[]; notes: Array<{ id: string; bid: string }> }> {
  const mem = openMemauth(memPath, 'group');
  const base = openBaseline(basePath, 'group');
  await registerPrincipals(mem);
  const facts: PoolFact[] = [];
  await concurrently(n, 32, async (i) => {
    const vendor = `vendor-${1000 + i}`;
    const amount = 100 + i * 7;
    const content = `${corpus.record(i)} pay ${vendor} amount ${amount}`;
    const { record } = await mem.write({ tenant: TENANT, scope: 'vendors', principal: 'alice', content });
    const b = await base.write({ tenant: TENANT, scope: 'vendors', principal: 'alice', content });
    facts[i] = { id: record.id, bid: b.id, vendor, amount };
    progress.update(i + 1, n * 2, 'gate: writing the dependency pool');
  });
  const notes: Array<{ id: string; bid: string }> = [];
  await concurrently(n, 32, async (i) => {
    const f = facts[i] as PoolFact;
    const content = `Summary: settle ${f.vendor} amount ${f.amount} per the user's note`;
    const note = await mem.derive({ tenant: TENANT, principal: 'assistant', from: [f.id], transform: 'summarize', content });
    await mem.corroborate({ tenant: TENANT, recordId: note.id, principal: 'erp1', evidence: `erp://ledger/${f.vendor}` });
    await mem.corroborate({ tenant: TENANT, recordId: note.id, principal: 'erp2', evidence: `erp://bank/${f.vendor}` });
    const b = await base.derive({ tenant: TENANT, scope: 'vendors', principal: 'assistant', from: [f.bid], content });
    notes[i] = { id: note.id, bid: b.id };
    progress.update(n + i + 1, n * 2, 'gate: deriving and corroborating notes');
  });
  await mem.close();
  await base.close();
  extra.gatePool = { facts: n, notes: n, corroborationsPerNote: 2 };
  return { facts, notes };
}

/** Sample counts: `full` by default, `quick` with --quick, times --scale. */
function samples(opts: Options, full: number, quick: number): number {
  return Math.max(10, Math.round((opts.quick ? quick : full) * opts.scale));
}

/**
 * In-process figures of one operation kind, memauth against the baseline: back-to-back runs
 * (see {@link TimingSink}) alternating in rounds after a warm-up. Returns the per-operation
 * phases of the measured rounds.
 */
async function inProcess(
  opts: Options,
  paths: { mem: string; base: string },
  n: number,
  memOp: (mem: Memory, i: number) => Promise<unknown>,
  baseOp: (base: BaselineStore, i: number) => Promise<unknown>,
): Promise<{ memauth: Phases[]; baseline: Phases[] }> {
  const ms = new TimingSink();
  const bs = new TimingSink();
  const mem = openMemauth(paths.mem, 'back', ms);
  const base = openBaseline(paths.base, 'back', bs);
  const out = { memauth: [] as Phases[], baseline: [] as Phases[] };
  const warm = Math.min(500, n);
  let offset = 0;
  await ms.backToBack(warm, (i) => memOp(mem, offset + i));
  await bs.backToBack(warm, (i) => baseOp(base, offset + i));
  offset += warm;
  const rounds = 4;
  const per = Math.ceil(n / rounds);
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? (['memauth', 'baseline'] as const) : (['baseline', 'memauth'] as const);
    for (const who of order) {
      const got = who === 'memauth' ? await ms.backToBack(per, (i) => memOp(mem, offset + i)) : await bs.backToBack(per, (i) => baseOp(base, offset + i));
      out[who].push(...got);
    }
    offset += per;
  }
  await mem.close();
  await base.close();
  return out;
}

async function gateSection(opts: Options, dir: string, progress: Progress): Promise<void> {
  const corpus = new Corpus({ seed: 7 });
  const paths = { mem: join(dir, 'gate-memauth.db'), base: join(dir, 'gate-baseline.db') };
  const POOL = 200;
  const { facts, notes } = await buildGatePool(paths.mem, paths.base, corpus, POOL, progress);
  // a task depends on ceil(n/2) pool entries: fact, note, fact, note, … (n in all); its
  // arguments (payee, amount) are written in the first fact and its note.
  const makeTasks = (nDeps: number, count: number): GateTask[] => {
    const out: GateTask[] = [];
    for (let t = 0; t < count; t++) {
      const idx = new Set<number>();
      while (idx.size < Math.ceil(nDeps / 2)) idx.add(Math.floor(corpus.random() * POOL));
      const deps: string[] = [];
      const baseDeps: string[] = [];
      for (const i of idx) {
        const f = facts[i] as PoolFact;
        const n = notes[i] as { id: string; bid: string };
        deps.push(f.id, n.id);
        baseDeps.push(f.bid, n.bid);
      }
      const f0 = facts[[...idx][0] as number] as PoolFact;
      out.push({ deps: deps.slice(0, nDeps), baseDeps: baseDeps.slice(0, nDeps), args: { to: f0.vendor, amount: f0.amount } });
    }
    return out;
  };
  const inN = samples(opts, 10_000, 2_000);
  const seqN = samples(opts, 1_000, 200);
  const grpN = samples(opts, 20_000, 4_000);
  const c = opts.concurrency;
  for (const nDeps of [1, 5, 20]) {
    const section = `authorize, ${nDeps} dep${nDeps > 1 ? 's' : ''}`;
    // --- the pure core decision (no storage): the paper's ~1 µs check
    {
      const deps: DependencyFacts[] = Array.from({ length: nDeps }, (_, i) => ({
        memoryId: `mem_${i}`,
        why: ['declared', 'value'],
        lowestAuthority: i % 2 === 0 ? 'user_confirmed' : 'model_inferred',
        actionAuthority: i % 2 === 0 ? 'user_confirmed' : 'trusted_tool_verified',
        status: 'active',
        corroborationAttempted: i % 2 === 1,
        verified: true,
      }));
      const input = {
        action: { type: 'pay', args: { to: 'vendor-1', amount: 100 } },
        argsHash: 'x',
        tier: 'high' as const,
        mode: 'enforce' as const,
        now: new Date().toISOString(),
        dependencies: deps,
        values: [
          { argument: 'to', value: 'vendor-1', recordIds: ['mem_0'], userTurn: false, computed: null },
          { argument: 'amount', value: '100', recordIds: ['mem_0'], userTurn: false, computed: null },
        ],
        confirmations: [],
        citedConfirmationId: null,
        threshold: TRUSTED_THRESHOLD,
      };
      const lat: number[] = [];
      for (let i = 0; i < 2000; i++) decide(input);
      for (let b = 0; b < 300; b++) {
        const t0 = nowNs();
        for (let i = 0; i < 100; i++) decide(input);
        lat.push(Number(nowNs() - t0) / 100);
      }
      rows.push({
        section,
        metric: "core decide() alone, no storage (the paper's check: ~1 µs) p50",
        unit: 'ns',
        memauth: summarize(lat).p50,
        baseline: null,
        ratio: null,
        note: 'mean of 100 calls per sample',
      });
    }
    const tasks = makeTasks(nDeps, inN + grpN + seqN + 2000);
    const act = (i: number): GateTask => tasks[i % tasks.length] as GateTask;
    const authorize = (mem: Memory, i: number): Promise<unknown> => mem.authorize({ tenant: TENANT, action: { type: 'pay', args: act(i).args }, dependsOn: act(i).deps, context: 'declared' });
    const ungated = (base: BaselineStore, i: number): Promise<unknown> => base.act(TENANT, { type: 'pay', args: act(i).args }, act(i).baseDeps);

    // --- in process: decision ready (audit entry queued), then rows written (not committed)
    const ip = await inProcess(opts, paths, inN, authorize, ungated);
    const decided = summarize(ip.memauth.map((p) => span(p, 'decided')));
    latencyRows(
      section,
      'in process: decision ready, audit entry queued',
      decided,
      summarize(ip.baseline.map((p) => span(p, 'decided'))),
      'memauth: validation, dependency facts (cached, verified against the audit log once), corroboration, value provenance, confirmation look-up, the decision and its audit payload — not yet chained, hashed, written or committed; baseline: read the dependency rows and build the action row',
    );
    latencyRows(
      section,
      'in process: + audit entry chained and hashed, rows written (no COMMIT)',
      summarize(ip.memauth.map((p) => span(p, 'written'))),
      summarize(ip.baseline.map((p) => span(p, 'written'))),
    );
    if (nDeps === 5) goals.push({ goal: 'authorize, 5 deps: in-process p50 < 5 µs (audit entry queued)', measured: fmtNs(decided.p50), met: decided.p50 < 5_000 });
    progress.update(1, 3, `${section}: in process done`);

    // --- durable: one WAL commit per decision, one caller
    {
      const mem = openMemauth(paths.mem, 'durable');
      const base = openBaseline(paths.base, 'durable');
      const res = await alternate(4, Math.ceil(seqN / 4), 50, async (who, n, off) =>
        who === 'memauth' ? sequentially(n, (i) => authorize(mem, inN + off + i)) : sequentially(n, (i) => ungated(base, inN + off + i)),
      );
      latencyRows(section, 'durable, one COMMIT per decision: latency', summarize(res.memauth.lat), summarize(res.baseline.lat));
      rateRow(section, 'durable, one COMMIT per decision: decisions/s', (res.memauth.lat.length / res.memauth.wallNs) * 1e9, (res.baseline.lat.length / res.baseline.wallNs) * 1e9);
      await mem.close();
      await base.close();
    }
    progress.update(2, 3, `${section}: durable done`);

    // --- group commit: many callers in flight, one COMMIT per batch
    {
      const mem = openMemauth(paths.mem, 'group');
      const base = openBaseline(paths.base, 'group');
      const off0 = inN + seqN + 200;
      const res = await alternate(4, Math.ceil(grpN / 4), Math.min(2000, grpN), async (who, n, off) =>
        who === 'memauth' ? concurrently(n, c, (i) => authorize(mem, off0 + off + i)) : concurrently(n, c, (i) => ungated(base, off0 + off + i)),
      );
      const mRate = (res.memauth.lat.length / res.memauth.wallNs) * 1e9;
      rateRow(section, `group commit, ${c} callers: durable decisions/s`, mRate, (res.baseline.lat.length / res.baseline.wallNs) * 1e9);
      latencyRows(section, `group commit, ${c} callers: latency (to durable)`, summarize(res.memauth.lat), summarize(res.baseline.lat));
      if (nDeps === 5) goals.push({ goal: 'authorize, 5 deps: > 20,000 durable decisions/s with group commit', measured: fmtRate(mRate), met: mRate > 20_000 });
      await mem.close();
      await base.close();
    }
    progress.update(3, 3, `${section}: group commit done`);
  }
}

// ---------------------------------------------------------------------------- write / derive

async function writeSection(opts: Options, dir: string, progress: Progress): Promise<void> {
  const corpus = new Corpus({ seed: 11 });
  const paths = { mem: join(dir, 'write-memauth.db'), base: join(dir, 'write-baseline.db') };
  const inN = samples(opts, 10_000, 2_000);
  const seqN = samples(opts, 1_000, 200);
  const grpN = samples(opts, 20_000, 4_000);
  const c = opts.concurrency;
  const texts = Array.from({ length: 4096 }, (_, i) => corpus.record(i));
  const text = (i: number): string => `${texts[i % texts.length] as string} #${i}`;
  const memIds: string[] = [];
  const baseIds: string[] = [];
  {
    const mem = openMemauth(paths.mem, 'durable');
    await registerPrincipals(mem);
    await mem.close();
  }
  const memWrite = async (mem: Memory, i: number): Promise<void> => {
    const { record } = await mem.write({ tenant: TENANT, scope: 'notes', principal: 'alice', content: text(i) });
    memIds.push(record.id);
  };
  const baseWrite = async (base: BaselineStore, i: number): Promise<void> => {
    baseIds.push((await base.write({ tenant: TENANT, scope: 'notes', principal: 'alice', content: text(i) })).id);
  };
  const pick = (ids: string[]): string => ids[Math.floor(corpus.random() * ids.length)] as string;
  const memDerive = (mem: Memory, i: number): Promise<unknown> => mem.derive({ tenant: TENANT, principal: 'assistant', from: [pick(memIds)], transform: 'summarize', content: text(i + 7) });
  const baseDerive = (base: BaselineStore, i: number): Promise<unknown> => base.derive({ tenant: TENANT, scope: 'notes', principal: 'assistant', from: [pick(baseIds)], content: text(i + 7) });

  for (const [kind, memOp, baseOp] of [
    ['write', memWrite, baseWrite],
    ['derive', memDerive, baseDerive],
  ] as const) {
    const ip = await inProcess(opts, paths, inN, memOp, baseOp);
    const m = summarize(ip.memauth.map((p) => span(p, 'written')));
    const b = summarize(ip.baseline.map((p) => span(p, 'written')));
    latencyRows(kind, `in process: record, index${kind === 'derive' ? ', taint' : ''} and audit entry written (no COMMIT)`, m, b);
    if (kind === 'write') goals.push({ goal: 'write overhead <= 1.2× baseline (in process, p50)', measured: fmtRatio(m.p50 / b.p50), met: m.p50 / b.p50 <= 1.2 });
    progress.update(1, 3, `${kind}: in process done`);
    for (const mode of ['durable', 'group'] as const) {
      const mem = openMemauth(paths.mem, mode);
      const base = openBaseline(paths.base, mode);
      const n = mode === 'group' ? grpN : seqN;
      const k = mode === 'group' ? c : 1;
      const label = mode === 'group' ? `group commit, ${c} callers` : 'durable, one COMMIT each';
      const res = await alternate(4, Math.ceil(n / 4), Math.min(200, n), async (who, cnt, off) =>
        who === 'memauth' ? concurrently(cnt, k, (i) => memOp(mem, 1_000_000 + off + i)) : concurrently(cnt, k, (i) => baseOp(base, 1_000_000 + off + i)),
      );
      const mr = (res.memauth.lat.length / res.memauth.wallNs) * 1e9;
      const br = (res.baseline.lat.length / res.baseline.wallNs) * 1e9;
      rateRow(kind, `${label}: ${kind}s/s`, mr, br);
      latencyRows(kind, `${label}: latency (to durable)`, summarize(res.memauth.lat), summarize(res.baseline.lat));
      if (kind === 'write') goals.push({ goal: `write overhead <= 1.2× baseline (${label}, throughput)`, measured: fmtRatio(br / mr), met: br / mr <= 1.2 });
      await mem.close();
      await base.close();
      progress.update(mode === 'durable' ? 2 : 3, 3, `${kind}: ${mode} done`);
    }
  }
}

// ---------------------------------------------------------------------------- derivation depth

async function depthSection(opts: Options, dir: string, progress: Progress): Promise<void> {
  const paths = { mem: join(dir, 'depth-memauth.db'), base: join(dir, 'depth-baseline.db') };
  const checkpoints = [1, 10, 100, 1000, 10_000, 100_000].filter((d) => d <= opts.depth);
  const M = samples(opts, 1_000, 200);
  let mem = openMemauth(paths.mem, 'durable');
  let base = openBaseline(paths.base, 'durable');
  await registerPrincipals(mem);
  const root = (await mem.write({ tenant: TENANT, scope: 'chain', principal: 'alice', content: 'pay vendor-7 amount 700: the root fact' })).record;
  const broot = await base.write({ tenant: TENANT, scope: 'chain', principal: 'alice', content: 'pay vendor-7 amount 700: the root fact' });
  let tip = root.id;
  let btip = broot.id;
  let depth = 0;
  const perDepth: Array<Record<string, unknown>> = [];
  let first: number | null = null;
  let last: number | null = null;
  for (const target of checkpoints) {
    while (depth < target) {
      tip = (await mem.derive({ tenant: TENANT, principal: 'assistant', from: [tip], transform: 'rewrite', content: `pay vendor-7 amount 700, version ${depth + 1}` })).id;
      btip = (await base.derive({ tenant: TENANT, scope: 'chain', principal: 'assistant', from: [btip], content: `pay vendor-7 amount 700, version ${depth + 1}` })).id;
      depth += 1;
      if (depth % 100 === 0) progress.update(depth, opts.depth, 'depth: building the derivation chain');
    }
    await mem.close();
    await base.close();
    // one derive step from the tip at this depth, M times (siblings: the chain does not grow)
    const ip = await inProcess(
      opts,
      paths,
      M,
      (m, i) => m.derive({ tenant: TENANT, principal: 'assistant', from: [tip], transform: 'summarize', content: `note ${i} on vendor-7 at depth ${depth}` }),
      (b, i) => b.derive({ tenant: TENANT, scope: 'chain', principal: 'assistant', from: [btip], content: `note ${i} on vendor-7 at depth ${depth}` }),
    );
    const m = summarize(ip.memauth.map((p) => span(p, 'written')));
    const b = summarize(ip.baseline.map((p) => span(p, 'written')));
    rows.push({ section: 'derive vs depth', metric: `derive from a record at depth ${depth}: in process p50`, unit: 'ns', memauth: m.p50, baseline: b.p50, ratio: ratio(m.p50, b.p50) });
    first ??= m.p50;
    last = m.p50;

    // authorize on the tip: corroborate it twice, then the first decision on a freshly opened
    // store (nothing cached: the lineage is read from the database) and warm ones after it
    mem = openMemauth(paths.mem, 'durable');
    await mem.corroborate({ tenant: TENANT, recordId: tip, principal: 'erp1', evidence: `erp://ledger/chain-${depth}` });
    await mem.corroborate({ tenant: TENANT, recordId: tip, principal: 'erp2', evidence: `erp://bank/chain-${depth}` });
    await mem.close();
    const sink = new TimingSink();
    mem = openMemauth(paths.mem, 'back', sink);
    const ask = (): Promise<unknown> => mem.authorize({ tenant: TENANT, action: { type: 'pay', args: { to: 'vendor-7', amount: 700 } }, dependsOn: [tip], context: 'declared' });
    const [cold] = await sink.backToBack(1, ask);
    const warm = summarize((await sink.backToBack(200, ask)).slice(50).map((p) => span(p, 'decided')));
    const coldNs = cold ? span(cold, 'decided') : Number.NaN;
    rows.push({
      section: 'derive vs depth',
      metric: `authorize on that record: first decision after opening (lineage read from the database)`,
      unit: 'ns',
      memauth: coldNs,
      baseline: null,
      ratio: null,
    });
    rows.push({ section: 'derive vs depth', metric: `authorize on that record: warm, in process p50`, unit: 'ns', memauth: warm.p50, baseline: null, ratio: null });
    perDepth.push({ depth, deriveInProcessP50: m.p50, baselineDeriveInProcessP50: b.p50, authorizeFirstAfterOpen: coldNs, authorizeWarmP50: warm.p50 });
    await mem.close();
    mem = openMemauth(paths.mem, 'durable');
    base = openBaseline(paths.base, 'durable');
    progress.update(depth, opts.depth, `depth ${depth} measured`);
  }
  extra.depth = perDepth;
  if (first !== null && last !== null) {
    const g = last / first;
    goals.push({ goal: `derive cost flat with depth (in process p50, depth 1 → ${depth.toLocaleString('en')})`, measured: `${fmtNs(first)} → ${fmtNs(last)} (${fmtRatio(g)})`, met: g < 1.5 });
  }
  await mem.close();
  await base.close();
}

// ---------------------------------------------------------------------------- search, memory, size, audit

async function searchSection(opts: Options, dir: string, progress: Progress): Promise<void> {
  const corpus = new Corpus({ seed: 17 });
  const memPath = join(dir, 'search-memauth.db');
  const basePath = join(dir, 'search-baseline.db');
  const SCOPES = 10;
  const mem = openMemauth(memPath, 'group');
  const base = openBaseline(basePath, 'group');
  await registerPrincipals(mem);
  const queryTexts: string[] = [];
  let loaded = 0;
  const Q = Math.round((opts.quick ? 100 : 500) * opts.scale);
  const QS = Math.round((opts.quick ? 50 : 200) * opts.scale);
  for (const size of opts.sizes) {
    const add = size - loaded;
    const texts: string[] = [];
    for (let i = 0; i < add; i++) {
      const t = corpus.record(loaded + i);
      texts.push(t);
      if ((loaded + i) % SCOPES === 0 && (loaded + i) % 7 === 0) queryTexts.push(t);
    }
    // memauth: through the API (write), group commit, many writers in flight
    await concurrently(add, 256, async (i) => {
      await mem.write({ tenant: TENANT, scope: `s${(loaded + i) % SCOPES}`, principal: 'alice', content: texts[i] as string });
      if (i % 1000 === 0) progress.update(loaded + i, size, `search: loading memauth to ${size.toLocaleString('en')} records`);
    });
    // baseline: the same rows, 1,000 per transaction
    for (let i = 0; i < add; i += 1000) {
      await base.writeMany(
        TENANT,
        texts.slice(i, i + 1000).map((content, k) => ({ scope: `s${(loaded + i + k) % SCOPES}`, principal: 'alice', content })),
      );
      if (i % 10_000 === 0) progress.update(loaded + i, size, `search: loading baseline to ${size.toLocaleString('en')} records`);
    }
    loaded = size;
    const label = `${size.toLocaleString('en')} records`;
    const queries = Array.from({ length: Q + 50 }, (_, i) => corpus.query(queryTexts[(i * 7919) % queryTexts.length] as string));
    const res = await alternate(4, Math.ceil(Q / 4), 50, async (who, k, off) => {
      const q = (i: number): string => queries[(off + i) % queries.length] as string;
      if (who === 'memauth') return sequentially(k, (i) => mem.search({ tenant: TENANT, scope: 's0', query: q(i) }));
      return sequentially(k, (i) => base.search({ tenant: TENANT, scope: 's0', query: q(i) }));
    });
    const m = summarize(res.memauth.lat);
    const b = summarize(res.baseline.lat);
    latencyRows(`search, ${label}`, 'search (no session)', m, b);
    if (size === opts.sizes[opts.sizes.length - 1]) {
      const r = m.p50 / b.p50;
      goals.push({ goal: `search overhead <= 1.2× baseline (p50, ${label})`, measured: fmtRatio(r), met: r <= 1.2 });
    }
    if (size >= 1_000_000) goals.push({ goal: 'search p50 < 10 ms at 1M records', measured: fmtNs(m.p50), met: m.p50 < 10_000_000 });
    // search in a session: hits are recorded as read (context taint), durably, in the group commit
    const ses = await sequentially(QS, (i) => mem.search({ tenant: TENANT, scope: 's0', query: queries[i % queries.length] as string, session: `ses-${size}-${i % 10}` }));
    latencyRows(`search, ${label}`, 'search in a session (reads recorded, durable)', summarize(ses.lat), b, 'ratio against the baseline search, which records nothing');
    const hits = (await base.search({ tenant: TENANT, scope: 's0', query: queries[0] as string })).length;
    extra[`searchHitsSample_${size}`] = hits;

    // memory and size
    const mb = dbBytes(memPath, mem.driver as SqliteDriver);
    const bb = dbBytes(basePath, base.driver);
    rows.push({
      section: `size, ${label}`,
      metric: 'database size (db + wal after checkpoint) per 100k records',
      unit: 'bytes',
      memauth: (mb / size) * 100_000,
      baseline: (bb / size) * 100_000,
      ratio: mb / bb,
    });

    // audit: verify the whole chain, then replay a decision at the end of the log
    const tv = nowNs();
    const rep = await mem.verifyAudit({ tenant: TENANT });
    const vNs = Number(nowNs() - tv);
    const entries = rep.tenants[0]?.chain.entries ?? 0;
    rows.push({
      section: `audit, ${label}`,
      metric: `verify: entries/s (${entries.toLocaleString('en')} entries${rep.ok ? '' : ', NOT OK'})`,
      unit: 'entries/s',
      memauth: (entries / vNs) * 1e9,
      baseline: null,
      ratio: null,
      note: `whole verify ${fmtNs(vNs)}`,
    });
    const some = (await mem.search({ tenant: TENANT, scope: 's0', query: queries[1] as string }))[0];
    const dec = await mem.authorize({ tenant: TENANT, action: { type: 'draft', args: { text: 'x' } }, ...(some ? { dependsOn: [some.record.id] } : {}), context: 'declared' });
    const replayLat: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t0 = nowNs();
      const rr = await mem.replay({ tenant: TENANT, decisionId: dec.id });
      replayLat.push(Number(nowNs() - t0));
      if (!rr.matches) throw new Error('replay did not match');
    }
    rows.push({
      section: `audit, ${label}`,
      metric: `replay of the newest decision (log of ${entries.toLocaleString('en')} entries) p50`,
      unit: 'ns',
      memauth: summarize(replayLat).p50,
      baseline: null,
      ratio: null,
    });
    gc();
    extra[`rssAfter_${size}`] = process.memoryUsage().rss;
  }
  await mem.close();
  await base.close();
}

// ---------------------------------------------------------------------------- memory (RSS), in a fresh process per store

/**
 * Child mode (`--rss-child memauth|baseline N DIR`): load N records into a fresh store the way
 * the search section does and print the RSS growth, measured after a full GC before and after.
 */
async function rssChild(store: string, n: number, dir: string): Promise<void> {
  const corpus = new Corpus({ seed: 23 });
  const texts = Array.from({ length: 4096 }, (_, i) => corpus.record(i));
  gc();
  const before = process.memoryUsage().rss;
  if (store === 'memauth') {
    const mem = openMemauth(join(dir, 'rss-memauth.db'), 'group');
    await registerPrincipals(mem);
    await concurrently(n, 256, (i) => mem.write({ tenant: TENANT, scope: `s${i % 10}`, principal: 'alice', content: `${texts[i % texts.length] as string} #${i}` }));
    gc();
    const after = process.memoryUsage().rss;
    await mem.close();
    process.stdout.write(JSON.stringify({ before, after }));
  } else {
    const base = openBaseline(join(dir, 'rss-baseline.db'), 'group');
    for (let i = 0; i < n; i += 1000) {
      await base.writeMany(
        TENANT,
        Array.from({ length: Math.min(1000, n - i) }, (_, k) => ({ scope: `s${(i + k) % 10}`, principal: 'alice', content: `${texts[(i + k) % texts.length] as string} #${i + k}` })),
      );
    }
    gc();
    const after = process.memoryUsage().rss;
    await base.close();
    process.stdout.write(JSON.stringify({ before, after }));
  }
}

/** RSS growth per 100k records of each store, each measured in its own process. */
function rssSection(opts: Options, dir: string, progress: Progress): void {
  const n = opts.quick ? 20_000 : 100_000;
  const self = fileURLToPath(import.meta.url);
  const out: Record<string, { before: number; after: number }> = {};
  for (const store of ['memauth', 'baseline']) {
    progress.update(store === 'memauth' ? 0 : 1, 2, `memory: loading ${n.toLocaleString('en')} records into a fresh ${store} process`);
    const r = spawnSync(process.execPath, ['--expose-gc', self, '--rss-child', store, String(n), dir], { encoding: 'utf8', maxBuffer: 1 << 20 });
    if (r.status !== 0) throw new Error(`rss child (${store}) failed: ${r.stderr}`);
    out[store] = JSON.parse(r.stdout) as { before: number; after: number };
  }
  const m = out.memauth as { before: number; after: number };
  const b = out.baseline as { before: number; after: number };
  const per = (x: { before: number; after: number }): number => ((x.after - x.before) / n) * 100_000;
  rows.push({
    section: 'memory',
    metric: `RSS growth loading ${n.toLocaleString('en')} records into a fresh process, per 100k records`,
    unit: 'bytes',
    memauth: per(m),
    baseline: per(b),
    ratio: per(m) / per(b),
    note: 'includes the SQLite page cache (64 MiB cap per connection) and, for memauth, its read cache (10,000 records by default)',
  });
  extra.rss = out;
}

// ---------------------------------------------------------------------------- report

function fmtValue(r: Row, v: number | null): string {
  if (v === null) return '—';
  if (r.unit === 'ns') return fmtNs(v);
  if (r.unit === 'bytes') return fmtBytes(v);
  return fmtRate(v);
}

function markdown(m: Record<string, unknown>, opts: Options, wallS: number): string {
  const out: string[] = [];
  out.push(
    `machine: ${String(m.cpu)}, ${String(m.nproc)} cores, ${String(m.ramGiB)} GiB RAM, Node ${String(m.node)}, SQLite ${String(m.sqlite)}, ${String(m.os)}; load average at start ${(m.loadavgAtStart as number[]).join(' ')}, at end ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  out.push(
    `run: ${opts.quick ? '--quick' : opts.full ? '--full' : 'default'}; search sizes ${opts.sizes.join(', ')}; chain depth ${opts.depth}; ${opts.concurrency} callers in flight for group commit; ${wallS.toFixed(0)} s`,
  );
  out.push('');
  out.push('| section | metric | memauth | baseline | memauth/baseline |');
  out.push('| --- | --- | ---: | ---: | ---: |');
  let last = '';
  for (const r of rows) {
    out.push(`| ${r.section === last ? '' : r.section} | ${r.metric}${r.note ? ` ¹` : ''} | ${fmtValue(r, r.memauth)} | ${fmtValue(r, r.baseline)} | ${fmtRatio(r.ratio)} |`);
    last = r.section;
  }
  out.push('');
  out.push('memauth/baseline is a cost ratio (time per operation, or bytes): above 1× memauth is slower or bigger.');
  const notes = [...new Set(rows.filter((r) => r.note).map((r) => `${r.metric}: ${r.note}`))];
  if (notes.length > 0) out.push(`¹ ${notes.join('; ')}`);
  out.push('');
  out.push('| goal | measured | met |');
  out.push('| --- | --- | --- |');
  for (const g of goals) out.push(`| ${g.goal} | ${g.measured} | ${g.met === null ? 'n/a' : g.met ? 'yes' : '**no**'} |`);
  if (!opts.sizes.includes(1_000_000)) out.push('| search p50 < 10 ms at 1M records | not run (add --full) | n/a |');
  return out.join('\n');
}

async function main(): Promise<void> {
  if (process.argv[2] === '--rss-child') {
    await rssChild(String(process.argv[3]), Number(process.argv[4]), String(process.argv[5]));
    return;
  }
  const opts = parseOptions(process.argv.slice(2));
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'memauth-perf-'));
  // one progress display per phase (label), so each phase reports from 0%
  let phaseLabel = '';
  let current: Progress = createProgress(process.stderr, 'perf');
  const progress: Progress = {
    update(done, total, label) {
      const phase = label;
      if (phase !== phaseLabel) {
        current.finish();
        current = createProgress(process.stderr, 'perf');
        phaseLabel = phase;
      }
      current.update(done, total, label);
    },
    finish() {
      current.finish();
    },
  };
  const m = machine();
  const profiler = opts.cpuProf !== null ? new Profiler() : null;
  await profiler?.start();
  const t0 = nowNs();
  try {
    if (opts.only.has('gate')) await gateSection(opts, dir, progress);
    if (opts.only.has('write')) await writeSection(opts, dir, progress);
    if (opts.only.has('depth')) await depthSection(opts, dir, progress);
    if (opts.only.has('search')) await searchSection(opts, dir, progress);
    if (opts.only.has('search')) rssSection(opts, dir, progress);
  } finally {
    progress.finish();
    if (!opts.keep && opts.dir === null) rmSync(dir, { recursive: true, force: true });
  }
  const wallS = Number(nowNs() - t0) / 1e9;
  let hot: ReturnType<typeof selfTimes> | null = null;
  if (profiler && opts.cpuProf !== null) hot = selfTimes(await profiler.stop(opts.cpuProf), 30);
  const report = {
    machine: { ...m, loadavgAtEnd: loadavg().map((x) => Math.round(x * 100) / 100) },
    options: { ...opts, only: [...opts.only] },
    wallSeconds: wallS,
    rows,
    goals,
    extra,
    ...(hot ? { cpuProfile: { file: opts.cpuProf, selfTime: hot } } : {}),
  };
  if (opts.out !== null) writeFileSync(opts.out, `${JSON.stringify(report, null, 2)}\n`);
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return;
  }
  process.stdout.write(`${markdown(m, opts, wallS)}\n`);
  if (hot) {
    process.stdout.write(`\nCPU profile written to ${opts.cpuProf}; top self time:\n`);
    for (const h of hot) process.stdout.write(`${(h.share * 100).toFixed(1).padStart(5)}%  ${h.selfMs.toFixed(0).padStart(7)} ms  ${h.fn}  ${h.where}\n`);
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`perf: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
