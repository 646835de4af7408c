/**
 * The embedded SQLite driver (better-sqlite3 12; WAL, synchronous=FULL, secure_delete): opening
 * and migrating the file, transactions (./transactions.ts, ./group-commit.ts), bulk copy. The
 * statements it shares with PostgreSQL live in src/store/sql/; what only SQLite has — FTS5
 * search, the transaction's index writes — in ./native.ts and ./tx.ts.
 *
 * May import: better-sqlite3, core, ../driver.js, ../rows.js, ../sql/*, ../tables.js, ./*.
 */
import Database from 'better-sqlite3';
import { MemauthError } from '../../core/errors.js';
import type { ReviewNoteRow, StorageDriver, StorageTx } from '../driver.js';
import type { Row } from '../rows.js';
import { sqliteDialect } from '../sql/dialect.js';
import { SqlReader } from '../sql/reader.js';
import { insertReviewNote } from '../sql/statements.js';
import { type CopyRow, type RowStore, TABLE_COLUMNS, TABLE_KEYS, TABLE_NAMES, type TableName, copyRow } from '../tables.js';
import { GroupCommit, type GroupCommitOptions } from './group-commit.js';
import { joinLane, leaveLane } from './lane.js';
import { SqliteExec, mapSqliteError, scopeKeyOf, sqliteNative } from './native.js';
import { APPLICATION_ID, MIGRATIONS, type Migration } from './schema.js';
import { SearchIndexes } from './search-index.js';
import { SqliteVectors } from './vectors.js';
import type { VectorStore } from '../vector.js';
import { LOCK_WAIT_MS, SqliteTransactions } from './transactions.js';

export { ftsQuery, mapSqliteError, scopeKeyOf } from './native.js';
export type { GroupCommitOptions } from './group-commit.js';

/** Options for {@link SqliteDriver.open}. */
export interface SqliteOptions {
  /** file path, or `:memory:` */
  readonly path: string;
  /** open read-only (no migrations). */
  readonly readonly?: boolean;
  /**
   * SQLite page cache of this connection, in KiB (PRAGMA cache_size = -N). Default 65536 (64 MiB):
   * SQLite's own default (2 MiB) makes every search probe record rows through the OS — 3–4×
   * slower on a 100k-record store.
   */
  readonly cacheSizeKiB?: number;
  /**
   * Read the database through a memory map of up to this many MiB (PRAGMA mmap_size). Default 0
   * (off). Off by default because an I/O error on a mapped page (a failing disk, a file truncated
   * by another process, a full disk on a sparse file) arrives as a SIGBUS/SIGSEGV that ends the
   * process instead of an error code memauth could report. On a store larger than the page cache
   * it can make reads faster (page reads become memory reads, not read() calls); search at 1M
   * records measured the same with and without it (README § Performance).
   */
  readonly mmapSizeMiB?: number;
  /**
   * Group commit: run concurrent transactions inside one BEGIN IMMEDIATE … COMMIT, each in its
   * own SAVEPOINT (a transaction that throws rolls back only itself), committing every
   * `maxOps` transactions or when the queue is idle (after `maxDelayMs`). Every caller's
   * promise resolves only after the COMMIT that includes its transaction: an acknowledged
   * transaction is as durable as without group commit (WAL, synchronous=FULL). If the COMMIT
   * fails, every transaction of the batch is rejected. Reads made outside a transaction while
   * a batch is open see that batch's not yet committed writes. Default: off.
   */
  readonly groupCommit?: boolean | GroupCommitOptions;
}

/**
 * Embedded SQLite driver on better-sqlite3 12 (WAL, synchronous=FULL, secure_delete).
 * One connection; transactions are serialised in-process by a promise chain and take
 * SQLite's write lock up front (BEGIN IMMEDIATE), so one tenant's chain never forks. Each
 * transaction gets its own {@link SqliteTx}; reads outside transactions run on the driver.
 *
 * @throws MemauthError `DATABASE_CORRUPT` when the file is not a memauth/SQLite database.
 */
