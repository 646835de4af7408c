/**
 * The SQLite driver's {@link VectorStore}: the sqlite-vec index (./vector-index.ts) on the
 * driver's own connection, its writes run as transactions of the record's tenant (so they queue
 * with the tenant's other writes and a deletion cannot interleave), its reads outside them.
 *
 * May import: src/core/, ../driver.js, ../vector.js, ./vector-index.js.
 */
import type { StorageDriver } from '../driver.js';
import { type PendingRecord, type VectorHit, type VectorItems, type VectorStore, itemsOf } from '../vector.js';
import { SqliteVectorIndex } from './vector-index.js';
import type Database from 'better-sqlite3';

/**
 * Runs a write of vector rows so that a read cache over the driver is not emptied by it (the
 * driver's change token leaves its rows aside): no cache holds vectors.
 */
export type SetAside = <T>(fn: () => T) => T;

/** {@link VectorStore} over sqlite-vec. */
export class SqliteVectors implements VectorStore {
  readonly backend = 'sqlite-vec' as const;
  readonly note: string;

  constructor(
    readonly index: SqliteVectorIndex,
    private readonly driver: Pick<StorageDriver, 'transaction'>,
    version: string,
    private readonly setAside: SetAside = (fn) => fn(),
  ) {
    this.note = `vector search: sqlite-vec ${version} (exact KNN per tenant and scope)`;
  }

  /**
   * Loads sqlite-vec into `db` and creates its registry tables when missing.
   *
   * @returns the store, or null with the reason when sqlite-vec cannot load here.
   */
  static open(db: Database.Database, driver: Pick<StorageDriver, 'transaction'>, setAside?: SetAside): { vectors: SqliteVectors; reason: null } | { vectors: null; reason: string } {
    try {
      const index = SqliteVectorIndex.open(db);
      return { vectors: new SqliteVectors(index, driver, String(db.prepare('SELECT vec_version()').pluck().get()), setAside), reason: null };
    } catch (e) {
      return { vectors: null, reason: e instanceof Error ? e.message : String(e) };
    }
  }

  async put(tenant: string, embedder: string, dimensions: number, items: VectorItems): Promise<number> {
    return this.driver.transaction(tenant, async () => {
      const live = this.index.current(tenant, itemsOf(items));
      this.setAside(() => this.index.upsert(tenant, embedder, dimensions, live));
      return live.length;
    });
  }

  async knn(tenant: string, embedder: string, scope: string, query: Float32Array, k: number): Promise<VectorHit[]> {
    return this.index.knn(tenant, embedder, scope, query, k);
  }

  async pending(tenant: string, embedder: string, after: string | null, limit: number): Promise<PendingRecord[]> {
    return this.index.pending(tenant, embedder, after, limit);
  }

  async count(tenant: string, embedder: string): Promise<number> {
    return this.index.count(tenant, embedder);
  }
}
