/**
 * How the statements of one group-commit batch (./group-commit.ts) reach PostgreSQL with few
 * round trips. The `pg` client sends one statement and waits for its answer before the next, so
 * every statement is a round trip; in a batch most of them are appends whose answer nobody needs.
 *
 * - **Deferred appends.** A plain multi-row `INSERT … VALUES` into `audit`, `records`,
 *   `derivations` or `decisions` ({@link deferrable}) is not sent when the logical transaction
 *   makes it: it is kept, rendered as SQL text with its values as escaped literals, and sent with
 *   the next statement that needs an answer (a read, any other write) or with the COMMIT — all the
 *   kept statements and that statement in one simple-protocol query, one round trip. These
 *   inserts cannot fail once the API built them (fresh random ids, the next sequence number read
 *   under the tenant's lock, no triggers on insert); if one fails all the same — a broken
 *   invariant, a lost connection, a full disk — the whole batch is rejected and nothing of it is
 *   stored, as when its COMMIT fails ({@link BatchExecutor.broken}).
 * - **Savepoints on demand.** A logical transaction gets its SAVEPOINT only when it first sends a
 *   statement to the server, in the same round trip as the deferred appends before it (the
 *   batch's first with BEGIN); one that only appends needs none: when it throws, its kept appends
 *   are dropped ({@link BatchExecutor.endJob}).
 * - **Reads answered once per batch**, and reads that nearly always follow each other sent together
 *   in one round trip: ./kept-reads.ts says which, and why a kept answer is the one PostgreSQL
 *   would give. Any statement other than a read or an append to `audit` or `decisions` forgets
 *   them, and so does a job that fails.
 *
 * Reads and the other writes run as before: named prepared statements with bound parameters.
 *
 * May import: pg, core/errors, ../rows.js, ../sql/*, ./errors.js, ./kept-reads.js, ./native.js.
 */
import pg from 'pg';
import type { Row } from '../rows.js';
import { type Stmt, postgresDialect } from '../sql/dialect.js';
import type { SqlExecutor } from '../sql/reader.js';
import { MemauthError } from '../../core/errors.js';
import { type PostgresTarget, mapPgError, where } from './errors.js';
import { KeptReads } from './kept-reads.js';
import { pgExecutor } from './native.js';

/** The appends that may be deferred: a plain `INSERT INTO <table> (<columns>) VALUES ($n, …), …` (a value may be a lowercase word literal), nothing else. */
const VALUE = String.raw`(\$\d+|'[a-z]+')`;
const TUPLE = String.raw`\(${VALUE}(, ${VALUE})*\)`;
const DEFERRABLE = new RegExp(String.raw`^INSERT INTO (audit|records|derivations|decisions) \([a-z_,\s]+\) VALUES ${TUPLE}(, ${TUPLE})*$`);

/** Whether `s` is one of the appends a batch defers (see the module header). */
export const deferrable = (s: Stmt): boolean => DEFERRABLE.test(s.text);

/**
 * `pg.escapeLiteral(s)`, character for character (each `'` and backslash doubled, and ` E'…'` when `s`
 * holds a backslash), in native string operations: `pg` builds it one character at a time, which
 * for the audit payloads of a batch costs more than the rest of rendering it.
 */
export function escapeLiteral(s: string): string {
  const quoted = s.includes("'") ? s.replaceAll("'", "''") : s;
  return s.includes('\\') ? ` E'${quoted.replaceAll('\\', '\\\\')}'` : `'${quoted}'`;
}

/**
 * `values` as a PostgreSQL array literal inside an escaped SQL string (`'{"a","b"}'`, to be cast
 * with `::text[]`), each element quoted and its `"` and backslashes escaped as `pg` does for a
 * bound array parameter (PostgreSQL docs § 8.15.6 Array Input and Output Syntax).
 */
export function sqlArrayLiteral(values: ReadonlyArray<string | number>): string {
  const items = values.map((v) => (typeof v === 'number' ? String(v) : `"${v.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`));
  return escapeLiteral(`{${items.join(',')}}`);
}

const plainArray = (v: readonly unknown[]): v is ReadonlyArray<string | number> => v.every((x) => (typeof x === 'string' && !x.includes('\u0000')) || (typeof x === 'number' && Number.isFinite(x)));

/**
 * `v` as an SQL literal of unknown type (coerced to the column's type, as a text-format bound
 * parameter is), or null when it is not one of the plain values rendered here (it is then bound
 * as a parameter instead). A string holding NUL (which would end the query text) is not rendered;
 * an array of strings or finite numbers is rendered as an array literal ({@link sqlArrayLiteral}).
 */
export function sqlLiteral(v: unknown): string | null {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'string') return v.includes('\u0000') ? null : escapeLiteral(v);
  if (typeof v === 'number') return Number.isFinite(v) ? `'${String(v)}'` : null;
  if (typeof v === 'bigint') return `'${v.toString()}'`;
  if (typeof v === 'boolean') return v ? "'true'" : "'false'";
  if (Array.isArray(v)) return plainArray(v) ? sqlArrayLiteral(v) : null;
  return null;
}

/** `s` as one SQL text with its values inlined as literals, or null when a value cannot be. */
export function renderStmt(s: Stmt): string | null {
  const lits = s.values.map(sqlLiteral);
  if (lits.some((l) => l === null)) return null;
  let bad = false;
  const text = s.text.replace(/\$(\d+)/g, (_, n: string) => {
    const lit = lits[Number(n) - 1];
    if (lit === undefined || lit === null) bad = true;
    return lit ?? '';
  });
  return bad ? null : text;
}

