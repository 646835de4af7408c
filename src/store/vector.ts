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
