/**
 * How the SQLite driver runs transactions on its one connection: serialised in-process (a
 * promise chain, then the file's {@link FileLane}), each BEGIN IMMEDIATE … COMMIT with a fresh
 * {@link SqliteTx}, and the bookkeeping behind {@link SqliteTransactions.changeToken} for read
 * caches. Group commit (./group-commit.ts) runs its batches through the same primitives.
 *
 * May import: core/errors, ../driver.js, ../sql/reader.js, ./lane.js, ./native.js, ./search-index.js, ./tx.js, ./vector-index.js.
 */
import { MemauthError } from '../../core/errors.js';
import type { StorageTx } from '../driver.js';
import type { NativeReads } from '../sql/reader.js';
import type { FileLane } from './lane.js';
import { type SqliteExec, mapSqliteError } from './native.js';
import type { SearchIndexes } from './search-index.js';
import type { SqliteVectorIndex } from './vector-index.js';
import { SqliteTx } from './tx.js';

/** How long a transaction waits for the file's write lock, in ms (SQLite's busy_timeout and the in-process {@link FileLane}). */
export const LOCK_WAIT_MS = 5000;

/** The transaction machinery of one SQLite connection. */
export class SqliteTransactions {
  private queue: Promise<unknown> = Promise.resolve();
  /** ROLLBACKs and ROLLBACK TOs so far that discarded changes (part of {@link changeToken}). */
  rollbacks = 0;
  /** PRAGMA data_version read right after the current BEGIN IMMEDIATE. */
  private txDataVersion = 0;
  /** rows changed by COMMIT and RELEASE themselves (FTS5 writes its buffered index data then). */
  private flushChanges = 0;
  /** the current transaction was opened inside a transaction this driver did not open. */
  private foreignTx = false;
  private nonce = 0;
  /** the file's in-process write lane, shared with every other driver on the same file. */
  lane: FileLane | null = null;
  /** the vector index (sqlite-vec), whose entries a record's erasure removes; null when sqlite-vec cannot load. */
  vectors: SqliteVectorIndex | null = null;

  constructor(
    readonly path: string,
    readonly sql: SqliteExec,
    readonly indexes: SearchIndexes,
    private readonly native: NativeReads,
  ) {}

  /** A transaction object for the transaction now open. */
  newTx(): SqliteTx {
    return new SqliteTx(this.sql, this.indexes, this.native, this.vectors);
  }

  /**
   * BEGIN IMMEDIATE, then note the data version (another connection's commits change it). When
   * the connection is already inside a transaction someone else opened on the raw handle, what
   * this driver "commits" can still be rolled back by them — invisibly to data_version and
   * total_changes — so {@link changeToken} then never repeats. If BEGIN fails, rolls back only a
   * transaction it left open (never one the caller opened on the raw handle) and throws mapped.
   */
  begin(): void {
    const db = this.sql.db;
    try {
      this.foreignTx = db.inTransaction;
      db.exec('BEGIN IMMEDIATE');
      this.txDataVersion = Number(this.sql.stmt('PRAGMA data_version').pluck().get());
    } catch (e) {
      if (db.inTransaction && !this.foreignTx) db.exec('ROLLBACK');
      throw mapSqliteError(e, this.path);
    }
  }

  totalChanges(): number {
    return Number(this.sql.stmt('SELECT total_changes()').pluck().get());
  }

  /**
   * COMMIT, SAVEPOINT or RELEASE: rows they change (FTS5 flushing its buffered index data for
   * what this connection's transactions inserted) are those transactions' own consequence, not a
   * change behind a cache's back: they are set aside.
   */
  finish(sql: 'COMMIT' | 'SAVEPOINT memauth_op' | 'RELEASE memauth_op'): void {
    const before = this.totalChanges();
    if (sql === 'COMMIT') this.sql.db.exec('COMMIT');
    else this.sql.stmt(sql).run();
    this.flushChanges += this.totalChanges() - before;
  }

