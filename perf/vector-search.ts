/**
 * `npm run perf` (part) / `node dist/perf/vector-search.js` — embed-and-write throughput and
 * semantic, hybrid and lexical search against the same sqlite-vec index driven directly, in one
 * process, at 100,000 records (`--sizes 100000,1000000`).
 *
 * Both sides use one deterministic local embedder (the test embedder, 384 dimensions: hashed words
 * and trigrams, no model, no network) so the figures measure the store, not an endpoint.
 * - memauth: `Memory.write` (the record written in its transaction, embedded once accepted, its
 *   vector stored in a second transaction that checks the record is still live and joins the
 *   record's group commit) and `Memory.searchWithInfo` in `semantic` and `hybrid` mode (embed
 *   the query, KNN, read the hits back as records, drop stale vectors; hybrid adds BM25 and RRF),
 *   and `lexical` for a term in every record (`amount`).
 * - baseline (no authority, perf/baseline.ts): the record row and its vector in one transaction;
 *   semantic = embed the query, `SqliteVectorIndex.knn`, read the rows; hybrid = the same KNN and
 *   the driver's BM25 search, fused by the same `reciprocalRankFusion`; lexical = the driver's BM25.
 * Loading alternates chunks between the two. Only the first `--write-sample` records are timed,
 * and also written into a memauth store without an embedder and the plain baseline, so the rows
 * split the ratio into the record write and the vector part; the rest load untimed with
 * `--bulk-inflight` writes in flight (for 1,000,000 records). Searches alternate query by query.
 * Prints the figures and memauth/baseline ratios with the machine and load. A benchmark: nothing
 * is asserted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Memory } from '../src/api/memory.js';
import { createProgress } from '../src/cli/progress.js';
import { reciprocalRankFusion } from '../src/core/fusion.js';
import { DEFAULT_POLICY, loadPolicy } from '../src/core/policy.js';
import { type Embedder, embedChecked } from '../src/embed/embedder.js';
import { testEmbedder } from '../src/embed/test-embedder.js';
import { SqliteDriver } from '../src/store/sqlite/driver.js';
import type { SqliteVectors } from '../src/store/sqlite/vectors.js';
import type { SqliteVectorIndex } from '../src/store/sqlite/vector-index.js';
import { BaselineStore } from './baseline.js';
import { Corpus } from './corpus.js';
import { machineLine } from './machine.js';
import { type Summary, fmtNs, fmtRate, fmtRatio, nowNs, summarize } from './stats.js';

const TENANT = 'perf';
const SCOPE = 'notes';
const LIMIT = 10;
/** candidates per list for hybrid, as memauth takes them for a limit of 10 (src/api/search.ts). */
const DEPTH = 50;
const CHUNK = 2_000;
const GROUP = { maxOps: 512, maxDelayMs: 0 };

interface Sides {
  readonly mem: Memory;
  readonly base: BaselineStore;
  readonly index: SqliteVectorIndex;
  readonly embedder: Embedder;
}

/** A memauth store in `dir`/`name` (with `embedder`, or lexical only) with the principal `user`. */
async function openMemory(dir: string, name: string, embedder: Embedder | undefined): Promise<Memory> {
  const mem = new Memory({ driver: SqliteDriver.open({ path: join(dir, name), groupCommit: GROUP }), policy: loadPolicy(DEFAULT_POLICY), checkpointKey: null, ...(embedder ? { embedder } : {}) });
  await mem.registerPrincipal({ tenant: TENANT, id: 'user', kind: 'user', domain: 'perf' });
  return mem;
}

async function open(dir: string, embedder: Embedder): Promise<Sides> {
  const mem = await openMemory(dir, 'memauth.db', embedder);
  const base = BaselineStore.open({ path: join(dir, 'baseline.db'), groupCommit: GROUP });
  const vectors = base.driver.vectors as SqliteVectors | null;
  if (vectors === null) throw new Error(`sqlite-vec is not available here: ${base.driver.vectorNote}`);
  return { mem, base, index: vectors.index, embedder };
}

/** Runs `fn(i)` for i in [from, to) with `inflight` calls in flight. */
async function pool(from: number, to: number, inflight: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = from;
  const worker = async (): Promise<void> => {
    while (next < to) await fn(next++);
  };
  await Promise.all(Array.from({ length: inflight }, worker));
}

/** One record written by memauth, checked to be embedded. */
async function memWrite(s: Sides, content: string): Promise<void> {
  const w = await s.mem.write({ tenant: TENANT, scope: SCOPE, principal: 'user', content });
  if (w.embedding?.status !== 'stored') throw new Error(`record not embedded: ${JSON.stringify(w.embedding)}`);
}

/** One record written by the baseline: embed, then the row and its vector in one transaction. */
async function baseWrite(s: Sides, content: string): Promise<void> {
  const [v] = await embedChecked(s.embedder, [content]);
  await s.base.writeWithVector({ tenant: TENANT, scope: SCOPE, principal: 'user', content }, s.index, s.embedder, v as Float32Array);
}