export class SqliteDriver extends SqlReader implements StorageDriver, RowStore {
  readonly kind = 'sqlite';
  readonly path: string;
  private readonly db: Database.Database;
  private readonly sql: SqliteExec;
  /** the per-tenant full-text indexes (see search-index.ts). */
  private readonly indexes: SearchIndexes;
  private readonly txs: SqliteTransactions;
  private readonly group: GroupCommit | null;
  /** the vector index (sqlite-vec); null when the extension cannot be loaded here ({@link vectorNote} says why). */
  vectors: VectorStore | null = null;
  /** one line on vector search for `memauth init`/`serve`. */
  vectorNote = 'vector search: not available';

  private constructor(path: string, db: Database.Database, group: SqliteOptions['groupCommit']) {
    const sql = new SqliteExec(db, path);
    const indexes = new SearchIndexes(db);
    const native = sqliteNative(indexes, path);
    super(sql, sqliteDialect, native);
    this.path = path;
    this.db = db;
    this.sql = sql;
    this.indexes = indexes;
    this.txs = new SqliteTransactions(path, sql, indexes, native);
    this.group = group === undefined || group === false ? null : new GroupCommit(this.txs, group);
  }

  /** See {@link SqliteTransactions.changeToken} (for read caches, `src/store/cache.ts`). */
  changeToken(): string {
    return this.txs.changeToken();
  }

  /** Whether this driver coalesces transactions into group commits. */
  get groupCommit(): boolean {
    return this.group !== null;
  }

  /**
   * Open (creating when missing, unless read-only) and migrate a memauth SQLite file.
   * @throws MemauthError `DATABASE_CORRUPT` (not a memauth database, or a newer schema),
   *   `DATABASE_UNAVAILABLE` (cannot open or write the file).
   */
  static open(opts: SqliteOptions): SqliteDriver {
    let db: Database.Database;
    try {
      db = new Database(opts.path, { readonly: opts.readonly ?? false, fileMustExist: opts.readonly ?? false });
    } catch (e) {
      throw mapSqliteError(e, opts.path);
    }
    const d = new SqliteDriver(opts.path, db, opts.readonly === true ? false : opts.groupCommit);
    try {
      db.pragma(`busy_timeout = ${LOCK_WAIT_MS}`);
      db.pragma(`cache_size = -${Math.max(0, Math.floor(opts.cacheSizeKiB ?? 65_536))}`);
      if (opts.mmapSizeMiB !== undefined) db.pragma(`mmap_size = ${Math.max(0, Math.floor(opts.mmapSizeMiB)) * 1024 * 1024}`);
      if (!opts.readonly) {
        if (opts.path !== ':memory:') db.pragma('journal_mode = WAL');
        db.pragma('synchronous = FULL');
        db.pragma('secure_delete = ON');
        db.pragma('foreign_keys = ON');
        db.pragma('recursive_triggers = ON');
      }
      d.migrate(opts.readonly ?? false);
      if (!opts.readonly) d.openVectors();
    } catch (e) {
      db.close();
      throw mapSqliteError(e, opts.path);
    }
    d.txs.lane = joinLane(opts.path);
    return d;
  }

  /** Loads sqlite-vec and its tables; without it the store works and search stays lexical. */
  private openVectors(): void {
    const v = SqliteVectors.open(this.db, this, (fn) => this.txs.setAside(fn));
    this.vectors = v.vectors;
    this.txs.vectors = v.vectors?.index ?? null;
    this.vectorNote = v.vectors !== null ? v.vectors.note : `vector search: not available (${v.reason}); search is lexical`;
  }

  private migrate(readonly: boolean): void {
    const version = Number(this.db.pragma('user_version', { simple: true }));
    const appId = Number(this.db.pragma('application_id', { simple: true }));
    const tables = Number((this.db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as Row).n);
    if (appId !== APPLICATION_ID && (version > 0 || tables > 0)) {
      throw new MemauthError('DATABASE_CORRUPT', `${this.path} is an SQLite database of another application, not a memauth database; point memauth at a new or memauth file`, {
        path: this.path,
        applicationId: appId,
      });
    }
    if (version > MIGRATIONS.length) {
      throw new MemauthError('DATABASE_CORRUPT', `${this.path} has schema version ${version}, newer than this memauth (${MIGRATIONS.length}); upgrade memauth`, { path: this.path });
    }
    if (readonly) return;
    for (let v = version; v < MIGRATIONS.length; v++) {
      const step = MIGRATIONS[v] as Migration;
      this.db
        .transaction(() => {
          if (typeof step === 'string') this.db.exec(step);
          else step(this.db);
          this.db.pragma(`application_id = ${APPLICATION_ID}`);
          this.db.pragma(`user_version = ${v + 1}`);
        })
        .immediate();
    }
  }

