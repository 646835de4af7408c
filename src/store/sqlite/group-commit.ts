/**
 * Group commit for the SQLite driver (see {@link SqliteOptions.groupCommit} in ./driver.ts):
 * concurrent transactions run inside one BEGIN IMMEDIATE … COMMIT, each in its own SAVEPOINT (a
 * transaction that throws rolls back only itself). Every caller's promise resolves only after
 * the COMMIT that includes its transaction; a failed COMMIT rejects every transaction of the batch.
 *
 * May import: core/errors, ../driver.js, ./native.js, ./transactions.js.
 */
import { MemauthError } from '../../core/errors.js';
import type { StorageTx } from '../driver.js';
import { mapSqliteError } from './native.js';
import type { SqliteTransactions } from './transactions.js';

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

interface GroupJob {
  readonly tenant: string;
  readonly fn: (tx: StorageTx) => Promise<unknown>;
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: unknown) => void;
}

/** The queue of transactions waiting for a batch, and the batches run over it. */
export class GroupCommit {
  private readonly maxOps: number;
  private readonly maxDelayMs: number;
  private readonly pending: GroupJob[] = [];
  private batches: Promise<void> | null = null;
  private wake: (() => void) | null = null;

  constructor(
    private readonly txs: SqliteTransactions,
    opts: true | GroupCommitOptions,
  ) {
    this.maxOps = Math.max(1, (opts === true ? undefined : opts.maxOps) ?? 256);
    this.maxDelayMs = Math.max(0, (opts === true ? undefined : opts.maxDelayMs) ?? 0);
  }

  /** Queue `fn`; resolves after the COMMIT of the batch that ran it. */
  transaction<T>(tenant: string, fn: (tx: StorageTx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ tenant, fn, resolve: resolve as (v: unknown) => void, reject });
      if (this.wake) this.wake();
      else if (this.batches === null) this.batches = this.runBatches();
    });
  }

  /** Resolves when no batch is running. */
  async idle(): Promise<void> {
    while (this.batches !== null) await this.batches;
  }

  /** Run batches until no transaction is waiting. */
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
      release = await this.txs.takeLane();
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
    try {
      this.txs.begin();
    } catch (err) {
      for (const job of this.pending.splice(0)) job.reject(err);
      return;
    }
    const done: Array<{ job: GroupJob; value: unknown }> = [];
    let broken: unknown = null;
    try {
      broken = await this.runJobs(done);
      if (broken !== null) throw broken;
      this.txs.finish('COMMIT');
    } catch (e) {
      this.txs.rollback();
      const err = mapSqliteError(e, this.txs.path);
      for (const d of done) d.job.reject(err);
      return;
    }
    for (const d of done) d.job.resolve(d.value);
  }

  /** The batch's jobs, up to maxOps or until the queue stays idle; what broke the batch, or null. */
  private async runJobs(done: Array<{ job: GroupJob; value: unknown }>): Promise<unknown> {
    const started = Date.now();
    for (let ops = 0; ops < this.maxOps; ops++) {
      let job = this.pending.shift();
      if (job === undefined) {
        const left = this.maxDelayMs - (Date.now() - started);
        if (left <= 0) return null;
        await this.waitForWork(left);
        job = this.pending.shift();
        if (job === undefined) return null;
      }
      const broken = await this.runJob(job, done);
      if (broken !== null) return broken;
    }
    return null;
  }

  /** One job in its SAVEPOINT: released on success, rolled back alone on failure; what broke the batch, or null. */
  private async runJob(job: GroupJob, done: Array<{ job: GroupJob; value: unknown }>): Promise<unknown> {
    const { txs } = this;
    try {
      txs.ensureIndexOutsideSavepoint(job.tenant);
      txs.finish('SAVEPOINT memauth_op');
    } catch (e) {
      job.reject(mapSqliteError(e, txs.path));
      return e;
    }
    const changes = txs.totalChanges();
    const indexes = txs.indexes.created;
    const tx = txs.newTx();
    try {
      const value = await job.fn(tx);
      tx.end();
      txs.finish('RELEASE memauth_op');
      done.push({ job, value });
      return null;
    } catch (e) {
      tx.end();
      if (txs.totalChanges() !== changes) txs.rollbacks += 1;
      job.reject(mapSqliteError(e, txs.path));
      return this.rollbackJob(e, indexes);
    }
  }

  /** After job error `e`: back to the job's SAVEPOINT; what broke the batch instead, or null. */
  private rollbackJob(e: unknown, indexesBefore: number): unknown {
    const { txs } = this;
    // the job's error ended the whole transaction: the batch is lost with it
    if (!txs.sql.db.inTransaction) return e;
    if (txs.indexes.created !== indexesBefore) {
      // it created (and wrote) another tenant's index table: SQLite cannot roll back to a
      // savepoint past that (the next SAVEPOINT or COMMIT would fail), so the batch ends here
      return new MemauthError('DATABASE_LOCKED', `${txs.path}: a transaction of this group commit failed after creating a tenant's search index; the whole group was rolled back, retry`, {
        path: txs.path,
      });
    }
    try {
      txs.sql.stmt('ROLLBACK TO memauth_op').run();
      txs.sql.stmt('RELEASE memauth_op').run();
      return null;
    } catch (e2) {
      return e2;
    }
  }
}
