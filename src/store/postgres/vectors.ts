/**
 * The PostgreSQL driver's {@link VectorStore}: the vector index of ./vector-index.ts (pgvector, or
 * an exact scan over real[] without it). Reads go through the pool; writes run in a transaction
 * holding the record tenant's advisory lock (the lock every write of the tenant takes), so a
 * vector is stored only for a record still active with the embedded content hash, and a deletion
 * (which erases vectors in its own transaction, ./tx.ts) cannot interleave.
 *
 * May import: src/core/, ../vector.js, ./vector-index.js.
 */
import { type PendingRecord, type VectorHit, type VectorItems, type VectorStore, itemsOf } from '../vector.js';
import { PgVectorIndex, type Queryable } from './vector-index.js';

/** Runs `fn` on a client inside a transaction holding the tenant's lock (the driver provides it). */
export type TenantLocked = <T>(tenant: string, fn: (q: Queryable) => Promise<T>) => Promise<T>;

/** {@link VectorStore} over pgvector or the exact scan. */
export class PgVectors implements VectorStore {
  readonly backend: 'pgvector' | 'exact';
  readonly note: string;

  private constructor(
    private readonly index: PgVectorIndex,
    private readonly locked: TenantLocked,
  ) {
    this.backend = index.mode;
    this.note =
      index.mode === 'pgvector'
        ? 'vector search: pgvector (exact scan per tenant and scope)'
        : 'vector search: pgvector is not available in this database; exact scan over real[] in SQL (correct, slower on large tenants; install pgvector — see docs/embeddings.md)';
  }

  /**
   * Opens the index on `pool` (its tables are created by the schema migration).
   *
   * @returns the store, or null with the reason when the index cannot be used.
   */
  static async open(pool: Queryable, locked: TenantLocked): Promise<{ vectors: PgVectors; reason: null } | { vectors: null; reason: string }> {
    try {
      return { vectors: new PgVectors(await PgVectorIndex.open(pool), locked), reason: null };
    } catch (e) {
      return { vectors: null, reason: e instanceof Error ? e.message : String(e) };
    }
  }

  async put(tenant: string, embedder: string, dimensions: number, items: VectorItems): Promise<number> {
    return this.locked(tenant, async (q) => {
      const ix = this.index.on(q);
      const live = await ix.current(tenant, itemsOf(items));
      await ix.upsert(tenant, embedder, dimensions, live);
      return live.length;
    });
  }

  knn(tenant: string, embedder: string, scope: string, query: Float32Array, k: number): Promise<VectorHit[]> {
    return this.index.knn(tenant, embedder, scope, query, k);
  }

  pending(tenant: string, embedder: string, after: string | null, limit: number): Promise<PendingRecord[]> {
    return this.index.pending(tenant, embedder, after, limit);
  }

  count(tenant: string, embedder: string): Promise<number> {
    return this.index.count(tenant, embedder);
  }
}
