/**
 * The SQLite vector index: sqlite-vec's `vec0` virtual tables (the `sqlite-vec` npm package's
 * prebuilt loadable extension), one table per embedder, on the store's own connection.
 *
 * Layout. `vector_indexes` registers each embedder (id string ↔ n, dimensions); its vectors live
 * in `record_vectors_<n>` (a name built from the integer only, so no embedder or tenant string
 * reaches an SQL identifier), a vec0 table with `tenant` as its PARTITION KEY and `scope` as a
 * metadata column, cosine distance. `vector_rows` keys each vector by (index, tenant, record id)
 * and keeps its content hash; its integer id is the vec0 rowid.
 *
 * Filter before rank: a KNN query `embedding MATCH ? AND k = ? AND tenant = ? AND scope = ?`
 * is answered by sqlite-vec from the tenant's partition only, skipping rows of other scopes
 * before it keeps the k nearest (a scope's k nearest are found even when other scopes hold nearer
 * vectors; tested). Erasure: vec0 zeroes a deleted vector's bytes in its chunk, and the store
 * runs with secure_delete (tested on the file).
 *
 * May import: src/core/, src/store/, better-sqlite3, sqlite-vec.
 */
import type Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { MemauthError } from '../../core/errors.js';
import { normalize } from '../../core/vector-math.js';
import { type PendingRecord, type VectorHit, type VectorItem, byScoreThenId, checkK, checkVector } from '../vector.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS vector_indexes (id INTEGER PRIMARY KEY, embedder TEXT NOT NULL UNIQUE, dimensions INTEGER NOT NULL CHECK (dimensions > 0));
CREATE TABLE IF NOT EXISTS vector_rows (
  id INTEGER PRIMARY KEY, index_id INTEGER NOT NULL REFERENCES vector_indexes (id), tenant TEXT NOT NULL,
  record_id TEXT NOT NULL, content_hash TEXT NOT NULL, UNIQUE (tenant, record_id, index_id));`;

/** The vec0 table of registry entry `id` (a positive integer only). */
function vecTable(id: number): string {
  if (!Number.isSafeInteger(id) || id < 1) throw new Error(`memauth internal: vector index id ${String(id)}`);
  return `record_vectors_${id}`;
}

/**
 * Loads sqlite-vec into a connection.
 *
 * @returns the extension's version (e.g. `v0.1.9`).
 * @throws MemauthError DATABASE_UNAVAILABLE when the extension cannot be loaded (no prebuilt
 *   binary for this platform, or extension loading disabled).
 */
export function loadSqliteVec(db: Database.Database): string {
  try {
    sqliteVec.load(db);
    return db.prepare('SELECT vec_version()').pluck().get() as string;
  } catch (e) {
    throw new MemauthError('DATABASE_UNAVAILABLE', `the sqlite-vec extension cannot be loaded: ${e instanceof Error ? e.message : String(e)}`, {}, { cause: e });
  }
}

/** An embedder's registry entry. */
interface IndexEntry {
  readonly id: number;
  readonly dimensions: number;
}

/**
 * The vector index of one SQLite connection. Methods are synchronous (better-sqlite3); a write
 * method runs in one transaction of its own, or inside the caller's.
 */
export class SqliteVectorIndex {
  /** prepared statements by SQL text, each compiled once (a write of 64 vectors would otherwise compile five per call). */
  private readonly stmts = new Map<string, Database.Statement>();

  private constructor(private readonly db: Database.Database) {}

  /** The cached prepared statement for `sql` (SQLite re-prepares it by itself after a schema change). */
  private stmt(sql: string): Database.Statement {
    let s = this.stmts.get(sql);
    if (s === undefined) {
      s = this.db.prepare(sql);
      this.stmts.set(sql, s);
    }
    return s;
  }

  /**
   * Loads sqlite-vec into `db` and creates the registry tables when missing.
   *
   * @throws MemauthError DATABASE_UNAVAILABLE when sqlite-vec cannot be loaded.
   */
  static open(db: Database.Database): SqliteVectorIndex {
    loadSqliteVec(db);
    db.exec(SCHEMA);
    return new SqliteVectorIndex(db);
  }

  private entry(embedder: string): IndexEntry | null {
    const r = this.stmt('SELECT id, dimensions FROM vector_indexes WHERE embedder = ?').get(embedder) as IndexEntry | undefined;
    return r === undefined ? null : { id: Number(r.id), dimensions: Number(r.dimensions) };
  }

  /** The embedder's entry, created with its vec0 table when missing. */
  private ensure(embedder: string, dimensions: number): IndexEntry {
    const known = this.entry(embedder);
    if (known !== null) {
      if (known.dimensions !== dimensions)
        throw new MemauthError('INVALID_ARGUMENT', `embedder ${embedder} is indexed with ${known.dimensions} dimensions, not ${dimensions}`, { field: 'dimensions' });
      return known;
    }
    const id = Number(this.stmt('INSERT INTO vector_indexes (embedder, dimensions) VALUES (?, ?)').run(embedder, dimensions).lastInsertRowid);
    this.db.exec(`CREATE VIRTUAL TABLE ${vecTable(id)} USING vec0 (tenant TEXT PARTITION KEY, scope TEXT, embedding float[${dimensions}] distance_metric=cosine)`);
    return { id, dimensions };
  }

  /**
   * Stores vectors of one tenant computed by `embedder`, replacing the record's previous vector
   * for that embedder (a changed content hash, or the same one embedded again).
   *
   * @param tenant - the records' tenant.
   * @param embedder - the embedder id (`provider:model:dimensions`).
   * @param dimensions - its vector length (fixed per embedder: a different one is refused).
   * @param items - the vectors (normalized to unit length here).
   * @throws MemauthError INVALID_ARGUMENT for a vector of the wrong length or with a non-finite value.
   */
  upsert(tenant: string, embedder: string, dimensions: number, items: readonly VectorItem[]): void {
    for (const it of items) checkVector(it.vector, dimensions, 'vector');
    this.db.transaction(() => {
      const { id } = this.ensure(embedder, dimensions);
      const table = vecTable(id);
      const old = this.stmt('SELECT id FROM vector_rows WHERE tenant = ? AND record_id = ? AND index_id = ?').pluck();
      const row = this.stmt('INSERT INTO vector_rows (index_id, tenant, record_id, content_hash) VALUES (?, ?, ?, ?)');
      const vec = this.stmt(`INSERT INTO ${table} (rowid, tenant, scope, embedding) VALUES (?, ?, ?, ?)`);
      for (const it of items) {
        const prev = old.get(tenant, it.recordId, id) as number | bigint | undefined;
        if (prev !== undefined) this.deleteRows(table, [BigInt(prev)]);
        const rowid = BigInt(row.run(id, tenant, it.recordId, it.contentHash).lastInsertRowid);
        vec.run(rowid, tenant, it.scope, normalize(it.vector));
      }
    })();
  }

  private deleteRows(table: string, rowids: readonly bigint[]): void {
    const v = this.stmt(`DELETE FROM ${table} WHERE rowid = ?`);
    const r = this.stmt('DELETE FROM vector_rows WHERE id = ?');
    for (const id of rowids) {
      v.run(id);
      r.run(id);
    }
  }

  /**
   * The `k` records of `tenant` in `scope` nearest to `query` under `embedder`, filtered by tenant
   * and scope before ranking.
   *
   * @returns hits by score (cosine similarity) descending, then record id; `[]` when the embedder
   *   has no index yet.
   * @throws MemauthError INVALID_ARGUMENT for a query of the wrong length or a `k` outside 1…4096.
   */
  knn(tenant: string, embedder: string, scope: string, query: Float32Array, k: number): VectorHit[] {
    checkK(k);
    const e = this.entry(embedder);
    if (e === null) return [];
    checkVector(query, e.dimensions, 'query');
    const rows = this.stmt(
      `SELECT r.record_id AS recordId, r.content_hash AS contentHash, v.distance AS distance
         FROM (SELECT rowid, distance FROM ${vecTable(e.id)} WHERE embedding MATCH ? AND k = ? AND tenant = ? AND scope = ?) v
         JOIN vector_rows r ON r.id = v.rowid`,
    ).all(normalize(query), k, tenant, scope) as { recordId: string; contentHash: string; distance: number }[];
    return rows.map((r) => ({ recordId: r.recordId, contentHash: r.contentHash, score: 1 - r.distance })).sort(byScoreThenId);
  }

  /**
   * Erases every vector of a record (all embedders).
   *
   * @returns how many vectors were erased.
   */
  deleteRecord(tenant: string, recordId: string): number {
    return this.db.transaction(() => {
      const rows = this.stmt('SELECT id, index_id AS indexId FROM vector_rows WHERE tenant = ? AND record_id = ?').safeIntegers().all(tenant, recordId) as { id: bigint; indexId: bigint }[];
      for (const r of rows) this.deleteRows(vecTable(Number(r.indexId)), [r.id]);
      return rows.length;
    })();
  }

  /**
   * Of the given records, those with no vector under `embedder` for their current content hash
   * (what a resumable reindex still has to embed).
   *
   * @param records - (record id, content hash) pairs of one tenant.
   * @returns the pairs to (re-)embed, in input order.
   */
  missing(tenant: string, embedder: string, records: readonly { recordId: string; contentHash: string }[]): { recordId: string; contentHash: string }[] {
    const e = this.entry(embedder);
    if (e === null) return [...records];
    const q = this.stmt('SELECT content_hash FROM vector_rows WHERE tenant = ? AND record_id = ? AND index_id = ?').pluck();
    return records.filter((r) => q.get(tenant, r.recordId, e.id) !== r.contentHash);
  }

  /**
   * Active records of `tenant` with no vector under `embedder` for their current content hash,
   * `id > after` (all when null), by id, at most `limit`: what a resumable reindex still has to embed.
   */
  pending(tenant: string, embedder: string, after: string | null, limit: number): PendingRecord[] {
    const e = this.entry(embedder);
    return this.stmt(
      `SELECT r.id, r.scope, r.content, r.content_hash AS contentHash FROM records r
         WHERE r.tenant = ? AND r.status = 'active' AND r.id > ?
           AND NOT EXISTS (SELECT 1 FROM vector_rows v WHERE v.tenant = r.tenant AND v.record_id = r.id AND v.index_id = ? AND v.content_hash = r.content_hash)
         ORDER BY r.id LIMIT ?`,
    ).all(tenant, after ?? '', e?.id ?? -1, limit) as PendingRecord[];
  }

  /** Of `items`, those whose record is active in `tenant` with the item's content hash. */
  current<T extends { recordId: string; contentHash: string }>(tenant: string, items: readonly T[]): T[] {
    const q = this.stmt("SELECT content_hash FROM records WHERE tenant = ? AND id = ? AND status = 'active'").pluck();
    return items.filter((it) => q.get(tenant, it.recordId) === it.contentHash);
  }

  /** How many vectors `tenant` has under `embedder`. */
  count(tenant: string, embedder: string): number {
    const e = this.entry(embedder);
    if (e === null) return 0;
    return Number(this.stmt('SELECT count(*) FROM vector_rows WHERE tenant = ? AND index_id = ?').pluck().get(tenant, e.id));
  }
}
