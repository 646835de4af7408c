import Database from 'better-sqlite3';
import { type AuditEntry, type AuditOp, type Checkpoint, payloadJson } from '../../core/audit.js';
import { MemauthError } from '../../core/errors.js';
import { ADMIN_CHAIN } from '../../core/identity.js';
import type { Confirmation, Corroboration, Decision, DerivationEdge, EdgeKind, MemoryRecord, Principal, Transform } from '../../core/types.js';
import type { ListRecordsOptions, ReviewNoteRow, SearchHit, StorageDriver, StorageTx, TokenRow } from '../driver.js';
import { type Row, searchTokens, str, toAudit, toCheckpoint, toConfirmation, toCorroboration, toPrincipal, toRecord, toReviewNote, toToken, walkLineage } from '../rows.js';
import { type CopyRow, type RowStore, TABLE_COLUMNS, TABLE_KEYS, TABLE_NAMES, type TableName, copyRow } from '../tables.js';
import { type FileLane, joinLane, leaveLane } from './lane.js';
import { APPLICATION_ID, MIGRATIONS, type Migration } from './schema.js';
import { SearchIndexes } from './search-index.js';

/** How long a transaction waits for the file's write lock, in ms (SQLite's busy_timeout and the in-process {@link FileLane}). */
const LOCK_WAIT_MS = 5000;

/** Map a better-sqlite3 error to a MemauthError with a message a person can act on. */
export function mapSqliteError(e: unknown, path: string): unknown {
  const code = (e as { code?: string })?.code ?? '';
  const msg = e instanceof Error ? e.message : String(e);
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT' || code.startsWith('SQLITE_CORRUPT')) {
    return new MemauthError('DATABASE_CORRUPT', `${path} is not a valid memauth database or is corrupted (${code}); restore it from a backup. Nothing was written.`, { path, sqliteCode: code }, { cause: e });
  }
  if (code === 'SQLITE_CANTOPEN' || code === 'SQLITE_READONLY' || code === 'SQLITE_PERM' || code === 'SQLITE_IOERR' || code.startsWith('SQLITE_IOERR') || code === 'SQLITE_FULL') {
    return new MemauthError('DATABASE_UNAVAILABLE', `cannot open or write ${path} (${code}): check that its folder exists, that it is a file, that you may write it and that the disk has room. Nothing was written.`, { path, sqliteCode: code }, { cause: e });
  }
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
    return new MemauthError('DATABASE_LOCKED', `${path} is locked by another process; retry, or stop the other writer`, { path, sqliteCode: code }, { cause: e });
  }
  if (msg.includes('memauth IMMUTABLE_FIELD')) {
    return new MemauthError('IMMUTABLE_FIELD', msg.replace(/^.*memauth IMMUTABLE_FIELD: /, ''), { path }, { cause: e });
  }
  return e;
}

/**
 * An IN list for `values` (non-empty): placeholders for the next power of two, padded by
 * repeating the last value (a duplicate in an IN list changes nothing), so that only a handful
 * of statements per query are ever prepared and cached.
 */
function inList(values: readonly string[]): { sql: string; params: string[] } {
  let n = 1;
  while (n < values.length) n *= 2;
  const params = [...values];
  const last = values[values.length - 1] as string;
  while (params.length < n) params.push(last);
  return { sql: n === 1 ? '?' : `?${',?'.repeat(n - 1)}`, params };
}

/** {@link scopeKeyOf}'s recent answers (a pure function of its arguments), bounded. */
const SCOPE_KEYS = new Map<string, Map<string, string>>();

/**
 * The full-text index's key for a tenant's scope: one token (`k`, hex of the tenant's UTF-8,
 * `x`, hex of the scope's) — migration 4 computes the same in SQL.
 */
export function scopeKeyOf(tenant: string, scope: string): string {
  const memo = SCOPE_KEYS.get(tenant)?.get(scope);
  if (memo !== undefined) return memo;
  const k = `k${Buffer.from(tenant, 'utf8').toString('hex')}x${Buffer.from(scope, 'utf8').toString('hex')}`;
  if (SCOPE_KEYS.size >= 256) SCOPE_KEYS.clear();
  let scopes = SCOPE_KEYS.get(tenant);
  if (scopes === undefined) SCOPE_KEYS.set(tenant, (scopes = new Map()));
  if (scopes.size >= 1024) scopes.clear();
  scopes.set(scope, k);
  return k;
}

/** FTS5 query from free text: each token quoted (no operator injection), OR-ed, ranked by BM25. */
export function ftsQuery(text: string): string | null {
  const tokens = searchTokens(text);
  if (tokens.length === 0) return null;
  return tokens.map((t) => `"${t}"`).join(' OR ');
}

