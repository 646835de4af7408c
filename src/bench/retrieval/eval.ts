/**
 * `memauth eval retrieval`: recall@1/5/10 and MRR of the three search modes of the facade —
 * lexical (BM25), semantic (the store's vector index) and hybrid (RRF) — over the labelled set in
 * data/retrieval-eval/ (or another file of the same shape). Everything goes through the public
 * API on a temporary SQLite file: the records are written without an embedder, the store is
 * reopened with the embedder and `reindex` embeds them (batched, as after an embedder change),
 * then each query runs once per mode with `searchWithInfo`.
 *
 * May import: src/api/, src/core/, src/embed/embedder.ts (types), ./dataset.ts, ./score.ts.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ReindexProgress } from '../../api/embeddings.js';
import { openMemory } from '../../api/open.js';
import type { SearchMode } from '../../api/search.js';
import { MemauthError } from '../../core/errors.js';
import type { Embedder } from '../../embed/embedder.js';
import { EVAL_SCOPE, type RetrievalSet } from './dataset.js';
import { type RetrievalScores, scoreRetrieval } from './score.js';

/** Hits taken per query (MRR counts a target found within them). */
export const EVAL_DEPTH = 50;
const TENANT = 'eval';

/** The table of one run. */
export interface RetrievalEvalResult {
  readonly records: number;
  readonly queries: number;
  readonly embedder: string;
  readonly scores: Readonly<Record<SearchMode, RetrievalScores>>;
  /** wall-clock seconds: writing, embedding (reindex), and the searches of every mode. */
  readonly seconds: { readonly write: number; readonly embed: number; readonly search: number };
}

/** The bundled set (data/retrieval-eval/retrieval-set.json), or `file`. @throws MemauthError INVALID_ARGUMENT when unreadable. */
export function loadRetrievalSet(file?: string): RetrievalSet {
  const path = file ?? new URL('../../../../data/retrieval-eval/retrieval-set.json', import.meta.url);
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as RetrievalSet;
  } catch (e) {
    throw new MemauthError('INVALID_ARGUMENT', `cannot read the retrieval set ${String(path)}: ${(e as Error).message}`, { field: 'data' });
  }
}

/**
 * Runs the evaluation.
 *
 * @param onProgress - reindex progress (embedding the records).
 * @throws MemauthError EMBEDDER_UNAVAILABLE / EMBEDDER_BAD_RESPONSE from the embedder.
 */
export async function evalRetrieval(set: RetrievalSet, embedder: Embedder, onProgress?: (p: ReindexProgress) => void): Promise<RetrievalEvalResult> {
  const dir = mkdtempSync(join(tmpdir(), 'memauth-eval-'));
  const path = join(dir, 'eval.db');
  try {
    const t0 = Date.now();
    const evalId = new Map<string, string>();
    const plain = await openMemory({ path, checkpointKey: false, groupCommit: true });
    try {
      await plain.registerPrincipal({ tenant: TENANT, id: 'user', kind: 'user', domain: 'eval' });
      const written = await Promise.all(set.records.map((r) => plain.write({ tenant: TENANT, scope: r.scope, principal: 'user', content: r.content })));
      written.forEach((w, i) => evalId.set(w.record.id, (set.records[i] as RetrievalSet['records'][number]).id));
    } finally {
      await plain.close();
    }
    const t1 = Date.now();
    const mem = await openMemory({ path, checkpointKey: false, embedder });
    try {
      await mem.reindex({ tenant: TENANT }, onProgress);
      const t2 = Date.now();
      const scores = {} as Record<SearchMode, RetrievalScores>;
      for (const mode of ['lexical', 'semantic', 'hybrid'] as const) {
        const runs = [];
        for (const q of set.queries) {
          const r = await mem.searchWithInfo({ tenant: TENANT, scope: EVAL_SCOPE, query: q.text, limit: EVAL_DEPTH, mode });
          runs.push({ ranked: r.hits.map((h) => evalId.get(h.record.id) as string), relevant: q.relevant });
        }
        scores[mode] = scoreRetrieval(runs);
      }
      const s = (ms: number): number => Math.round(ms / 100) / 10;
      return { records: set.records.length, queries: set.queries.length, embedder: embedder.id, scores, seconds: { write: s(t1 - t0), embed: s(t2 - t1), search: s(Date.now() - t2) } };
    } finally {
      await mem.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
