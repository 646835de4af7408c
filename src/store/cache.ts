/**
 * A read cache over a {@link StorageDriver}, used by the library facade for its transactions.
 *
 * What is cached: the reads the gate and the write path make over and over — records (their
 * rows, which are immutable but for erasure), principals, corroborations, unexpired
 * confirmations per action type, confirmation use counts, session reads, the audit chain head.
 * Only reads made inside a transaction use it, and only while the driver's
 * {@link ChangeTracking.changeToken} is what it was at the end of this cache's own last
 * transaction: any write by another connection, by this connection outside this cache (the raw
 * handle, another facade), or any rolled back write empties it. Writes made through it update it
 * when their transaction's body has completed; reads see their own transaction's writes. It never
 * decides anything: what the gate trusts is still verified against the audit log by the facade.
 *
 * Cached objects are deep-frozen (they are shared between calls).
 */
import type { StorageTx } from './driver.js';
import { CachedTx } from './cache/tx.js';
import type { DerivedMemo } from './cache/types.js';

export { CachingDriver } from './cache/driver.js';
export { byId, deepFreeze } from './cache/state.js';
export type { CacheOptions, ChangeTracking, DerivedMemo } from './cache/types.js';

/** The transaction's {@link DerivedMemo}, when it comes from a {@link CachingDriver}. */
export function derivedMemo(tx: StorageTx): DerivedMemo | null {
  return tx instanceof CachedTx ? tx : null;
}

/**
 * The corroboration list the cache holds for a record in this transaction: the same (frozen)
 * object for as long as the record's corroborations are known unchanged — a corroboration
 * added through the cache puts a new list, anything else empties the cache — or undefined when
 * the cache holds none (or `tx` is not a cache's). For memos of what a record's corroborations
 * decide: keyed by this object, they never outlive the list they were computed from.
 */
export function cachedCorroborationList(tx: StorageTx, tenant: string, recordId: string): object | undefined {
  return tx instanceof CachedTx ? tx.corroborationList(tenant, recordId) : undefined;
}
