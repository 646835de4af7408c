/**
 * Embeddings on write and reindex (docs/embeddings.md): the facade's {@link Indexer} turns records
 * into vectors with the configured embedder and stores them in the store's vector index.
 *
 * A vector is a derived artifact for ranking only, keyed by (record id, content hash, embedder
 * id), stored under the record's tenant; the gate never reads it (docs/design.md § Threat model).
 * Failure policy: a record is written first, in its own transaction; it is embedded once that
 * transaction has accepted it (a write: from inside the transaction, without holding it; derive
 * and supersede: after the commit), and its vector is stored in a transaction of its own; a
 * failed embed (endpoint down, bad answer) never loses or refuses the record — the
 * record simply has no vector yet (it is "pending"), lexical search finds it, and `reindex`
 * embeds every pending record later. The store writes a vector only while its record is active
 * with the same content hash, under the tenant's lock, so a vector never outlives its record
 * (nor exists for a write rolled back after it was embedded).
 *
 * May import: src/core/, src/store/, src/embed/embedder.ts, api/context.ts, api/validation.ts, api/views.ts.
 */
import { MemauthError, isMemauthError } from '../core/errors.js';
import type { MemoryRecord } from '../core/types.js';
import { type Embedder, embedChecked } from '../embed/embedder.js';
import type { PendingRecord, VectorItem, VectorItems, VectorStore } from '../store/vector.js';
import type { In } from './context.js';
import type { EmbeddingOutcome, WriteResult } from './views.js';
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

/** What indexing needs of a record. */
type ToIndex = Pick<PendingRecord, 'id' | 'scope' | 'content' | 'contentHash'>;

const STORED: EmbeddingOutcome = { status: 'stored' };

/**
 * `pending` with the error when `e` is the embedder's (EMBEDDER_UNAVAILABLE, EMBEDDER_BAD_RESPONSE:
 * the records are kept, `reindex` embeds them later).
 * @throws `e` itself for any other error (a store error is not swallowed).
 */
function pendingOrThrow(e: unknown): EmbeddingOutcome {
  if (isMemauthError(e) && (e.code === 'EMBEDDER_UNAVAILABLE' || e.code === 'EMBEDDER_BAD_RESPONSE')) return { status: 'pending', error: { code: e.code, message: e.message } };
  throw e;
}

/** Settles every record of a failed batch: pending after an embedder error, else rejected with `e`. */
function settleFailed(batch: readonly Waiting[], e: unknown): void {
  let out: EmbeddingOutcome;
  try {
    out = pendingOrThrow(e);
  } catch {
    for (const w of batch) w.reject(e);
    return;
  }
  for (const w of batch) w.resolve(out);
}

/** A record waiting to be indexed after its write, with its caller's promise. */
interface Waiting {
  readonly item: ToIndex;
  readonly resolve: (o: EmbeddingOutcome) => void;
  readonly reject: (e: unknown) => void;
}

/** The embedder and the store's vector index, together. */
export class Indexer {
  /** per tenant, the written records waiting for {@link indexRecord}'s next batch (present while one is running). */
  private readonly waiting = new Map<string, Waiting[]>();
  /** per tenant, the embedded vectors (and their records' callers) of the storing transaction queued and not yet started. */
  private readonly unstored = new Map<string, { items: VectorItem[]; waiters: Waiting[] }>();

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
  async index(tenant: string, records: readonly ToIndex[]): Promise<EmbeddingOutcome> {
    try {
      for (let i = 0; i < records.length; i += EMBED_BATCH) await this.batch(tenant, records.slice(i, i + EMBED_BATCH));
      return STORED;
    } catch (e) {
      return pendingOrThrow(e);
    }
  }

  /** Embeds `recs` (one embedder call) and stores their vectors; how many were stored. */
  private async batch(tenant: string, recs: readonly ToIndex[]): Promise<number> {
    return this.put(tenant, await this.embedItems(recs));
  }

