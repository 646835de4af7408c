/**
 * The contracts of the read cache (src/store/cache.ts): what a driver offers so that it can be
 * cached ({@link ChangeTracking}), what the cache offers its callers ({@link DerivedMemo}) and
 * its options. Types only.
 */

/** A driver that can tell whether anything changed behind a cache's back (see `CachingDriver`). */
export interface ChangeTracking {
  /**
   * Called inside a transaction. Equal tokens at two points mean the data this connection sees
   * has not changed in between except through this connection's writes, and that none of those
   * writes was rolled back. It must change when another connection commits, when this
   * connection writes (by any path), and when a write is rolled back.
   */
  changeToken(): string;
}

/**
 * Facts a caller derives from immutable columns of a record (and of the records it names),
 * kept by (tenant, record id) for as long as the cache's contents are valid: emptied together
 * with it. Offered by the transaction view of a {@link CachingDriver} (see {@link derivedMemo}).
 */
export interface DerivedMemo {
  getDerived(tenant: string, id: string): unknown;
  setDerived(tenant: string, id: string, value: unknown): void;
}

/** Options for {@link CachingDriver}. */
export interface CacheOptions {
  /** most records kept (the oldest cached are dropped first). Default 10,000. */
  readonly maxRecords?: number;
}
