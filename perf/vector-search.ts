/**
 * `npm run perf` (part) / `node dist/perf/vector-search.js` — semantic and hybrid search against
 * the same sqlite-vec index driven directly, in one process, at 100,000 records (`--sizes`).
 *
 * Both sides use one deterministic local embedder (the test embedder, 384 dimensions: hashed words
 * and trigrams, no model, no network) so the figures measure the store, not an endpoint.
 * - memauth: `Memory.write` (the record committed, then embedded and its vector stored in a second
 *   transaction that checks the record is still live) and `Memory.searchWithInfo` in `semantic`
 *   and `hybrid` mode (embed the query, KNN, read the hits back as records, drop stale vectors;
 *   hybrid adds BM25 and RRF).
 * - baseline (no authority, perf/baseline.ts): the record row and its vector in one transaction;
 *   semantic = embed the query, `SqliteVectorIndex.knn`, read the rows; hybrid = the same KNN and
 *   the driver's BM25 search, fused by the same `reciprocalRankFusion`.
 * Loading alternates chunks between the two; searches alternate query by query. Prints the
 * figures and memauth/baseline ratios with the machine and load. A benchmark: nothing is asserted.
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

async function open(dir: string, embedder: Embedder): Promise<Sides> {
  const mem = new Memory({ driver: SqliteDriver.open({ path: join(dir, 'memauth.db'), groupCommit: GROUP }), policy: loadPolicy(DEFAULT_POLICY), checkpointKey: null, embedder });
  await mem.registerPrincipal({ tenant: TENANT, id: 'user', kind: 'user', domain: 'perf' });
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

/** Loads `n` records into both sides, alternating chunks; returns each side's records per second. */
async function load(s: Sides, texts: readonly string[], inflight: number): Promise<{ memauth: number; baseline: number }> {
  const bar = createProgress(process.stderr, `load ${texts.length}`);
  let memNs = 0;
  let baseNs = 0;
  for (let from = 0; from < texts.length; from += CHUNK) {
    const to = Math.min(texts.length, from + CHUNK);
    let t0 = nowNs();
    await pool(from, to, inflight, async (i) => {
      const w = await s.mem.write({ tenant: TENANT, scope: SCOPE, principal: 'user', content: texts[i] as string });
      if (w.embedding?.status !== 'stored') throw new Error(`record ${i} not embedded: ${JSON.stringify(w.embedding)}`);
    });
    memNs += Number(nowNs() - t0);
    t0 = nowNs();
    await pool(from, to, inflight, async (i) => {
      const content = texts[i] as string;
      const [v] = await embedChecked(s.embedder, [content]);
      await s.base.writeWithVector({ tenant: TENANT, scope: SCOPE, principal: 'user', content }, s.index, s.embedder, v as Float32Array);
    });
    baseNs += Number(nowNs() - t0);
    bar.update(to, texts.length, 'memauth and baseline');
  }
  bar.finish();
  return { memauth: texts.length / (memNs / 1e9), baseline: texts.length / (baseNs / 1e9) };
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

/** p50/p99 of each side's search in `mode`, queries alternating between the sides. */
async function searches(s: Sides, mode: 'semantic' | 'hybrid', queries: readonly string[]): Promise<{ memauth: Summary; baseline: Summary }> {
  const bar = createProgress(process.stderr, `${mode} search`);
  const m: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < queries.length; i++) {
    const q = queries[i] as string;
    let t0 = nowNs();
    const r = await s.mem.searchWithInfo({ tenant: TENANT, scope: SCOPE, query: q, limit: LIMIT, mode });
    m.push(Number(nowNs() - t0));
    if (r.hits.length === 0) throw new Error(`memauth ${mode} search found nothing for ${q}`);
    t0 = nowNs();
    await (mode === 'semantic' ? baseSemantic(s, q, LIMIT) : baseHybrid(s, q));
    b.push(Number(nowNs() - t0));
    bar.update(i + 1, queries.length, mode);
  }
  bar.finish();
  return { memauth: summarize(m), baseline: summarize(b) };
}

const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`;

async function runSize(n: number, opts: { queries: number; inflight: number; warmup: number }): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'memauth-vperf-'));
  const s = await open(dir, testEmbedder());
  try {
    const corpus = new Corpus({ seed: 7 });
    const texts = Array.from({ length: n }, (_, i) => corpus.record(i));
    const t0 = Date.now();
    const rate = await load(s, texts, opts.inflight);
    const loadS = (Date.now() - t0) / 1000;
    const queries = Array.from({ length: opts.queries + opts.warmup }, () => corpus.query(texts[Math.floor(corpus.random() * n)] as string));
    const rows = [line([`${n.toLocaleString('en')} records`, 'embed and write (records/s, higher is better)', fmtRate(rate.memauth), fmtRate(rate.baseline), fmtRatio(rate.baseline / rate.memauth)])];
    for (const mode of ['semantic', 'hybrid'] as const) {
      await searches(s, mode, queries.slice(0, opts.warmup));
      const r = await searches(s, mode, queries.slice(opts.warmup));
      rows.push(line(['', `${mode} search p50`, fmtNs(r.memauth.p50), fmtNs(r.baseline.p50), fmtRatio(r.memauth.p50 / r.baseline.p50)]));
      rows.push(line(['', `${mode} search p99`, fmtNs(r.memauth.p99), fmtNs(r.baseline.p99), fmtRatio(r.memauth.p99 / r.baseline.p99)]));
    }
    process.stderr.write(`${n} records: loaded both sides in ${loadS.toFixed(0)} s\n`);
    return rows;
  } finally {
    await s.mem.close();
    await s.base.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { sizes: { type: 'string', default: '100000' }, queries: { type: 'string', default: '300' }, warmup: { type: 'string', default: '30' }, inflight: { type: 'string', default: '64' } },
  });
  const sizes = (values.sizes as string).split(',').map(Number);
  const opts = { queries: Number(values.queries), warmup: Number(values.warmup), inflight: Number(values.inflight) };
  const started = Date.now();
  const head = machineLine();
  const rows: string[] = [];
  for (const n of sizes) rows.push(...(await runSize(n, opts)));
  const out = [
    '',
    `Semantic and hybrid search (test embedder, 384 dims, sqlite-vec; ${opts.queries} queries per mode, limit ${LIMIT}, ${opts.inflight} writes in flight, group commit)`,
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
