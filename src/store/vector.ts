/**
 * The vector index's shapes, shared by its SQLite (sqlite-vec) and PostgreSQL (pgvector, or an
 * exact scan without it) implementations, and the checks both run on their input.
 *
 * A vector row is a derived artifact keyed by (tenant, record id, content hash, embedder id): it
 * carries no authority, no origin and no taint, and is never read by the gate
 * (docs/design.md § Threat model). Every query names a tenant and a scope, and both filter on them
 * before ranking, so no score depends on another tenant's data
 * (docs/design.md § Search and tenant isolation).
 *
 * May import: src/core/.
 */
import { MemauthError } from '../core/errors.js';

/** One vector to store. */
export interface VectorItem {
  readonly recordId: string;
  readonly scope: string;
  /** the record's content hash the vector was computed from (hex). */
  readonly contentHash: string;
  /** `dimensions` finite values (normalized to unit length on write). */
  readonly vector: Float32Array;
}

/** Vectors to store: given, or returned by a function called when the storing transaction starts. */
export type VectorItems = readonly VectorItem[] | (() => readonly VectorItem[]);

/** The vectors of {@link VectorItems} (calls the function). */
export function itemsOf(items: VectorItems): readonly VectorItem[] {
  return typeof items === 'function' ? items() : items;
}

/** One hit of a nearest-neighbour query. */
export interface VectorHit {
  readonly recordId: string;
  readonly contentHash: string;
  /** cosine similarity to the query, -1…1 (1 = same direction). */
  readonly score: number;
}

/** The most neighbours one query returns (sqlite-vec's limit on `k`). */
export const MAX_K = 4096;

/**
 * @throws MemauthError INVALID_ARGUMENT when `v` is not `dimensions` long or holds a non-finite value.
 */
export function checkVector(v: Float32Array, dimensions: number, field: string): void {
  if (!(v instanceof Float32Array) || v.length !== dimensions) throw new MemauthError('INVALID_ARGUMENT', `${field} must be a Float32Array of ${dimensions} values`, { field });
  for (const x of v) if (!Number.isFinite(x)) throw new MemauthError('INVALID_ARGUMENT', `${field} holds a value that is not finite`, { field });
}

/**
 * @throws MemauthError INVALID_ARGUMENT unless `k` is an integer in 1…{@link MAX_K}.
 */
export function checkK(k: number): void {
  if (!Number.isInteger(k) || k < 1 || k > MAX_K) throw new MemauthError('INVALID_ARGUMENT', `k must be an integer from 1 to ${MAX_K}`, { field: 'k' });
}

/** Hits in their one order: score descending, then record id ascending (deterministic under ties). */
export function byScoreThenId(a: VectorHit, b: VectorHit): number {
  return b.score - a.score || (a.recordId < b.recordId ? -1 : a.recordId > b.recordId ? 1 : 0);
}

/** A record still to embed under an embedder (no vector for its current content hash). */
export interface PendingRecord {
  readonly id: string;
  readonly scope: string;
  readonly content: string;
  readonly contentHash: string;
}

/** Which implementation answers vector queries: sqlite-vec, pgvector, or an exact scan in SQL. */
export type VectorBackend = 'sqlite-vec' | 'pgvector' | 'exact';

/**
 * A store's vector index as the facade uses it (src/api/embeddings.ts). Vectors are derived
 * artifacts: written under the record's tenant, keyed by (record id, content hash, embedder),
 * erased with the record by the driver's `eraseRecord` in the same transaction.
 */
export interface VectorStore {
  readonly backend: VectorBackend;
  /** One line for `memauth init`/`serve`: which backend runs and what that means. */
  readonly note: string;
  /**
   * Stores vectors in a transaction holding the tenant's lock, only for records that are still
   * active with the item's content hash (a record deleted or changed meanwhile gets none).
   *
   * @param items - the vectors, or a function called once inside the transaction, when it starts,
   *   that returns them (so vectors computed while the transaction waits for its turn join it).
   * @returns how many vectors were stored.
   * @throws MemauthError INVALID_ARGUMENT for a wrong length, a non-finite value, or an embedder
   *   already indexed with other dimensions.
   */
  put(tenant: string, embedder: string, dimensions: number, items: VectorItems): Promise<number>;
  /** The `k` nearest vectors of the tenant's scope (filtered before ranking), best first. */
  knn(tenant: string, embedder: string, scope: string, query: Float32Array, k: number): Promise<VectorHit[]>;
  /** Active records of the tenant with no vector under `embedder` for their content hash, `id > after`, by id, at most `limit`. */
  pending(tenant: string, embedder: string, after: string | null, limit: number): Promise<PendingRecord[]>;
  /** How many vectors the tenant has under `embedder`. */
  count(tenant: string, embedder: string): Promise<number>;
}