  /**
   * Runs `fn` with the rows it changes set aside from {@link changeToken}, like FTS5's flushes: for
   * writes of derived rows no read cache holds (the vector index), so they do not empty the cache.
   */
  setAside<T>(fn: () => T): T {
    const before = this.totalChanges();
    try {
      return fn();
    } finally {
      this.flushChanges += this.totalChanges() - before;
    }
  }

  /** ROLLBACK of the open transaction (when one is open), counted as a discarded change. */
  rollback(): void {
    this.rollbacks += 1;
    if (this.sql.db.inTransaction) this.sql.db.exec('ROLLBACK');
  }

  /**
   * For read caches (see `src/store/cache.ts`): changes whenever another connection has
   * committed (data_version, read at BEGIN — the write lock is held for the whole transaction,
   * so nobody else can commit while it is open), whenever this connection has written by any path,
   * including the raw handle (total_changes), and whenever a write was rolled back. Call it inside
   * a transaction.
   */
  changeToken(): string {
    const base = `${this.txDataVersion}:${this.totalChanges() - this.flushChanges}:${this.rollbacks}`;
    if (this.foreignTx) {
      this.nonce += 1;
      return `${base}:nested-${this.nonce}`;
    }
    return base;
  }

  /** Wait for the file's in-process write lane (see {@link FileLane}); resolves to its release. */
  takeLane(): Promise<() => void> {
    if (this.lane === null) throw new MemauthError('DATABASE_UNAVAILABLE', `${this.path} is closed`, { path: this.path });
    return this.lane.acquire(LOCK_WAIT_MS, this.path);
  }

  /** Run `fn` after every earlier serial job, with the file's lane held. */
  serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      const release = await this.takeLane();
      try {
        return await fn();
      } finally {
        release();
      }
    };
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => undefined);
    return p;
  }

  /** Resolves when every serial job queued so far has settled. */
  idle(): Promise<unknown> {
    return this.queue;
  }

  /** One transaction of its own, serialised: BEGIN IMMEDIATE, the body, COMMIT (ROLLBACK when it throws). */
  runSerial<T>(tenant: string, fn: (tx: StorageTx) => Promise<T>): Promise<T> {
    return this.serial(async () => {
      // outside the transaction, as for group commit: a caller that turns BEGIN into a SAVEPOINT
      // (the formal check does) can then roll back past the tenant's first write
      if (!this.sql.db.inTransaction) this.ensureIndexOutsideSavepoint(tenant);
      return this.runOne(fn);
    });
  }

  private async runOne<T>(fn: (tx: StorageTx) => Promise<T>): Promise<T> {
    this.begin();
    const changes = this.totalChanges();
    const tx = this.newTx();
    let bodyDone = false;
    try {
      const out = await fn(tx);
      bodyDone = true;
      tx.end();
      this.finish('COMMIT');
      return out;
    } catch (e) {
      tx.end();
      if (bodyDone || this.totalChanges() !== changes) this.rollbacks += 1;
      if (this.sql.db.inTransaction) this.sql.db.exec('ROLLBACK');
      throw mapSqliteError(e, this.path);
    }
  }

  /**
   * Make sure the tenant has its search index table before the transaction (group commit: before
   * the job's SAVEPOINT). SQLite cannot ROLLBACK TO a savepoint past the creation of an FTS5 table that was
   * written in it (the next SAVEPOINT or COMMIT fails with "SQL logic error", failing the batch),
   * and a job that fails is rolled back to its savepoint. An empty index table changes nothing a
   * read can see: its rows are set aside from {@link changeToken} like FTS5's flushes.
   */
  ensureIndexOutsideSavepoint(tenant: string): void {
    if (tenant === '' || this.indexes.tableOf(tenant) !== null) return;
    this.setAside(() => this.indexes.ensure(tenant));
  }
}