/** Group commit settings (see {@link SqliteOptions.groupCommit}). */
export interface GroupCommitOptions {
  /** COMMIT after at most this many logical transactions. Default 256. */
  readonly maxOps?: number;
  /**
   * When no transaction is waiting, wait up to this many milliseconds (counted from the batch's
   * BEGIN) for more before committing. Default 0: commit as soon as nothing is waiting — batches
   * then form from whatever arrived while the previous COMMIT was syncing.
   */
  readonly maxDelayMs?: number;
}

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

interface GroupJob {
  readonly tenant: string;
  readonly fn: (tx: StorageTx) => Promise<unknown>;
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: unknown) => void;
}

/**
 * Embedded SQLite driver on better-sqlite3 12 (WAL, synchronous=FULL, secure_delete).
 * One connection; transactions are serialised in-process by a promise chain and take
 * SQLite's write lock up front (BEGIN IMMEDIATE), so one tenant's chain never forks.
 *
 * @throws MemauthError `DATABASE_CORRUPT` when the file is not a memauth/SQLite database.
 */
export class SqliteDriver implements StorageDriver, StorageTx, RowStore {
  readonly kind = 'sqlite';
  readonly path: string;
  private readonly db: Database.Database;
  private queue: Promise<unknown> = Promise.resolve();
  private inTx = false;
  private readonly stmts = new Map<string, Database.Statement>();
  private readonly group: { readonly maxOps: number; readonly maxDelayMs: number } | null;
  private readonly pending: GroupJob[] = [];
  private batches: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  /** ROLLBACKs and ROLLBACK TOs so far that discarded changes (part of {@link changeToken}). */
  private rollbacks = 0;
  /** PRAGMA data_version read right after the current BEGIN IMMEDIATE. */
  private txDataVersion = 0;
  /** rows changed by COMMIT and RELEASE themselves (FTS5 writes its buffered index data then). */
  private flushChanges = 0;
  /** the current transaction was opened inside a transaction this driver did not open. */
  private foreignTx = false;
  private nonce = 0;
  /** the file's in-process write lane, shared with every other driver on the same file. */
  private lane: FileLane | null = null;
  /** the per-tenant full-text indexes (see search-index.ts). */
  private readonly indexes: SearchIndexes;

  private constructor(path: string, db: Database.Database, group: SqliteOptions['groupCommit']) {
    this.path = path;
    this.db = db;
    this.indexes = new SearchIndexes(db);
    this.group = group === undefined || group === false ? null : { maxOps: Math.max(1, (group === true ? undefined : group.maxOps) ?? 256), maxDelayMs: Math.max(0, (group === true ? undefined : group.maxDelayMs) ?? 0) };
  }

  /**
   * BEGIN IMMEDIATE, then note the data version (another connection's commits change it). When
   * the connection is already inside a transaction someone else opened on the raw handle, what
   * this driver "commits" can still be rolled back by them — invisibly to data_version and
   * total_changes — so {@link changeToken} then never repeats.
   */
  private begin(): void {
    this.foreignTx = this.db.inTransaction;
    this.db.exec('BEGIN IMMEDIATE');
    this.txDataVersion = Number(this.stmt('PRAGMA data_version').pluck().get());
  }

  private totalChanges(): number {
    return Number(this.stmt('SELECT total_changes()').pluck().get());
  }