  /** The vectors of `recs`, by one embedder call. @throws MemauthError EMBEDDER_* as {@link embedChecked}. */
  private async embedItems(recs: readonly ToIndex[]): Promise<VectorItem[]> {
    const vecs = await embedChecked(
      this.embedder,
      recs.map((r) => r.content),
    );
    return recs.map((r, i) => ({ recordId: r.id, scope: r.scope, contentHash: r.contentHash, vector: vecs[i] as Float32Array }));
  }

  private put(tenant: string, items: VectorItems): Promise<number> {
    return this.vectors.put(tenant, this.embedder.id, this.embedder.dimensions, items);
  }

  /**
   * {@link index} for one freshly written record, called once its write has been accepted (from
   * inside the write's transaction, or after it). The vector is stored in a transaction of its
   * own that first checks the record is active with the same content, so a write rolled back
   * after this call leaves no vector. Records of one tenant written while an earlier batch is
   * being embedded wait and go together in the next (one embedder call for up to
   * {@link EMBED_BATCH}); a lone write starts at once. Storing is not waited for before the next
   * batch is embedded, so with group commit the vectors' transactions join the batch that commits
   * their records. Every record of a batch gets the batch's outcome (an embedder failure leaves
   * them all pending; a store error is thrown to each caller).
   */
  indexRecord(r: MemoryRecord): Promise<EmbeddingOutcome> {
    if (r.content === null) return Promise.resolve({ status: 'pending' });
    const item = { id: r.id, scope: r.scope, content: r.content, contentHash: r.contentHash };
    return new Promise<EmbeddingOutcome>((resolve, reject) => {
      const q = this.waiting.get(r.tenant);
      if (q !== undefined) q.push({ item, resolve, reject });
      else {
        this.waiting.set(r.tenant, [{ item, resolve, reject }]);
        void this.drain(r.tenant);
      }
    });
  }

  /**
   * Runs a write and indexes the record it creates ({@link indexRecord}, started from inside the
   * write's transaction through `onWritten`, so that with group commit the vector's transaction
   * joins the record's COMMIT).
   *
   * @returns the write's result with its `embedding` outcome when it created a record.
   * @throws what the write throws (its record, rolled back, gets no vector) and store errors.
   */
  async indexWrite(write: (onWritten: (r: MemoryRecord) => void) => Promise<WriteResult>): Promise<WriteResult> {
    const indexing: { p?: Promise<EmbeddingOutcome> } = {};
    const r = await write((rec) => {
      indexing.p = this.indexRecord(rec);
      indexing.p.catch(() => undefined); // awaited below unless the write itself fails
    });
    return r.created && indexing.p !== undefined ? { ...r, embedding: await indexing.p } : r;
  }

  /** Embeds the tenant's waiting records batch by batch until none is left, storing each batch without waiting. */
  private async drain(tenant: string): Promise<void> {
    for (;;) {
      const q = this.waiting.get(tenant) as Waiting[];
      if (q.length === 0) {
        this.waiting.delete(tenant);
        return;
      }
      const batch = q.splice(0, EMBED_BATCH);
      let items: VectorItem[];
      try {
        items = await this.embedItems(batch.map((w) => w.item));
      } catch (e) {
        settleFailed(batch, e);
        continue;
      }
      this.store(tenant, items, batch);
    }
  }

  /**
   * Stores a batch's vectors in the tenant's next storing transaction: the one already queued
   * and not yet started, else a new one. Its items are taken when it starts, so every batch
   * embedded meanwhile goes in the same transaction; its outcome settles all their records.
   */
  private store(tenant: string, items: readonly VectorItem[], batch: readonly Waiting[]): void {
    const queued = this.unstored.get(tenant);
    if (queued !== undefined) {
      queued.items.push(...items);
      queued.waiters.push(...batch);
      return;
    }
    const next = { items: [...items], waiters: [...batch] };
    this.unstored.set(tenant, next);
    const close = (): void => {
      if (this.unstored.get(tenant) === next) this.unstored.delete(tenant);
    };
    this.put(tenant, () => {
      close();
      return next.items;
    }).then(
      () => next.waiters.forEach((w) => w.resolve(STORED)),
      (e: unknown) => {
        close(); // the transaction failed before it started: nothing more joins it
        settleFailed(next.waiters, e);
      },
    );
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
