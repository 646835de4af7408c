/**
 * The SQLite transaction object: the shared {@link SqlTx} (src/store/sql/tx.ts) plus what FTS5
 * needs — a record's index entry is written with it and erased with its content. The driver
 * creates one per transaction (per group-commit job) and ends it when that transaction ends.
 *
 * Erasure also removes the record's vectors (./vector-index.ts) in the same transaction.
 *
 * May import: core, ../sql/*, ./native.js, ./search-index.js, ./vector-index.js.
 */
import { MemauthError } from '../../core/errors.js';
import type { MemoryRecord } from '../../core/types.js';
import { sqliteDialect } from '../sql/dialect.js';
import type { NativeReads } from '../sql/reader.js';
import { SqlTx } from '../sql/tx.js';
import * as S from '../sql/statements.js';
import { type SqliteExec, scopeKeyOf } from './native.js';
import type { SearchIndexes } from './search-index.js';
import type { SqliteVectorIndex } from './vector-index.js';

/** One transaction (or one job of a group commit) on the driver's connection. */
export class SqliteTx extends SqlTx {
  constructor(
    private readonly sqlite: SqliteExec,
    private readonly indexes: SearchIndexes,
    native: NativeReads,
    private readonly vectors: SqliteVectorIndex | null = null,
  ) {
    super(sqlite, sqliteDialect, native);
  }

  /** The record, its derivation edges and its entry in the tenant's search index, in one step. */
  override async insertRecord(r: MemoryRecord): Promise<void> {
    this.check();
    const rowid = this.sqlite.insert(S.insertRecord(sqliteDialect, r));
    this.sqlite.run(S.insertDerivations(sqliteDialect, r));
    this.indexes.insert(r.tenant, rowid, r.content, scopeKeyOf(r.tenant, r.scope));
  }

  /** Erase an active record's content and its index entry (secure_delete); an erased record is left as it is. */
  override async eraseRecord(tenant: string, id: string, at: string): Promise<void> {
    this.check();
    const [row] = this.sqlite.all({ text: "SELECT rowid FROM records WHERE tenant = ? AND id = ? AND status = 'active'", values: [tenant, id] });
    if (!row) return;
    this.indexes.erase(tenant, row.rowid as number | bigint);
    this.eraseVectors(tenant, id);
    this.sqlite.run([S.eraseRecord(sqliteDialect, tenant, id, at)]);
  }

  /**
   * Erase the record's vectors (every embedder). Fails closed: a file holding vectors that this
   * process cannot erase (sqlite-vec not loadable here) refuses the deletion rather than leave them.
   */
  private eraseVectors(tenant: string, id: string): void {
    if (this.vectors !== null) {
      this.vectors.deleteRecord(tenant, id);
      return;
    }
    const [t] = this.sqlite.all({ text: "SELECT 1 AS x FROM sqlite_master WHERE type = 'table' AND name = 'vector_rows'", values: [] });
    if (t === undefined) return;
    const [v] = this.sqlite.all({ text: 'SELECT 1 AS x FROM vector_rows WHERE tenant = ? AND record_id = ? LIMIT 1', values: [tenant, id] });
    if (v !== undefined) throw new MemauthError('DATABASE_UNAVAILABLE', 'this record has vectors and the sqlite-vec extension cannot be loaded here to erase them; delete it where sqlite-vec loads');
  }
}