  /**
   * The name of the tenant's full-text index table (FTS5: `rowid` = the record's rowid in
   * `records`, columns `content` and `scope_key`), or null when it has indexed nothing yet. For
   * tests and tools that reach under the API.
   */
  searchIndexTable(tenant: string): string | null {
    return this.indexes.tableOf(tenant);
  }

  /** Raw handle for tests and tools that must reach under the API (tamper tests, migrations). */
  unsafeDatabase(): Database.Database {
    return this.db;
  }

  /** Run `fn` atomically on the tenant's chain (group commit: in the next batch). Rolls back on throw. */
  transaction<T>(tenant: string, fn: (tx: StorageTx) => Promise<T>): Promise<T> {
    return this.group !== null ? this.group.transaction(tenant, fn) : this.txs.runSerial(tenant, fn);
  }

  async close(): Promise<void> {
    await this.txs.idle();
    await this.group?.idle();
    if (this.db.open) this.db.close();
    if (this.txs.lane !== null) {
      leaveLane(this.txs.lane);
      this.txs.lane = null;
    }
  }

  // ---- review notes (src/server/routes/review.ts): append-only, in a transaction of the tenant ----
  async insertReviewNote(n: ReviewNoteRow): Promise<void> {
    await this.transaction(n.tenant, async () => {
      this.sql.run([insertReviewNote(sqliteDialect, n)]);
    });
  }

  // ---- bulk rows (memauth migrate) ----

  /** Every row of every table from one read snapshot (see {@link RowStore.exportRows}). */
  async exportRows(sink: (table: TableName, rows: CopyRow[]) => Promise<void>, batchSize = 1000): Promise<void> {
    await this.txs.serial(async () => {
      this.db.exec('BEGIN');
      try {
        for (const t of TABLE_NAMES) {
          const it = this.db.prepare(`SELECT ${TABLE_COLUMNS[t].join(', ')} FROM ${t} ORDER BY ${TABLE_KEYS[t].join(', ')}`).iterate() as IterableIterator<Row>;
          let batch: CopyRow[] = [];
          for (const r of it) {
            batch.push(copyRow(t, r));
            if (batch.length >= batchSize) {
              await sink(t, batch);
              batch = [];
            }
          }
          if (batch.length > 0) await sink(t, batch);
        }
      } catch (e) {
        throw mapSqliteError(e, this.path);
      } finally {
        if (this.db.inTransaction) this.db.exec('COMMIT');
      }
    });
  }

  /** Insert copied rows in one transaction; refuses a store that holds any row (see {@link RowStore.importRows}). */
  async importRows(fill: (put: (table: TableName, rows: readonly CopyRow[]) => Promise<void>) => Promise<void>): Promise<void> {
    await this.transaction('', async () => {
      const n = TABLE_NAMES.reduce((sum, t) => sum + Number((this.sql.stmt(`SELECT count(*) AS n FROM ${t}`).get() as Row).n), 0);
      if (n > 0) throw new MemauthError('INVALID_ARGUMENT', `${this.path} already holds ${n} rows; migrate into a new, empty database`, { path: this.path, rows: n });
      await fill(async (table, rows) => {
        const cols = TABLE_COLUMNS[table];
        const ins = this.sql.stmt(`INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`);
        for (const r of rows) {
          const info = ins.run(...cols.map((c) => r[c] ?? null));
          if (table === 'records' && r.status === 'active') this.indexes.insert(String(r.tenant), info.lastInsertRowid, r.content as string, scopeKeyOf(String(r.tenant), String(r.scope)));
        }
      });
    });
  }
}