  /**
   * COMMIT, SAVEPOINT or RELEASE: rows they change (FTS5 flushing its buffered index data for
   * what this connection's transactions inserted) are those transactions' own consequence, not a
   * change behind a cache's back: they are set aside.
   */
  private finish(sql: 'COMMIT' | 'SAVEPOINT memauth_op' | 'RELEASE memauth_op'): void {
    const before = this.totalChanges();
    if (sql === 'COMMIT') this.db.exec('COMMIT');
    else this.stmt(sql).run();
    this.flushChanges += this.totalChanges() - before;
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

  /** Whether this driver coalesces transactions into group commits. */
  get groupCommit(): boolean {
    return this.group !== null;
  }

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
    } catch (e) {
      db.close();
      throw mapSqliteError(e, opts.path);
    }
    d.lane = joinLane(opts.path);
    return d;
  }

  private migrate(readonly: boolean): void {
    const version = Number(this.db.pragma('user_version', { simple: true }));
    const appId = Number(this.db.pragma('application_id', { simple: true }));
    const tables = Number((this.db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as Row).n);
    if (appId !== APPLICATION_ID && (version > 0 || tables > 0)) {
      throw new MemauthError('DATABASE_CORRUPT', `${this.path} is an SQLite database of another application, not a memauth database; point memauth at a new or memauth file`, { path: this.path, applicationId: appId });
    }
    if (version > MIGRATIONS.length) {
      throw new MemauthError('DATABASE_CORRUPT', `${this.path} has schema version ${version}, newer than this memauth (${MIGRATIONS.length}); upgrade memauth`, { path: this.path });
    }
    if (readonly) return;
    for (let v = version; v < MIGRATIONS.length; v++) {
      const step = MIGRATIONS[v] as Migration;
      this.db.transaction(() => {
        if (typeof step === 'string') this.db.exec(step);
        else step(this.db);
        this.db.pragma(`application_id = ${APPLICATION_ID}`);
        this.db.pragma(`user_version = ${v + 1}`);
      }).immediate();
    }
  }

  private stmt(sql: string): Database.Statement {
    let s = this.stmts.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.stmts.set(sql, s);
    }
    return s;
  }

  private all(sql: string, ...params: unknown[]): Row[] {
    return this.stmt(sql).all(...params) as Row[];
  }

  private get(sql: string, ...params: unknown[]): Row | undefined {
    return this.stmt(sql).get(...params) as Row | undefined;
  }

  private run(sql: string, ...params: unknown[]): void {
    this.stmt(sql).run(...params);
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

  async transaction<T>(tenant: string, fn: (tx: StorageTx) => Promise<T>): Promise<T> {
    if (this.group !== null) {
      return new Promise<T>((resolve, reject) => {
        this.pending.push({ tenant, fn, resolve: resolve as (v: unknown) => void, reject });
        if (this.wake) this.wake();
        else if (this.batches === null) this.batches = this.runBatches();
      });
    }
    const run = async (): Promise<T> => {
      const release = await this.takeLane();
      try {
        // outside the transaction, as for group commit: a caller that turns BEGIN into a SAVEPOINT
        // (the formal check does) can then roll back past the tenant's first write
        if (!this.db.inTransaction) this.ensureIndexOutsideSavepoint(tenant);
        return await this.runOne(fn);
      } finally {
        release();
      }
    };
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => undefined);
    return p;
  }

  /** Wait for the file's in-process write lane (see {@link FileLane}); resolves to its release. */
  private takeLane(): Promise<() => void> {
    if (this.lane === null) throw new MemauthError('DATABASE_UNAVAILABLE', `${this.path} is closed`, { path: this.path });
    return this.lane.acquire(LOCK_WAIT_MS, this.path);
  }

  /** One transaction of its own: BEGIN IMMEDIATE, the body, COMMIT (ROLLBACK when it throws). */
  private async runOne<T>(fn: (tx: StorageTx) => Promise<T>): Promise<T> {
    try {
      this.begin();
    } catch (e) {
      // only a transaction this BEGIN left open; never one the caller opened on the raw handle
      if (this.db.inTransaction && !this.foreignTx) this.db.exec('ROLLBACK');
      throw mapSqliteError(e, this.path);
    }
    this.inTx = true;
    const changes = this.totalChanges();
    let bodyDone = false;
    try {
      const out = await fn(this);
      bodyDone = true;
      this.finish('COMMIT');
      return out;
    } catch (e) {
      if (bodyDone || this.totalChanges() !== changes) this.rollbacks += 1;
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      throw mapSqliteError(e, this.path);
    } finally {
      this.inTx = false;
    }
  }

  /**
   * Make sure the tenant has its search index table before the transaction (group commit: before
   * the job's SAVEPOINT). SQLite cannot ROLLBACK TO a savepoint past the creation of an FTS5 table that was
   * written in it (the next SAVEPOINT or COMMIT fails with "SQL logic error", failing the batch),
   * and a job that fails is rolled back to its savepoint. An empty index table changes nothing a
   * read can see: its rows are set aside from {@link changeToken} like FTS5's flushes.
   */
  private ensureIndexOutsideSavepoint(tenant: string): void {
    if (tenant === '' || this.indexes.tableOf(tenant) !== null) return;
    const before = this.totalChanges();
    this.indexes.ensure(tenant);
    this.flushChanges += this.totalChanges() - before;
  }

  /** Group commit: run batches until no transaction is waiting. */
  private async runBatches(): Promise<void> {
    try {
      while (this.pending.length > 0) await this.runBatch();
    } finally {
      this.batches = null;
    }
  }

  /** Resolves when a transaction is queued or after `ms`. */
  private waitForWork(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
    });
  }

  /**
   * One group commit: BEGIN IMMEDIATE, then each queued transaction in its own SAVEPOINT
   * (released on success, rolled back alone on failure), then one COMMIT. Callers are resolved
   * only after that COMMIT returned; a failed COMMIT rejects every transaction of the batch.
   */
  private async runBatch(): Promise<void> {
    let release: () => void;
    try {
      release = await this.takeLane();
    } catch (e) {
      for (const job of this.pending.splice(0)) job.reject(e);
      return;
    }
    try {
      await this.runBatchLocked();
    } finally {
      release();
    }
  }

  /** {@link runBatch} with the file's lane held. */
  private async runBatchLocked(): Promise<void> {
    const { maxOps, maxDelayMs } = this.group as { maxOps: number; maxDelayMs: number };
    try {
      this.begin();
    } catch (e) {
      // only a transaction this BEGIN left open; never one the caller opened on the raw handle
      if (this.db.inTransaction && !this.foreignTx) this.db.exec('ROLLBACK');
      const err = mapSqliteError(e, this.path);
      for (const job of this.pending.splice(0)) job.reject(err);
      return;
    }
    const started = Date.now();
    const done: Array<{ job: GroupJob; value: unknown }> = [];
    let ops = 0;
    let broken: unknown = null;
    while (ops < maxOps) {
      let job = this.pending.shift();
      if (job === undefined) {
        const left = maxDelayMs - (Date.now() - started);
        if (left <= 0) break;
        await this.waitForWork(left);
        job = this.pending.shift();
        if (job === undefined) break;
      }
      ops += 1;
      try {
        this.ensureIndexOutsideSavepoint(job.tenant);
        this.finish('SAVEPOINT memauth_op');
      } catch (e) {
        broken = e;
        job.reject(mapSqliteError(e, this.path));
        break;
      }
      this.inTx = true;
      const changes = this.totalChanges();
      const indexes = this.indexes.created;
      try {
        const value = await job.fn(this);
        this.inTx = false;
        this.finish('RELEASE memauth_op');
        done.push({ job, value });
      } catch (e) {
        this.inTx = false;
        if (this.totalChanges() !== changes) this.rollbacks += 1;
        job.reject(mapSqliteError(e, this.path));
        if (!this.db.inTransaction) {
          broken = e;
          break;
        }
        if (this.indexes.created !== indexes) {
          // it created (and wrote) another tenant's index table: SQLite cannot roll back to a
          // savepoint past that (the next SAVEPOINT or COMMIT would fail), so the batch ends here
          broken = new MemauthError('DATABASE_LOCKED', `${this.path}: a transaction of this group commit failed after creating a tenant's search index; the whole group was rolled back, retry`, { path: this.path });
          break;
        }
        try {
          this.stmt('ROLLBACK TO memauth_op').run();
          this.stmt('RELEASE memauth_op').run();
        } catch (e2) {
          broken = e2;
          break;
        }
      }
    }
    try {
      if (broken !== null) throw broken;
      this.finish('COMMIT');
    } catch (e) {
      this.rollbacks += 1;
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      const err = mapSqliteError(e, this.path);
      for (const d of done) d.job.reject(err);
      return;
    }
    for (const d of done) d.job.resolve(d.value);
  }

  async close(): Promise<void> {
    await this.queue;
    while (this.batches !== null) await this.batches;
    if (this.db.open) this.db.close();
    if (this.lane !== null) {
      leaveLane(this.lane);
      this.lane = null;
    }
  }

  // ---- bulk rows (memauth migrate) ----

  /** Every row of every table from one read snapshot (see {@link RowStore.exportRows}). */
  async exportRows(sink: (table: TableName, rows: CopyRow[]) => Promise<void>, batchSize = 1000): Promise<void> {
    const run = async (): Promise<void> => {
      const release = await this.takeLane();
      try {
        await exportAll();
      } finally {
        release();
      }
    };
    const exportAll = async (): Promise<void> => {
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
    };
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => undefined);
    return p;
  }

  /** Insert copied rows in one transaction; refuses a store that holds any row (see {@link RowStore.importRows}). */
  async importRows(fill: (put: (table: TableName, rows: readonly CopyRow[]) => Promise<void>) => Promise<void>): Promise<void> {
    await this.transaction('', async () => {
      const n = TABLE_NAMES.reduce((sum, t) => sum + Number((this.get(`SELECT count(*) AS n FROM ${t}`) as Row).n), 0);
      if (n > 0) throw new MemauthError('INVALID_ARGUMENT', `${this.path} already holds ${n} rows; migrate into a new, empty database`, { path: this.path, rows: n });
      await fill(async (table, rows) => {
        const cols = TABLE_COLUMNS[table];
        const ins = this.stmt(`INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`);
        for (const r of rows) {
          const info = ins.run(...cols.map((c) => r[c] ?? null));
          if (table === 'records' && r.status === 'active') this.indexes.insert(String(r.tenant), info.lastInsertRowid, r.content as string, scopeKeyOf(String(r.tenant), String(r.scope)));
        }
      });
    });
  }

  // ---- reads ----
  async getPolicyText(version: string): Promise<string | null> {
    const r = this.get('SELECT text FROM policies WHERE version = ?', version);
    return r ? str(r.text) : null;
  }

  async getPrincipal(tenant: string, id: string): Promise<Principal | null> {
    const r = this.get('SELECT * FROM principals WHERE tenant = ? AND id = ?', tenant, id);
    return r ? toPrincipal(r) : null;
  }

  async listPrincipals(tenant: string): Promise<Principal[]> {
    return this.all('SELECT * FROM principals WHERE tenant = ? ORDER BY created_at, id', tenant).map(toPrincipal);
  }

  private edgesFor(ids: readonly string[]): Map<string, DerivationEdge[]> {
    const out = new Map<string, DerivationEdge[]>();
    for (const id of ids) out.set(id, []);
    if (ids.length === 0) return out;
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const q = inList(chunk);
      const rows = this.all(`SELECT record_id, from_id, transform, kind FROM derivations WHERE record_id IN (${q.sql}) ORDER BY record_id, ord`, ...q.params);
      for (const r of rows) out.get(str(r.record_id))?.push({ from: str(r.from_id), transform: str(r.transform) as Transform, kind: str(r.kind) as EdgeKind });
    }
    return out;
  }

  private recordsFromRows(rows: Row[], now?: string): MemoryRecord[] {
    const edges = this.edgesFor(rows.map((r) => str(r.id)));
    return rows.map((r) => toRecord(r, edges.get(str(r.id)) ?? [], now));
  }

  async getRecords(tenant: string, ids: readonly string[]): Promise<MemoryRecord[]> {
    if (ids.length === 0) return [];
    const out: Row[] = [];
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const q = inList(chunk);
      // `+tenant`: look ids up in the primary key; with a longer IN list the planner would otherwise
      // pick the tenant index and scan every record of the tenant
      out.push(...this.all(`SELECT * FROM records WHERE +tenant = ? AND id IN (${q.sql}) ORDER BY id`, tenant, ...q.params));
    }
    // by id, like one chunk (PostgreSQL returns the same order)
    if (ids.length > 500) out.sort((a, b) => (str(a.id) < str(b.id) ? -1 : str(a.id) > str(b.id) ? 1 : 0));
    return this.recordsFromRows(out);
  }

  async listRecords(tenant: string, opts: ListRecordsOptions): Promise<MemoryRecord[]> {
    const where = ['tenant = ?'];
    const params: unknown[] = [tenant];
    if (opts.scope !== undefined) {
      where.push('scope = ?');
      params.push(opts.scope);
    }
    if (!opts.includeDeleted) where.push("status = 'active'");
    const rows = this.all(`SELECT * FROM records WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id LIMIT ? OFFSET ?`, ...params, opts.limit, opts.offset ?? 0);
    return this.recordsFromRows(rows);
  }

  async listRecordsAfter(tenant: string, afterId: string | null, limit: number): Promise<MemoryRecord[]> {
    // `+tenant`: walk the id index in order (the tenant index would sort the whole tenant per page)
    const rows = afterId === null ? this.all('SELECT * FROM records WHERE +tenant = ? ORDER BY id LIMIT ?', tenant, limit) : this.all('SELECT * FROM records WHERE +tenant = ? AND id > ? ORDER BY id LIMIT ?', tenant, afterId, limit);
    return this.recordsFromRows(rows);
  }

  /**
   * Full-text search, top `limit` by BM25 (ties by id) among the tenant's scope's active,
   * unexpired records. It runs on the tenant's own FTS5 table (search-index.ts): BM25's
   * statistics — row count, average length, document frequencies — are the tenant's alone (over
   * all its scopes), so no score or order depends on another tenant's data (docs/design.md § Search and
   * tenant isolation). The index matches only this tenant's scope (scope_key, weight 0 in BM25),
   * so it ranks the matches alone — scoring a match reads only the index and its small docsize
   * row — and only the best `window` of them are looked up in `records` (one row probe per
   * in-scope match was over a third of a search at 1M records). A LEFT JOIN keeps the
   * candidates the row filter drops (expired; the tenant and scope are checked again), so one
   * statement — one snapshot — tells whether the window decided the answer: it did when the
   * index had no more matches, or when the `limit`-th accepted hit scores strictly better than
   * the window's worst candidate (every match outside the window scores at least that, so none
   * can enter the top `limit`, not even by the id tie-break). Otherwise the window grows ×4 and
   * the statement runs again; the answer is exactly the one of ranking every match.
   */
  async search(tenant: string, scope: string, query: string, limit: number, now: string): Promise<SearchHit[]> {
    const q = ftsQuery(query);
    if (q === null || limit < 1) return [];
    const table = this.indexes.tableOf(tenant);
    if (table === null) return [];
    const sql = `SELECT f.score AS score, r.* FROM
           (SELECT rowid AS fts_rowid, bm25(${table}, 1.0, 0.0) AS score FROM ${table} WHERE ${table} MATCH ? ORDER BY score LIMIT ?) AS f
         LEFT JOIN records r ON r.rowid = f.fts_rowid AND r.tenant = ? AND r.scope = ? AND r.status = 'active' AND (r.expires_at IS NULL OR r.expires_at > ?)
         ORDER BY f.score, r.id`;
    const match = `scope_key : "${scopeKeyOf(tenant, scope)}" AND content : (${q})`;
    let window = Math.max(2 * limit, limit + 16);
    for (;;) {
      const rows = this.indexes.stmt(sql).all(match, window, tenant, scope, now) as Row[];
      const hits = rows.filter((r) => r.id !== null && r.id !== undefined).slice(0, limit);
      const complete = rows.length < window;
      if (!complete) {
        const worst = Number((rows[rows.length - 1] as Row).score);
        const kth = hits.length === limit ? Number((hits[limit - 1] as Row).score) : Number.POSITIVE_INFINITY;
        if (!(kth < worst)) {
          window *= 4;
          continue;
        }
      }
      const recs = this.recordsFromRows(hits, now);
      return recs.map((record, i) => ({ record, score: -Number((hits[i] as Row).score) }));
    }
  }

  async lineage(tenant: string, ids: readonly string[]): Promise<Map<string, DerivationEdge[]>> {
    return walkLineage((batch) => this.getRecords(tenant, batch), ids);
  }

  async corroborationsFor(tenant: string, recordIds: readonly string[]): Promise<Corroboration[]> {
    if (recordIds.length === 0) return [];
    const out: Corroboration[] = [];
    for (let i = 0; i < recordIds.length; i += 500) {
      const chunk = recordIds.slice(i, i + 500);
      const q = inList(chunk);
      const rows = this.all(`SELECT * FROM corroborations WHERE tenant = ? AND record_id IN (${q.sql}) ORDER BY at, id`, tenant, ...q.params);
      out.push(...rows.map(toCorroboration));
    }
    return out;
  }

  async getConfirmation(tenant: string, id: string): Promise<Confirmation | null> {
    const r = this.get('SELECT * FROM confirmations WHERE tenant = ? AND id = ?', tenant, id);
    return r ? toConfirmation(r) : null;
  }

  async listConfirmations(tenant: string, actionType: string, argsHash: string, now: string): Promise<Confirmation[]> {
    return this.all('SELECT * FROM confirmations WHERE tenant = ? AND action_type = ? AND args_hash = ? AND expires_at > ? ORDER BY created_at, id', tenant, actionType, argsHash, now).map(toConfirmation);
  }

  async confirmationUses(tenant: string, ids: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const id of ids) out.set(id, 0);
    const unique = [...out.keys()];
    for (let i = 0; i < unique.length; i += 500) {
      const q = inList(unique.slice(i, i + 500));
      for (const r of this.all(`SELECT confirmation_id, count(*) AS n FROM confirmation_uses WHERE tenant = ? AND confirmation_id IN (${q.sql}) GROUP BY confirmation_id`, tenant, ...q.params)) {
        out.set(str(r.confirmation_id), Number(r.n));
      }
    }
    return out;
  }

  async sessionExists(tenant: string, sessionId: string): Promise<boolean> {
    return this.get('SELECT 1 AS x FROM sessions WHERE tenant = ? AND id = ?', tenant, sessionId) !== undefined;
  }

  async sessionOwner(tenant: string, sessionId: string): Promise<{ owner: string | null } | null> {
    const r = this.get('SELECT owner FROM sessions WHERE tenant = ? AND id = ?', tenant, sessionId);
    return r === undefined ? null : { owner: r.owner === null ? null : str(r.owner) };
  }

  async sessionReads(tenant: string, sessionId: string): Promise<string[]> {
    return this.all('SELECT record_id FROM session_reads WHERE tenant = ? AND session_id = ? ORDER BY first_read_at, record_id', tenant, sessionId).map((r) => str(r.record_id));
  }

  async getDecision(tenant: string, id: string): Promise<Decision | null> {
    const r = this.get('SELECT body FROM decisions WHERE tenant = ? AND id = ?', tenant, id);
    return r ? (JSON.parse(str(r.body)) as Decision) : null;
  }

  async listDecisions(tenant: string, limit: number): Promise<Decision[]> {
    return this.all('SELECT body FROM decisions WHERE tenant = ? ORDER BY at DESC, id LIMIT ?', tenant, limit).map((r) => JSON.parse(str(r.body)) as Decision);
  }

  async auditHead(tenant: string): Promise<{ seq: number; hash: string } | null> {
    const r = this.get('SELECT seq, hash FROM audit WHERE tenant = ? ORDER BY seq DESC LIMIT 1', tenant);
    return r ? { seq: Number(r.seq), hash: str(r.hash) } : null;
  }

  async auditRange(tenant: string, fromSeq: number, toSeq: number): Promise<AuditEntry[]> {
    return this.all('SELECT * FROM audit WHERE tenant = ? AND seq >= ? AND seq <= ? ORDER BY seq', tenant, fromSeq, toSeq).map(toAudit);
  }

  async auditEntriesNaming(tenant: string, ops: readonly AuditOp[], name: { readonly field: 'principalId' | 'tokenId'; readonly value: string } | null): Promise<AuditEntry[]> {
    const out: AuditEntry[] = [];
    // one indexed look-up per op (index audit_op: tenant, op, seq); the payload is JSON text
    for (const op of new Set(ops)) {
      const rows = name === null
        ? this.all('SELECT * FROM audit WHERE tenant = ? AND op = ? ORDER BY seq', tenant, op)
        : this.all("SELECT * FROM audit WHERE tenant = ? AND op = ? AND json_extract(payload, '$.' || ?) = ? ORDER BY seq", tenant, op, name.field, name.value);
      for (const r of rows) out.push(toAudit(r));
    }
    return out.sort((a, b) => a.seq - b.seq);
  }

  async auditHasPolicy(tenant: string, policyVersion: string): Promise<boolean> {
    return this.get("SELECT 1 AS x FROM audit WHERE tenant = ? AND op = 'policy' AND policy_version = ? LIMIT 1", tenant, policyVersion) !== undefined;
  }

  async latestCheckpoint(tenant: string): Promise<Checkpoint | null> {
    const r = this.get('SELECT * FROM checkpoints WHERE tenant = ? ORDER BY seq DESC, at DESC LIMIT 1', tenant);
    return r ? toCheckpoint(r) : null;
  }

  async tenants(): Promise<string[]> {
    const sql = 'SELECT tenant FROM audit UNION SELECT tenant FROM principals UNION SELECT coalesce(tenant, ?) AS tenant FROM tokens ORDER BY tenant';
    return this.all(sql, ADMIN_CHAIN).map((r) => str(r.tenant));
  }

  async tenantContentKey(tenant: string): Promise<string | null> {
    const r = this.get('SELECT content_key FROM tenant_keys WHERE tenant = ?', tenant);
    return r ? str(r.content_key) : null;
  }

  // ---- writes (inside transaction) ----
  private assertTx(): void {
    if (!this.inTx) throw new Error('memauth internal: write outside a transaction');
  }

  async putPolicyText(version: string, text: string, at: string): Promise<void> {
    this.assertTx();
    if (this.get('SELECT 1 AS x FROM policies WHERE version = ?', version) === undefined) this.run('INSERT INTO policies (version, text, created_at) VALUES (?, ?, ?)', version, text, at);
  }

  async insertPrincipal(p: Principal): Promise<void> {
    this.assertTx();
    this.run('INSERT INTO principals (tenant, id, kind, max_authority, domain, created_at) VALUES (?, ?, ?, ?, ?, ?)', p.tenant, p.id, p.kind, p.maxAuthority, p.domain, p.createdAt);
  }

  async insertRecord(r: MemoryRecord): Promise<void> {
    this.assertTx();
    const { lastInsertRowid } = this.stmt(
      `INSERT INTO records (id, tenant, scope, content, content_hash, created_at, expires_at, origin_authority, origin_principal,
        origin_source, origin_written_at, taint_lowest, taint_channels, taint_sources, taint_oldest_source_at, policy_version,
        write_reason, audit_seq, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active')`,
    ).run(
      r.id, r.tenant, r.scope, r.content, r.contentHash, r.createdAt, r.expiresAt, r.origin.authority, r.origin.principalId,
      r.origin.sourceRef, r.origin.writtenAt, r.taint.lowestAuthority, JSON.stringify(r.taint.channels), JSON.stringify(r.taint.sources),
      r.taint.oldestSourceAt, r.audit.policyVersion, r.audit.writeReason, r.audit.seq,
    );
    r.derivedFrom.forEach((e, i) => this.run('INSERT INTO derivations (record_id, ord, from_id, transform, kind) VALUES (?, ?, ?, ?, ?)', r.id, i, e.from, e.transform, e.kind));
    this.indexes.insert(r.tenant, lastInsertRowid, r.content, scopeKeyOf(r.tenant, r.scope));
  }

  async eraseRecord(tenant: string, id: string, at: string): Promise<void> {
    this.assertTx();
    const row = this.get('SELECT rowid FROM records WHERE tenant = ? AND id = ?', tenant, id);
    if (!row) return;
    this.indexes.erase(tenant, row.rowid as number | bigint);
    this.run("UPDATE records SET content = NULL, status = 'deleted', deleted_at = ? WHERE tenant = ? AND id = ?", at, tenant, id);
  }

  async insertCorroboration(c: Corroboration, auditSeq: number): Promise<void> {
    this.assertTx();
    this.run('INSERT INTO corroborations (id, tenant, record_id, principal_id, authority, domain, evidence_ref, at, audit_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', c.id, c.tenant, c.recordId, c.principalId, c.authority, c.domain, c.evidenceRef, c.at, auditSeq);
  }

  async insertConfirmation(c: Confirmation, auditSeq: number): Promise<void> {
    this.assertTx();
    this.run(
      'INSERT INTO confirmations (id, tenant, principal_id, action_type, resource, args_hash, args, memory_ids, expires_at, max_uses, created_at, audit_seq, usable_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      c.id, c.tenant, c.principalId, c.actionType, c.resource, c.argsHash, c.args === null ? null : JSON.stringify(c.args),
      c.memoryIds === null ? null : JSON.stringify(c.memoryIds), c.expiresAt, c.maxUses, c.createdAt, auditSeq,
      c.usableBy === undefined || c.usableBy === null ? null : JSON.stringify(c.usableBy),
    );
  }

  async insertConfirmationUse(tenant: string, confirmationId: string, decisionId: string, at: string): Promise<void> {
    this.assertTx();
    this.run('INSERT INTO confirmation_uses (tenant, confirmation_id, decision_id, at) VALUES (?, ?, ?, ?)', tenant, confirmationId, decisionId, at);
  }

  async ensureSession(tenant: string, sessionId: string, at: string, owner: string | null = null): Promise<string | null> {
    this.assertTx();
    this.run('INSERT OR IGNORE INTO sessions (tenant, id, created_at, owner) VALUES (?, ?, ?, ?)', tenant, sessionId, at, owner);
    return (await this.sessionOwner(tenant, sessionId))?.owner ?? null;
  }

  async addSessionReads(tenant: string, sessionId: string, recordIds: readonly string[], at: string): Promise<void> {
    this.assertTx();
    for (const id of recordIds) this.run('INSERT OR IGNORE INTO session_reads (tenant, session_id, record_id, first_read_at) VALUES (?, ?, ?, ?)', tenant, sessionId, id, at);
  }

  async insertDecision(d: Decision): Promise<void> {
    this.assertTx();
    this.run('INSERT INTO decisions (id, tenant, session_id, at, outcome, body, audit_seq) VALUES (?, ?, ?, ?, ?, ?, ?)', d.id, d.tenant, d.sessionId, d.at, d.outcome, JSON.stringify(d), d.auditSeq);
  }

  async appendAudit(e: AuditEntry): Promise<void> {
    this.assertTx();
    this.run('INSERT INTO audit (tenant, seq, prev_hash, op, payload, policy_version, hash) VALUES (?, ?, ?, ?, ?, ?, ?)', e.tenant, e.seq, e.prevHash, e.op, payloadJson(e), e.policyVersion, e.hash);
  }

  // ---- tokens: written inside a transaction on the token's chain, with their audit entries ----
  async putToken(t: TokenRow): Promise<void> {
    this.assertTx();
    this.run('INSERT INTO tokens (id, tenant, principal_id, hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL)', t.id, t.tenant, t.principalId, t.hash, t.createdAt);
  }

  async markTokenRevoked(id: string, at: string): Promise<boolean> {
    this.assertTx();
    const r = this.get('SELECT revoked_at FROM tokens WHERE id = ?', id);
    if (!r || r.revoked_at !== null) return false;
    this.run('UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', at, id);
    return true;
  }

  async findToken(by: { readonly id: string } | { readonly hash: string }): Promise<TokenRow | null> {
    const r = 'id' in by ? this.get('SELECT * FROM tokens WHERE id = ?', by.id) : this.get('SELECT * FROM tokens WHERE hash = ?', by.hash);
    return r ? toToken(r) : null;
  }

  async listTokens(tenant: string | null): Promise<TokenRow[]> {
    const rows = tenant === null ? this.all('SELECT * FROM tokens WHERE tenant IS NULL ORDER BY created_at, id') : this.all('SELECT * FROM tokens WHERE tenant = ? ORDER BY created_at, id', tenant);
    return rows.map(toToken);
  }

  // ---- review notes (append-only) ----
  async insertReviewNote(n: ReviewNoteRow): Promise<void> {
    await this.transaction(n.tenant, async () => {
      this.run('INSERT INTO review_notes (id, tenant, decision_id, verdict, by_principal, note, at) VALUES (?, ?, ?, ?, ?, ?, ?)', n.id, n.tenant, n.decisionId, n.verdict, n.by, n.note, n.at);
    });
  }

  async listReviewNotes(tenant: string): Promise<ReviewNoteRow[]> {
    return this.all('SELECT * FROM review_notes WHERE tenant = ? ORDER BY at, id', tenant).map(toReviewNote);
  }

  async insertCheckpoint(c: Checkpoint): Promise<void> {
    this.assertTx();
    if (this.get('SELECT 1 AS x FROM checkpoints WHERE tenant = ? AND seq = ? AND at = ?', c.tenant, c.seq, c.at) === undefined) {
      this.run('INSERT INTO checkpoints (tenant, seq, hash, at, public_key, signature) VALUES (?, ?, ?, ?, ?, ?)', c.tenant, c.seq, c.hash, c.at, c.publicKey, c.signature);
    }
  }

  async ensureTenantContentKey(tenant: string, keyHex: string, at: string): Promise<string> {
    this.assertTx();
    this.run('INSERT INTO tenant_keys (tenant, content_key, created_at) VALUES (?, ?, ?) ON CONFLICT (tenant) DO NOTHING', tenant, keyHex, at);
    return str((this.get('SELECT content_key FROM tenant_keys WHERE tenant = ?', tenant) as Row).content_key);
  }
}