/** Records per second of each side and of the same writes without embedding (plain stores), measured on `texts`. */
interface LoadRates {
  readonly memauth: number;
  readonly baseline: number;
  readonly memauthPlain: number;
  readonly baselinePlain: number;
}

/**
 * Loads `texts` into both sides, alternating chunks of {@link CHUNK} with `inflight` writes in
 * flight. The first `sample` are timed, and also written, alternating too, into a memauth store
 * with no embedder and the plain baseline (record row only), so the rows can split the ratio into
 * the record write and the vector part; the rest (`bulkInflight` in flight) are not timed.
 */
async function load(s: Sides, dir: string, texts: readonly string[], o: { inflight: number; sample: number; bulkInflight: number }): Promise<LoadRates> {
  const bar = createProgress(process.stderr, `load ${texts.length}`);
  const memPlain = await openMemory(dir, 'memauth-plain.db', undefined);
  const basePlain = BaselineStore.open({ path: join(dir, 'baseline-plain.db'), groupCommit: GROUP });
  const ns = { memauth: 0, baseline: 0, memauthPlain: 0, baselinePlain: 0 };
  const timed = async (side: keyof typeof ns, from: number, to: number, fn: (t: string) => Promise<unknown>): Promise<void> => {
    const t0 = nowNs();
    await pool(from, to, o.inflight, (i) => fn(texts[i] as string));
    ns[side] += Number(nowNs() - t0);
  };
  const sample = Math.min(o.sample, texts.length);
  try {
    for (let from = 0; from < texts.length; from += CHUNK) {
      const to = Math.min(texts.length, from + CHUNK);
      if (from < sample) {
        const end = Math.min(to, sample);
        await timed('memauth', from, end, (t) => memWrite(s, t));
        await timed('baseline', from, end, (t) => baseWrite(s, t));
        await timed('memauthPlain', from, end, (t) => memPlain.write({ tenant: TENANT, scope: SCOPE, principal: 'user', content: t }));
        await timed('baselinePlain', from, end, (t) => basePlain.write({ tenant: TENANT, scope: SCOPE, principal: 'user', content: t }));
      }
      const rest = Math.max(from, sample);
      if (rest < to) {
        await pool(rest, to, o.bulkInflight, (i) => memWrite(s, texts[i] as string));
        await pool(rest, to, o.bulkInflight, (i) => baseWrite(s, texts[i] as string));
      }
      bar.update(to, texts.length, from < sample ? 'timed: memauth, baseline, and both without embedding' : 'memauth and baseline, untimed');
    }
  } finally {
    bar.finish();
    await memPlain.close();
    await basePlain.close();
  }
  const rate = (k: keyof typeof ns): number => sample / (ns[k] / 1e9);
  return { memauth: rate('memauth'), baseline: rate('baseline'), memauthPlain: rate('memauthPlain'), baselinePlain: rate('baselinePlain') };
}

/** The baseline's semantic search: embed, KNN of `k`, read the rows. */
async function baseSemantic(s: Sides, query: string, k: number): Promise<string[]> {
  const [q] = await embedChecked(s.embedder, [query]);
  const near = s.index.knn(TENANT, s.embedder.id, SCOPE, q as Float32Array, k);
  const recs = await s.base.driver.getRecords(
    TENANT,
    near.map((h) => h.recordId),
  );
  return recs.map((r) => r.id);
}

/** The baseline's hybrid search: the KNN and BM25 lists of {@link DEPTH}, fused by RRF. */
async function baseHybrid(s: Sides, query: string): Promise<string[]> {
  const sem = await baseSemantic(s, query, DEPTH);
  const lex = await s.base.driver.search(TENANT, SCOPE, query, DEPTH, new Date().toISOString());
  return reciprocalRankFusion([lex.map((h) => h.record.id), sem], { limit: LIMIT }).map((h) => h.id);
}

/** The modes timed: semantic and hybrid on the queries, lexical on {@link EVERYWHERE}. */
type Mode = 'semantic' | 'hybrid' | 'lexical';

/** A term in every record of the corpus (`amount N`): the worst case of BM25. */
const EVERYWHERE = 'amount';

/** The baseline's search in `mode`. */
function baseSearch(s: Sides, mode: Mode, q: string): Promise<unknown> {
  if (mode === 'semantic') return baseSemantic(s, q, LIMIT);
  if (mode === 'hybrid') return baseHybrid(s, q);
  return s.base.driver.search(TENANT, SCOPE, q, LIMIT, new Date().toISOString());
}

/** p50/p99 of each side's search in `mode`, queries alternating between the sides. */
async function searches(s: Sides, mode: Mode, queries: readonly string[]): Promise<{ memauth: Summary; baseline: Summary }> {
  const bar = createProgress(process.stderr, `${mode} search`);
  const m: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < queries.length; i++) {
    const q = mode === 'lexical' ? EVERYWHERE : (queries[i] as string);
    let t0 = nowNs();
    const r = await s.mem.searchWithInfo({ tenant: TENANT, scope: SCOPE, query: q, limit: LIMIT, mode });
    m.push(Number(nowNs() - t0));
    if (r.hits.length === 0) throw new Error(`memauth ${mode} search found nothing for ${q}`);
    t0 = nowNs();
    await baseSearch(s, mode, q);
    b.push(Number(nowNs() - t0));
    bar.update(i + 1, queries.length, mode);
  }
  bar.finish();
  return { memauth: summarize(m), baseline: summarize(b) };
}

