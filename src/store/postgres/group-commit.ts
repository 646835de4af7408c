/**
 * Group commit for the PostgreSQL driver (see {@link PostgresOptions.groupCommit} in ./driver.ts),
 * one lane per tenant: the transactions of one tenant that queue up while a batch runs are run
 * together in the next PostgreSQL transaction — one BEGIN, one `pg_advisory_xact_lock` on the
 * tenant's chain, one COMMIT — a transaction that throws rolls back only itself (to its SAVEPOINT,
 * or by dropping its appends not sent yet: ./batch-exec.ts). Every caller's promise resolves only
 * after the COMMIT that includes its transaction; a failed COMMIT (or a connection lost
 * mid-batch, or a deferred append that fails) rejects every transaction of the batch, and nothing
 * of it is stored. Tenants' lanes run in parallel, each on a pooled connection. The logical
 * transactions of a batch share a {@link BatchMemo} of append-only reads (./tx.ts) and one
 * {@link BatchExecutor} that sends their appends together with the next statement.
 *
 * May import: pg (types), core/errors, ../driver.js, ../rows.js, ../sql/dialect.js, ./batch-exec.js, ./errors.js, ./kept-reads.js, ./native.js, ./prefetch.js, ./tx.js.
 */
import type pg from 'pg';
import type { StorageTx } from '../driver.js';
import type { Row } from '../rows.js';
import { postgresDialect } from '../sql/dialect.js';
import { MemauthError } from '../../core/errors.js';
import { type PostgresTarget, mapPgError, where } from './errors.js';
import { BatchExecutor } from './batch-exec.js';
import { KeptReads } from './kept-reads.js';
import { pgNative } from './native.js';
import { type PrefetchHints } from './prefetch.js';
import { BatchMemo, PgTx } from './tx.js';

/** Group commit settings (see {@link PostgresOptions.groupCommit}). */
export interface PgGroupCommitOptions {
  /** COMMIT after at most this many logical transactions of one tenant. Default 256. */
  readonly maxOps?: number;
}

/** What a batch needs of the driver: a pooled client, and the advisory-lock key of a tenant. */
export interface BatchHost {
  readonly target: PostgresTarget;
  connect(): Promise<pg.PoolClient>;
  /** the tenant's lock key as an escaped SQL literal: `hashtextextended(<it>, 0)` is the lock the driver's non-batched transactions take too. */
  lockLiteral(tenant: string): string;
  /** what this driver's transactions read before, per tenant: read again with each BEGIN (./prefetch.ts). */
  readonly hints: PrefetchHints;
}

interface Job {
  readonly fn: (tx: StorageTx) => Promise<unknown>;
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: unknown) => void;
}

type Done = Array<{ job: Job; value: unknown }>;

