/**
 * PostgreSQL storage driver (docs/design.md § Shape of the code: "PostgreSQL for scale"). The only
 * module of memauth that imports `pg`; reach it through the `memauth/postgres` subpath.
 *
 * Several stateless memauth processes can share one PostgreSQL database. Each tenant has one
 * audit chain; {@link PostgresDriver.transaction} takes a transaction-level advisory lock on the
 * tenant (`pg_advisory_xact_lock(hashtextextended(tenant))`) before anything else, so appends to
 * one chain are serialised across every process — no fork, no duplicate or missing sequence
 * number, no lost write — while transactions of different tenants run in parallel.
 *
 * The statements it shares with SQLite live in src/store/sql/; here: the pool, the advisory
 * lock, bulk copy, and (./native.ts) tsvector search and recursive lineage.
 */
import pg from 'pg';
import { MemauthError } from '../../core/errors.js';
import type { ReviewNoteRow, StorageDriver, StorageReader, StorageTx } from '../driver.js';
import type { Row } from '../rows.js';
import { postgresDialect } from '../sql/dialect.js';
import { SqlReader } from '../sql/reader.js';
import { insertReviewNote } from '../sql/statements.js';
import { type CopyRow, type RowStore, TABLE_COLUMNS, TABLE_KEYS, TABLE_NAMES, type TableName, copyRow } from '../tables.js';
import { type PostgresTarget, describeTarget, mapPgError, where } from './errors.js';
import { PgGroupCommit, type PgGroupCommitOptions } from './group-commit.js';
import { pgExecutor, pgNative } from './native.js';
import { type PostgresCapabilities, checkVersion, detect, migrate } from './setup.js';
import { PrefetchHints } from './prefetch.js';
import { tokenReads } from './token-reads.js';
import { PgTx } from './tx.js';
import { PgVectors } from './vectors.js';
import type { VectorStore } from '../vector.js';

export { mapPgError, type PostgresTarget } from './errors.js';
export type { PostgresCapabilities } from './setup.js';
export type { PgGroupCommitOptions } from './group-commit.js';

/** Options for {@link PostgresDriver.connect}. */
export interface PostgresOptions {
  /**
   * Schema holding memauth's tables (created if missing). Default: the connection's
   * `search_path` (normally `public`). Lowercase letters, digits and `_`, starting with a letter or `_`.
   */
  readonly schema?: string;
  /** Pool size: connections this process keeps open at most. Default 10. */
  readonly poolSize?: number;
  /** `application_name` shown in `pg_stat_activity`. Default `memauth`. */
  readonly applicationName?: string;
  /** Create or upgrade the schema (under an advisory lock, so concurrent processes do not race). Default true. */
  readonly migrate?: boolean;
  /**
   * Whether a database (schema) without memauth's tables may be initialised. Default true; with
   * false it is refused with `INVALID_ARGUMENT` (the CLI's data commands: a typo in the URL must
   * not start an empty store). An existing older schema is still upgraded when `migrate` is on.
   */
  readonly create?: boolean;
  /** Called with one line of information (e.g. that pgvector is absent). Default: ignored. */
  readonly onNotice?: (message: string) => void;
  /** Milliseconds to wait for a connection before `DATABASE_UNAVAILABLE`. Default 10000. */
  readonly connectTimeoutMs?: number;
  /**
   * Group commit (default on): the transactions of one tenant that queue up in this process while
   * one runs are run together in the next PostgreSQL transaction — one BEGIN, one advisory lock,
   * one COMMIT — a transaction that throws rolls back only itself (to its SAVEPOINT), at most
   * `maxOps` (default 256) per COMMIT. Appends are sent with the next statement or the COMMIT, and
   * some reads answered once per batch (./batch-exec.ts). Every caller's promise resolves only
   * after the COMMIT that includes its transaction, so an acknowledged write is as durable as
   * without group commit; if that COMMIT fails (or the connection is lost, or a deferred append
   * fails), every transaction of the batch is rejected and none of it is stored. `false`: one
   * PostgreSQL transaction per call.
   */
  readonly groupCommit?: boolean | PgGroupCommitOptions;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The PostgreSQL {@link StorageDriver}: a `pg.Pool`; one pooled client per transaction; reads
 * outside transactions go through the pool. Create it with {@link PostgresDriver.connect}.
 *
 * Transactions run at READ COMMITTED and start with `pg_advisory_xact_lock` on a 64-bit hash of
 * the tenant (and schema). Under READ COMMITTED each statement takes a fresh snapshot, so once
 * the lock is held the chain head read next is the newest committed one; the lock is released
 * at commit, after the commit is visible. SERIALIZABLE would also prevent forks, but by
 * aborting one of two concurrent appenders, which every caller would then have to retry; the
 * lock makes them wait their turn instead. Tenants whose keys differ never wait on each other
 * (a 64-bit hash collision only makes two tenants share a queue). The primary key
 * `(tenant, seq)` of the audit table is the backstop: a second writer at the same seq fails.
 *
 * @example
 * ```ts
 * import { openMemory } from 'memauth';
 * import { PostgresDriver } from 'memauth/postgres';
 * const driver = await PostgresDriver.connect('postgres://memauth@db.internal:5432/memauth');
 * const mem = await openMemory({ driver });
 * ```
 */
export class PostgresDriver extends SqlReader implements StorageDriver, RowStore {
  readonly kind = 'postgres';
  readonly capabilities: PostgresCapabilities;
  readonly target: PostgresTarget;
  private readonly pool: pg.Pool;
  private readonly lockPrefix: string;
  private readonly tenantQueues = new Map<string, Promise<void>>();
  private readonly group: PgGroupCommit | null;
  private readonly guarded = new WeakSet<pg.PoolClient>();
  private closed = false;
  /** the vector index (pgvector or exact scan); null when it cannot be used ({@link vectorNote} says why). */
  vectors: VectorStore | null = null;
  /** one line on vector search for `memauth init`/`serve`. */
  vectorNote = 'vector search: not available';