const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;

interface Options {
  readonly queries: number;
  readonly warmup: number;
  readonly inflight: number;
  readonly sample: number;
  readonly bulkInflight: number;
}

/** The table rows of one size: write rates on the sample, then p50/p99 per search mode. */
async function runSize(n: number, opts: Options): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'memauth-vperf-'));
  const s = await open(dir, testEmbedder());
  try {
    const corpus = new Corpus({ seed: 7 });
    const texts = Array.from({ length: n }, (_, i) => corpus.record(i));
    const t0 = Date.now();
    const rate = await load(s, dir, texts, opts);
    const loadS = (Date.now() - t0) / 1000;
    const queries = Array.from({ length: opts.queries + opts.warmup }, () => corpus.query(texts[Math.floor(corpus.random() * n)] as string));
    const sample = Math.min(n, opts.sample).toLocaleString('en');
    const rows = [
      line([
        `${n.toLocaleString('en')} records`,
        `embed and write, first ${sample} (records/s, higher is better)`,
        fmtRate(rate.memauth),
        fmtRate(rate.baseline),
        fmtRatio(rate.baseline / rate.memauth),
      ]),
      line(['', `the same writes without embedding (records/s)`, fmtRate(rate.memauthPlain), fmtRate(rate.baselinePlain), fmtRatio(rate.baselinePlain / rate.memauthPlain)]),
      line([
        '',
        `vector part: embed and store (µs per record)`,
        fmtUs(rate.memauth, rate.memauthPlain),
        fmtUs(rate.baseline, rate.baselinePlain),
        fmtRatio((1 / rate.memauth - 1 / rate.memauthPlain) / (1 / rate.baseline - 1 / rate.baselinePlain)),
      ]),
    ];
    for (const mode of ['semantic', 'hybrid', 'lexical'] as const) {
      await searches(s, mode, queries.slice(0, opts.warmup));
      const r = await searches(s, mode, queries.slice(opts.warmup));
      const what = mode === 'lexical' ? `lexical search, a term in every record,` : `${mode} search`;
      rows.push(line(['', `${what} p50`, fmtNs(r.memauth.p50), fmtNs(r.baseline.p50), fmtRatio(r.memauth.p50 / r.baseline.p50)]));
      rows.push(line(['', `${what} p99`, fmtNs(r.memauth.p99), fmtNs(r.baseline.p99), fmtRatio(r.memauth.p99 / r.baseline.p99)]));
    }
    process.stderr.write(`${n} records: loaded both sides in ${loadS.toFixed(0)} s\n`);
    return rows;
  } finally {
    await s.mem.close();
    await s.base.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Microseconds per record that the embedder and vector store add: 1/rate − 1/plain rate. */
function fmtUs(rate: number, plainRate: number): string {
  return `${((1 / rate - 1 / plainRate) * 1e6).toFixed(0)} µs`;
}

/** A positive integer option. @throws Error naming the option otherwise. */
function count(values: Record<string, unknown>, name: string): number {
  const n = Number(values[name]);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, not ${String(values[name])}`);
  return n;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string', default: '100000' },
      queries: { type: 'string', default: '300' },
      warmup: { type: 'string', default: '30' },
      inflight: { type: 'string', default: '64' },
      'write-sample': { type: 'string', default: '20000' },
      'bulk-inflight': { type: 'string', default: '512' },
    },
  });
  const sizes = (values.sizes as string).split(',').map((x) => count({ sizes: x.trim() }, 'sizes'));
  const opts: Options = {
    queries: count(values, 'queries'),
    warmup: count(values, 'warmup'),
    inflight: count(values, 'inflight'),
    sample: count(values, 'write-sample'),
    bulkInflight: count(values, 'bulk-inflight'),
  };
  const started = Date.now();
  const head = machineLine();
  const rows: string[] = [];
  for (const n of sizes) rows.push(...(await runSize(n, opts)));
  const out = [
    '',
    `Semantic, hybrid and lexical search (test embedder, 384 dims, sqlite-vec; ${opts.queries} queries per mode, limit ${LIMIT}; writes: ${opts.inflight} in flight, group commit, the first ${opts.sample} timed, the rest loaded with ${opts.bulkInflight} in flight)`,
    head,
    `load average at end ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}; ${((Date.now() - started) / 1000).toFixed(0)} s`,
    '',
    line(['size', 'operation', 'memauth', 'baseline (sqlite-vec directly)', 'ratio']),
    line(['---', '---', '---:', '---:', '---:']),
    ...rows,
    '',
    'ratio = memauth cost / baseline cost (for throughput: baseline rate / memauth rate); ≤ 1.2× is the goal',
    '',
  ];
  process.stdout.write(out.join('\n'));
}

main().catch((e: unknown) => {
  process.stderr.write(`vector-search: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