/** Appends that leave every kept read true (see the module header). */
const KEEPS_READS = /^INSERT INTO (audit|decisions) /;
/** A statement that only reads (a SELECT or WITH without a data-modifying keyword or a row lock). */
const ONLY_READS = /^\s*(SELECT|WITH)\b/i;
const WRITES = /\b(INSERT|UPDATE|DELETE|MERGE|TRUNCATE|FOR\s+(NO\s+KEY\s+)?UPDATE|FOR\s+(KEY\s+)?SHARE|nextval|setval|pg_advisory\w*)\b/i;
const leavesReads = (s: Stmt): boolean => (deferrable(s) && KEEPS_READS.test(s.text)) || (ONLY_READS.test(s.text) && !WRITES.test(s.text));

const NEXT_SAVEPOINT = 'RELEASE SAVEPOINT memauth_op; SAVEPOINT memauth_op';

/** The {@link SqlExecutor} of one batch on one client, after `BEGIN; <lock>; SAVEPOINT memauth_op` (see the module header). */
export class BatchExecutor implements SqlExecutor {
  /** the kept appends, in order, with the job that made each. */
  private pending: Array<{ job: number; sql: string }> = [];
  private job = 0;
  /** the job that owns the current savepoint: the first job's is taken with BEGIN (./group-commit.ts). */
  private savepointOf = 0;
  private readonly direct: SqlExecutor;
  /** set when sending kept appends failed: the batch must be rolled back and every job of it rejected. */
  broken: unknown = null;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly target: PostgresTarget,
    private readonly kept: KeptReads = new KeptReads(),
  ) {
    this.direct = pgExecutor(client, target);
  }

  /** Job `job` (increasing) starts: its statements follow. */
  startJob(job: number): void {
    this.job = job;
  }

  /**
   * The current job ended; when it failed its kept appends are dropped.
   * @returns whether it must be rolled back to its savepoint (it had sent statements).
   */
  endJob(failed: boolean): boolean {
    if (!failed) return false;
    this.kept.forget();
    this.pending = this.pending.filter((p) => p.job !== this.job);
    return this.savepointOf === this.job;
  }

  async all(s: Stmt): Promise<Row[]> {
    const hit = this.kept.get(s);
    if (hit !== undefined) return hit;
    if (!leavesReads(s)) this.kept.forget();
    await this.sendPending();
    const together = leavesReads(s) ? this.kept.together(s) : [];
    if (together.length > 0 && (await this.readTogether(together))) {
      const answer = this.kept.get(s);
      if (answer !== undefined) return answer;
    }
    const rows = await this.direct.all(s);
    this.kept.keep(s, rows);
    return rows;
  }

  /**
   * The reads `stmts` in one round trip (a simple query, values inlined), their answers kept.
   * @returns false when a value cannot be inlined (nothing was sent).
   * @throws the mapped error of a failed read: it fails the calling job only, as the read alone
   *   would have.
   */
  private async readTogether(stmts: readonly Stmt[]): Promise<boolean> {
    const sqls = stmts.map(renderStmt);
    if (sqls.some((x) => x === null)) return false;
    const res = (await this.client.query(sqls.join(';\n')).catch((e: unknown) => {
      throw mapPgError(e, this.target);
    })) as pg.QueryResult | pg.QueryResult[];
    const all = Array.isArray(res) ? res : [res];
    stmts.forEach((st, i) => this.kept.keep(st, (all[i]?.rows ?? []) as Row[]));
    return true;
  }

  async run(stmts: ReadonlyArray<Stmt | null>): Promise<void> {
    for (const s of stmts) {
      if (s === null) continue;
      if (!leavesReads(s)) this.kept.forget();
      const sql = deferrable(s) ? renderStmt(s) : null;
      if (sql !== null) this.pending.push({ job: this.job, sql });
      else await this.all(s);
    }
  }

  /**
   * Send the kept appends with `tail` (e.g. COMMIT) in one round trip.
   * @returns the command tag of the last statement sent (`COMMIT`, or `ROLLBACK` when PostgreSQL
   *   ended an aborted transaction).
   * @throws MemauthError `DATABASE_UNAVAILABLE` (or the mapped error) when PostgreSQL refused
   *   what was sent; {@link broken} is then set.
   */
  async finish(tail: string): Promise<string> {
    const res = await this.send([...this.pending.map((p) => p.sql), tail]);
    this.pending = [];
    return res;
  }

  /** Before a statement of the current job: the other jobs' kept appends, its savepoint, its own kept appends. */
  private async sendPending(): Promise<void> {
    const needSavepoint = this.savepointOf !== this.job;
    if (!needSavepoint && this.pending.length === 0) return;
    const others = this.pending.filter((p) => p.job !== this.job).map((p) => p.sql);
    const own = this.pending.filter((p) => p.job === this.job).map((p) => p.sql);
    const savepoint = needSavepoint ? [NEXT_SAVEPOINT] : [];
    await this.send([...others, ...savepoint, ...own]);
    this.pending = [];
    this.savepointOf = this.job;
  }

  private async send(sqls: readonly string[]): Promise<string> {
    if (this.broken !== null) throw this.broken;
    try {
      const res = (await this.client.query(sqls.join(';\n'))) as pg.QueryResult | pg.QueryResult[];
      const last = Array.isArray(res) ? res[res.length - 1] : res;
      return last?.command ?? '';
    } catch (e) {
      const mapped = mapPgError(e, this.target);
      const msg = e instanceof Error ? e.message : String(e);
      this.broken =
        mapped instanceof MemauthError
          ? mapped
          : new MemauthError('DATABASE_UNAVAILABLE', `${where(this.target)}: a statement of this batch failed (${msg}); nothing of the batch was stored, retry`, {}, { cause: e });
      throw this.broken;
    }
  }
}
