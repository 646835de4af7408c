/**
 * The SQLite transaction object: the shared {@link SqlTx} (src/store/sql/tx.ts) plus what FTS5
 * needs — a record's index entry is written with it and erased with its content. The driver
 * creates one per transaction (per group-commit job) and ends it when that transaction ends.
 *
 * May import: core types, ../sql/*, ./native.js, ./search-index.js.
 */
import type { MemoryRecord } from '../../core/types.js';
import { sqliteDialect } from '../sql/dialect.js';
import type { NativeReads } from '../sql/reader.js';
import { SqlTx } from '../sql/tx.js';
import * as S from '../sql/statements.js';
import { type SqliteExec, scopeKeyOf } from './native.js';
import type { SearchIndexes } from './search-index.js';

/** One transaction (or one job of a group commit) on the driver's connection. */
export class SqliteTx extends SqlTx {
  constructor(
    private readonly sqlite: SqliteExec,
    private readonly indexes: SearchIndexes,
    native: NativeReads,
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
    this.sqlite.run([S.eraseRecord(sqliteDialect, tenant, id, at)]);
  }
}
