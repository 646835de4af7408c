/**
 * Embeddings on write and reindex (docs/embeddings.md): the facade's {@link Indexer} turns records
 * into vectors with the configured embedder and stores them in the store's vector index.
 *
 * A vector is a derived artifact for ranking only, keyed by (record id, content hash, embedder
 * id), stored under the record's tenant; the gate never reads it (docs/design.md § Threat model).
 * Failure policy: a record is written first, in its own transaction, and embedded after its
 * commit; a failed embed (endpoint down, bad answer) never loses or refuses the record — the
 * record simply has no vector yet (it is "pending"), lexical search finds it, and `reindex`
 * embeds every pending record later. The store writes a vector only while its record is active
 * with the same content hash, under the tenant's lock, so a vector never outlives its record.
 *
 * May import: src/core/, src/store/, src/embed/embedder.ts, api/context.ts, api/validation.ts, api/views.ts.
 */
import { MemauthError, isMemauthError } from '../core/errors.js';
import type { MemoryRecord } from '../core/types.js';
import { type Embedder, embedChecked } from '../embed/embedder.js';
import type { PendingRecord, VectorStore } from '../store/vector.js';
import type { In } from './context.js';
import type { EmbeddingOutcome } from './views.js';
import { parseInput, schemas } from './validation.js';

/** Texts per embedder call during reindex and batched indexing. */
export const EMBED_BATCH = 64;

/** Progress of {@link Indexer.reindex}, reported after each batch. */
export interface ReindexProgress {
  readonly tenant: string;
  readonly embedder: string;
  /** records embedded by this run so far. */
  readonly done: number;
  /** records still without a vector for their content when the run started (an estimate once writes go on). */
  readonly total: number;
}

/** The result of {@link Indexer.reindex}. */
export interface ReindexResult extends ReindexProgress {
  /** vectors the tenant has under this embedder afterwards. */
  readonly vectors: number;
}

/** The embedder and the store's vector index, together. */
export class Indexer {
  constructor(
    readonly embedder: Embedder,
    readonly vectors: VectorStore,
  ) {}

  /**
   * Embeds `records` (one tenant's, active) in batches of {@link EMBED_BATCH} and stores their vectors.
   *
   * @returns `stored`, or `pending` with the error when the embedder failed (the records are kept;
   *   `reindex` embeds them later). A store error (database down) is thrown, not swallowed.
   */
  async index(tenant: string, records: readonly Pick<PendingRecord, 'id' | 'scope' | 'content' | 'contentHash'>[]): Promise<EmbeddingOutcome> {
    try {
      for (let i = 0; i < records.length; i += EMBED_BATCH) await this.batch(tenant, records.slice(i, i + EMBED_BATCH));
      return { status: 'stored' };
    } catch (e) {
      if (isMemauthError(e) && (e.code === 'EMBEDDER_UNAVAILABLE' || e.code === 'EMBEDDER_BAD_RESPONSE')) return { status: 'pending', error: { code: e.code, message: e.message } };
      throw e;
    }
  }

  private async batch(tenant: string, recs: readonly Pick<PendingRecord, 'id' | 'scope' | 'content' | 'contentHash'>[]): Promise<number> {
    const vecs = await embedChecked(
      this.embedder,
      recs.map((r) => r.content),
    );
    const items = recs.map((r, i) => ({ recordId: r.id, scope: r.scope, contentHash: r.contentHash, vector: vecs[i] as Float32Array }));
    return this.vectors.put(tenant, this.embedder.id, this.embedder.dimensions, items);
  }

  /** {@link index} for one freshly written record. */
  async indexRecord(r: MemoryRecord): Promise<EmbeddingOutcome> {
    if (r.content === null) return { status: 'pending' };
    return this.index(r.tenant, [{ id: r.id, scope: r.scope, content: r.content, contentHash: r.contentHash }]);
  }

  /**
   * Embeds every active record of `tenant` that has no vector under this embedder for its
   * current content: after the embedder changed, or to catch up records left pending. Resumable:
   * what is stored stays stored, a second run continues where the first stopped.
   *
   * @param onProgress - called after each batch.
   * @throws MemauthError EMBEDDER_UNAVAILABLE / EMBEDDER_BAD_RESPONSE (what was embedded before stays), DATABASE_*.
   */
  async reindex(tenant: string, onProgress?: (p: ReindexProgress) => void): Promise<ReindexResult> {
    const id = this.embedder.id;
    const total = await this.countPending(tenant);
    let done = 0;
    let after: string | null = null;
    for (;;) {
      const page: PendingRecord[] = await this.vectors.pending(tenant, id, after, EMBED_BATCH);
      if (page.length === 0) break;
      done += await this.batch(tenant, page);
      after = (page[page.length - 1] as PendingRecord).id;
      onProgress?.({ tenant, embedder: id, done, total: Math.max(total, done) });
    }
    return { tenant, embedder: id, done, total: Math.max(total, done), vectors: await this.vectors.count(tenant, id) };
  }

  /** How many of the tenant's active records have no vector for their content under this embedder. */
  async countPending(tenant: string): Promise<number> {
    let n = 0;
    let after: string | null = null;
    for (;;) {
      const page: PendingRecord[] = await this.vectors.pending(tenant, this.embedder.id, after, 1000);
      n += page.length;
      if (page.length < 1000) return n;
      after = (page[page.length - 1] as PendingRecord).id;
    }
  }
}

/** The facade's search state: the indexer (null without an embedder or vector index) and why. */
export interface SearchSetup {
  readonly indexer: Indexer | null;
  readonly reason: string;
}

/**
 * {@link Memory.reindex}: {@link Indexer.reindex} of the tenant.
 * @throws MemauthError SEMANTIC_SEARCH_UNAVAILABLE without an indexer (`details.reason`), TENANT_REQUIRED, and as {@link Indexer.reindex}.
 */
export function reindexTenant(setup: SearchSetup, input: In<'tenant'>, onProgress?: (p: ReindexProgress) => void): Promise<ReindexResult> {
  const a = parseInput(schemas.tenant, input, 'reindex');
  if (setup.indexer === null) throw new MemauthError('SEMANTIC_SEARCH_UNAVAILABLE', `reindex needs an embedder and a vector index: ${setup.reason}`, { reason: setup.reason });
  return setup.indexer.reindex(a.tenant, onProgress);
}

/**
 * The indexer of a store with `embedder`, or null with the reason search stays lexical (no
 * embedder configured, or the store has no vector index — e.g. sqlite-vec cannot load here).
 */
export function indexerFor(embedder: Embedder | undefined | null, vectors: VectorStore | null | undefined, note: string | undefined): SearchSetup {
  if (embedder === undefined || embedder === null) return { indexer: null, reason: 'no embedder is configured' };
  if (vectors === null || vectors === undefined) return { indexer: null, reason: `an embedder is configured but the store has no vector index (${note ?? 'the driver has none'})` };
  return { indexer: new Indexer(embedder, vectors), reason: `embedder ${embedder.id}, ${vectors.note}` };
}