/** The per-tenant queues of transactions waiting for a batch, and the batches run over them. */
export class PgGroupCommit {
  private readonly maxOps: number;
  private readonly lanes = new Map<string, Job[]>();
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly host: BatchHost,
    opts: true | PgGroupCommitOptions,
  ) {
    this.maxOps = Math.max(1, (opts === true ? undefined : opts.maxOps) ?? 256);
  }

  /** Queue `fn` on `tenant`'s lane; resolves after the COMMIT of the batch that ran it. */
  transaction<T>(tenant: string, fn: (tx: StorageTx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const job: Job = { fn, resolve: resolve as (v: unknown) => void, reject };
      const lane = this.lanes.get(tenant);
      if (lane !== undefined) lane.push(job);
      else {
        const fresh = [job];
        this.lanes.set(tenant, fresh);
        const run = this.runLane(tenant, fresh);
        this.running.add(run);
        void run.finally(() => this.running.delete(run));
      }
    });
  }

  /** Resolves when no batch is running (every queued transaction has settled). */
  async idle(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  /** Run batches of one tenant until its queue is empty. */
  private async runLane(tenant: string, pending: Job[]): Promise<void> {
    try {
      while (pending.length > 0) await this.runBatch(tenant, pending);
    } finally {
      this.lanes.delete(tenant);
    }
  }

  /**
   * One batch: BEGIN, the tenant lock, up to maxOps queued jobs, COMMIT (with the appends not sent yet);
   * callers resolved only after the COMMIT returned. When the batch cannot start (no connection,
   * BEGIN or the lock fails), every queued job is rejected with that error.
   */
  private async runBatch(tenant: string, pending: Job[]): Promise<void> {
    const { host } = this;
    const memo = new BatchMemo(host.hints);
    const kept = new KeptReads(host.hints.asked);
    let client: pg.PoolClient;
    try {
      client = await host.connect();
      await this.begin(client, tenant, memo, kept);
    } catch (e) {
      const err = mapPgError(e, host.target);
      for (const job of pending.splice(0)) job.reject(err);
      return;
    }
    const done: Done = [];
    let broken: Error | undefined;
    try {
      const exec = new BatchExecutor(client, host.target, kept);
      const failed = await this.runJobs(client, exec, memo, pending, done);
      if (failed !== null) throw failed;
      // COMMIT of a transaction aborted by an error some job caught and ignored answers ROLLBACK
      const end = await exec.finish('COMMIT');
      if (end !== 'COMMIT') throw new MemauthError('DATABASE_UNAVAILABLE', `${where(host.target)}: the batch's transaction was aborted by an earlier error; nothing of it was stored, retry`, {});
    } catch (e) {
      await client.query('ROLLBACK').catch((re: unknown) => {
        broken = re instanceof Error ? re : new Error(String(re));
      });
      const err = mapPgError(e, host.target);
      for (const d of done) d.job.reject(err);
      return;
    } finally {
      client.release(broken);
    }
    for (const d of done) d.job.resolve(d.value);
  }

  /**
   * BEGIN, the tenant's lock, the first job's SAVEPOINT and the prefetched reads (./prefetch.ts)
   * in one round trip (a simple query; values sent as escaped literals), their answers put into
   * `memo` and `kept`; a client that fails here is released (destroyed).
   */
  private async begin(client: pg.PoolClient, tenant: string, memo: BatchMemo, kept: KeptReads): Promise<void> {
    const prefetch = this.host.hints.statements(tenant, Date.now());
    const start = [`BEGIN ISOLATION LEVEL READ COMMITTED`, `SELECT pg_advisory_xact_lock(hashtextextended(${this.host.lockLiteral(tenant)}, 0))`, 'SAVEPOINT memauth_op'];
    try {
      const res = (await client.query([...start, ...prefetch.sql()].join(';\n'))) as unknown as pg.QueryResult[];
      prefetch.apply(
        memo,
        kept,
        res.slice(start.length).map((r) => r.rows as Row[]),
      );
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      client.release(e instanceof Error ? e : new Error(String(e)));
      throw e;
    }
  }

  /** The batch's jobs, up to maxOps or until the queue is empty; what broke the batch, or null. */
  private async runJobs(client: pg.PoolClient, exec: BatchExecutor, memo: BatchMemo, pending: Job[], done: Done): Promise<unknown> {
    for (let ops = 0; ops < this.maxOps; ops++) {
      const job = pending.shift();
      if (job === undefined) return null;
      exec.startJob(ops);
      const broken = await this.runJob(client, exec, job, memo, done);
      if (broken !== null) return broken;
    }
    return null;
  }

  /**
   * One job: kept on success; on failure rolled back alone (to its savepoint when it sent
   * statements, else its kept appends are dropped); what broke the batch, or null.
   */
  private async runJob(client: pg.PoolClient, exec: BatchExecutor, job: Job, memo: BatchMemo, done: Done): Promise<unknown> {
    const tx = new PgTx(exec, postgresDialect, pgNative).useMemo(memo);
    try {
      const value = await job.fn(tx);
      tx.end();
      if (exec.broken !== null) throw exec.broken;
      exec.endJob(false);
      done.push({ job, value });
      return null;
    } catch (e) {
      tx.end();
      memo.clear();
      job.reject(mapPgError(e, this.host.target));
      if (exec.broken !== null) return exec.broken;
      try {
        if (exec.endJob(true)) await client.query('ROLLBACK TO SAVEPOINT memauth_op');
        return null;
      } catch (e2) {
        return e2;
      }
    }
  }
}