  private constructor(pool: pg.Pool, target: PostgresTarget, capabilities: PostgresCapabilities, group: PostgresOptions['groupCommit']) {
    super(pgExecutor(pool, target), postgresDialect, pgNative);
    this.target = target;
    this.pool = pool;
    this.capabilities = capabilities;
    this.lockPrefix = `memauth:${target.schema ?? ''}:`;
    const host = { target, connect: () => this.unsafeClient(), lockLiteral: (tenant: string) => pg.escapeLiteral(this.lockPrefix + tenant), hints: new PrefetchHints() };
    this.group = group === false ? null : new PgGroupCommit(host, group === undefined ? true : group);
  }

  /**
   * Connect to PostgreSQL, create or upgrade memauth's schema (unless `migrate: false`) and
   * detect the server's capabilities.
   *
   * @param url - `postgres://user:password@host:port/database` (or `postgresql://…`); libpq
   *   environment variables (PGHOST, PGUSER, …) fill what it leaves out.
   * @throws MemauthError `DATABASE_UNAVAILABLE` (server not reachable — the message names host
   *   and port —, login refused, database missing, no privilege), `DATABASE_CORRUPT` (the schema
   *   holds another application's tables, or was written by a newer memauth),
   *   `INVALID_ARGUMENT` (bad schema name or URL).
   */
  static async connect(url: string, opts: PostgresOptions = {}): Promise<PostgresDriver> {
    if (!/^postgres(ql)?:\/\//.test(url)) throw new MemauthError('INVALID_ARGUMENT', 'a PostgreSQL URL starts with postgres:// or postgresql://', { field: 'url' });
    const schema = opts.schema ?? null;
    if (schema !== null && !SCHEMA_NAME.test(schema))
      throw new MemauthError('INVALID_ARGUMENT', `schema name ${JSON.stringify(schema)}: use lowercase letters, digits and _, starting with a letter or _`, { field: 'schema' });
    const target = describeTarget(url, schema);
    const pool = new pg.Pool({
      connectionString: url,
      max: opts.poolSize ?? 10,
      application_name: opts.applicationName ?? 'memauth',
      connectionTimeoutMillis: opts.connectTimeoutMs ?? 10_000,
      ...(schema !== null ? { options: `-c search_path=${schema}` } : {}),
    });
    // an idle client that loses its server must not crash the process; the next query reports it
    pool.on('error', () => undefined);
    try {
      const version = await checkVersion(pool, target);
      if (version === 0 && opts.create === false) {
        throw new MemauthError('INVALID_ARGUMENT', `${where(target)}${schema !== null ? `, schema ${schema},` : ''} holds no memauth store; create it with: memauth init --database <url>`, {
          field: 'database',
        });
      }
      if (opts.migrate !== false) await migrate(pool, target);
      const capabilities = await detect(pool);
      const d = new PostgresDriver(pool, target, capabilities, opts.groupCommit);
      const v = await PgVectors.open(pool, (tenant, fn) =>
        d.onClient('BEGIN ISOLATION LEVEL READ COMMITTED', async (c) => {
          await d.lock(c, tenant);
          return fn(c);
        }),
      );
      d.vectors = v.vectors;
      d.vectorNote = v.vectors !== null ? v.vectors.note : `vector search: not available (${v.reason}); search is lexical`;
      if (v.vectors?.backend !== 'pgvector') opts.onNotice?.(d.vectorNote);
      return d;
    } catch (e) {
      await pool.end().catch(() => undefined);
      throw mapPgError(e, target);
    }
  }

  /**
   * Run `fn` in a transaction holding the tenant's audit-chain lock (`pg_advisory_xact_lock`)
   * from its first statement to commit; with group commit (the default) in its own SAVEPOINT of
   * a transaction shared with the tenant's other queued calls. Rolls back (to its savepoint) when
   * `fn` throws. Resolves only after the COMMIT that includes it.
   * @throws MemauthError `DATABASE_UNAVAILABLE` (also when the batch's COMMIT or connection
   *   failed: nothing of it was stored), `IMMUTABLE_FIELD`, `DATABASE_LOCKED`, or what `fn` throws.
   */
  async transaction<T>(tenant: string, fn: (tx: StorageTx) => Promise<T>): Promise<T> {
    if (this.closed) throw new MemauthError('CLOSED', 'this PostgreSQL driver is closed', {});
    if (this.group !== null) return this.group.transaction(tenant, fn);
    // Queue this process's transactions of one tenant here first: they would wait for each
    // other on the advisory lock anyway, and waiting in PostgreSQL would hold a pooled
    // connection each and lengthen the server's lock queue. Other tenants are not queued.
    const prev = this.tenantQueues.get(tenant) ?? Promise.resolve();
    const run = (): Promise<T> => this.locked(tenant, fn);
    const p = prev.then(run, run);
    const tail = p.then(
      () => undefined,
      () => undefined,
    );
    this.tenantQueues.set(tenant, tail);
    void tail.then(() => {
      if (this.tenantQueues.get(tenant) === tail) this.tenantQueues.delete(tenant);
    });
    return p;
  }

  private async locked<T>(tenant: string, fn: (tx: StorageTx) => Promise<T>): Promise<T> {
    return this.onClient('BEGIN ISOLATION LEVEL READ COMMITTED', async (client) => {
      const tx = new PgTx(pgExecutor(client, this.target), postgresDialect, pgNative);
      try {
        await this.lock(client, tenant);
        return await fn(tx);
      } finally {
        tx.end();
      }
    });
  }

  /** The reads of authenticating one bearer token, in one round trip (./token-reads.ts). */
  async tokenReads(hash: string): Promise<StorageReader> {
    const query = async (sql: string): Promise<Row[][]> => {
      try {
        const res = (await this.pool.query(sql)) as unknown as pg.QueryResult[];
        return res.map((r) => r.rows as Row[]);
      } catch (e) {
        throw mapPgError(e, this.target);
      }
    };
    return tokenReads(hash, query, pgExecutor(this.pool, this.target), pgNative);
  }

  /** Take the tenant's audit-chain lock in the client's transaction (held until it ends). */
  private async lock(client: pg.PoolClient, tenant: string): Promise<void> {
    await client.query({ name: 'memauth_tenant_lock', text: 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', values: [this.lockPrefix + tenant] });
  }

  // ---- review notes (src/server/routes/review.ts): append-only ----

  async insertReviewNote(n: ReviewNoteRow): Promise<void> {
    await this.rows(insertReviewNote(postgresDialect, n));
  }

  /** Every row of every table from one REPEATABLE READ snapshot, through cursors (see {@link RowStore.exportRows}). */
  async exportRows(sink: (table: TableName, rows: CopyRow[]) => Promise<void>, batchSize = 1000): Promise<void> {
    await this.onClient('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', async (client) => {
      for (const t of TABLE_NAMES) {
        await client.query(`DECLARE memauth_export NO SCROLL CURSOR FOR SELECT ${TABLE_COLUMNS[t].join(', ')} FROM ${t} ORDER BY ${TABLE_KEYS[t].join(', ')}`);
        for (;;) {
          const r = await client.query(`FETCH ${Math.max(1, Math.floor(batchSize))} FROM memauth_export`);
          if (r.rows.length === 0) break;
          await sink(
            t,
            (r.rows as Row[]).map((x) => copyRow(t, x)),
          );
        }
        await client.query('CLOSE memauth_export');
      }
    });
  }

  /** Insert copied rows in one transaction; refuses a schema that holds any row (see {@link RowStore.importRows}). */
  async importRows(fill: (put: (table: TableName, rows: readonly CopyRow[]) => Promise<void>) => Promise<void>): Promise<void> {
    await this.onClient('BEGIN', async (client) => {
      const count = await client.query(`SELECT ${TABLE_NAMES.map((t) => `(SELECT count(*) FROM ${t})`).join(' + ')} AS n`);
      const n = Number((count.rows[0] as Row).n);
      if (n > 0)
        throw new MemauthError(
          'INVALID_ARGUMENT',
          `${where(this.target)}${this.target.schema !== null ? `, schema ${this.target.schema},` : ''} already holds ${n} rows; migrate into a new, empty database or schema`,
          { rows: n },
        );
      await fill(async (table, rows) => {
        const cols = TABLE_COLUMNS[table];
        const per = Math.max(1, Math.floor(30_000 / cols.length));
        for (let i = 0; i < rows.length; i += per) {
          const chunk = rows.slice(i, i + per);
          const values: unknown[] = [];
          const tuples = chunk.map((r) => `(${cols.map((c) => `$${values.push(r[c] ?? null)}`).join(', ')})`);
          await client.query({ text: `INSERT INTO ${table} (${cols.join(', ')}) VALUES ${tuples.join(', ')}`, values });
        }
      });
    });
  }

  /**
   * One transaction on a pooled client of its own: `begin`, then `fn`, then COMMIT; ROLLBACK and a mapped error when `fn`
   * throws. A client whose ROLLBACK fails is destroyed, not returned to the pool.
   */
  private async onClient<T>(begin: string, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.unsafeClient();
    let broken: Error | undefined;
    try {
      await client.query(begin);
      const out = await fn(client);
      await client.query('COMMIT');
      return out;
    } catch (e) {
      await client.query('ROLLBACK').catch((re: unknown) => {
        broken = re instanceof Error ? re : new Error(String(re));
      });
      throw mapPgError(e, this.target);
    } finally {
      client.release(broken);
    }
  }

  /** Close every pooled connection. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.group?.idle();
    await this.pool.end();
  }

  /**
   * A raw client for tools and tests that must reach under the API (tamper tests, `memauth
   * migrate`). Release it with `client.release()`.
   */
  async unsafeClient(): Promise<pg.PoolClient> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (e) {
      throw mapPgError(e, this.target);
    }
    // the pool listens for errors of idle clients only: a checked-out client whose server goes
    // away between two queries would otherwise end the process (the next query reports it)
    if (!this.guarded.has(client)) {
      client.on('error', () => undefined);
      this.guarded.add(client);
    }
    return client;
  }
}
