/**
 * PostgreSQL storage driver (docs/design.md § Shape of the code: "PostgreSQL for scale"). The only
 * module of memauth that imports `pg`; reach it through the `memauth/postgres` subpath.
 *
 * Several stateless memauth processes can share one PostgreSQL database. Each tenant has one
 * audit chain; {@link PostgresDriver.transaction} takes a transaction-level advisory lock on the
 * tenant (`pg_advisory_xact_lock(hashtextextended(tenant))`) before anything else, so appends to
 * one chain are serialised across every process — no fork, no duplicate or missing sequence
 * number, no lost write — while transactions of different tenants run in parallel.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { type AuditEntry, type AuditOp, type Checkpoint, payloadJson } from '../../core/audit.js';
import { MemauthError } from '../../core/errors.js';
import { ADMIN_CHAIN } from '../../core/identity.js';
import type { Confirmation, Corroboration, Decision, DerivationEdge, EdgeKind, MemoryRecord, Principal, Transform } from '../../core/types.js';
import type { ListRecordsOptions, ReviewNoteRow, SearchHit, StorageDriver, StorageReader, StorageTx, TokenRow } from '../driver.js';
import { type Row, searchTokens, str, toAudit, toCheckpoint, toConfirmation, toCorroboration, toPrincipal, toRecord, toReviewNote, toToken } from '../rows.js';
import { type CopyRow, type RowStore, TABLE_COLUMNS, TABLE_KEYS, TABLE_NAMES, type TableName, copyRow } from '../tables.js';
import { FTS_TEXT_FUNCTION, MIGRATIONS, VERSION_TABLE } from './schema.js';

/** What the driver needs of a pool or a checked-out client. */
interface Queryable {
  query(config: pg.QueryConfig): Promise<pg.QueryResult>;
}

/** Where a driver points, for messages: never the password. */
export interface PostgresTarget {
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
  readonly schema: string | null;
}

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
}

/** What the connected server offers memauth. */
export interface PostgresCapabilities {
  /** PostgreSQL server version, e.g. `15.18`. */
  readonly serverVersion: string;
  /** Full-text search: a generated `tsvector` column with a GIN index, 'simple' configuration. */
  readonly fullTextSearch: 'tsvector';
  /**
   * pgvector: whether the `vector` extension can be created on this server, and whether it is.
   * memauth has no embeddings API yet on any store, so this is reported only; without it
   * nothing is lost.
   */
  readonly vector: { readonly available: boolean; readonly installed: boolean; readonly version: string | null; readonly message: string };
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
/** First key of the two-int advisory lock memauth takes while migrating ('mema'); two-int keys do not overlap one-bigint keys. */
const MIGRATION_LOCK = 0x6d656d61;

function describeTarget(url: string, schema: string | null): PostgresTarget {
  try {
    const u = new URL(url);
    const hostParam = u.searchParams.get('host');
    return {
      host: decodeURIComponent(u.hostname) || hostParam || process.env.PGHOST || 'localhost',
      port: u.port !== '' ? Number(u.port) : Number(process.env.PGPORT ?? 5432),
      database: decodeURIComponent(u.pathname.replace(/^\//, '')) || process.env.PGDATABASE || decodeURIComponent(u.username) || 'postgres',
      user: decodeURIComponent(u.username) || process.env.PGUSER || 'postgres',
      schema,
    };
  } catch {
    return { host: 'localhost', port: 5432, database: '?', user: '?', schema };
  }
}

const where = (t: PostgresTarget): string => `PostgreSQL at ${t.host}:${t.port} (database ${JSON.stringify(t.database)}, user ${JSON.stringify(t.user)})`;

/**
 * Map an error from `pg` (or the network) to a MemauthError a person can act on.
 *
 * - connection refused / host not found / timeout / server starting or shutting down →
 *   `DATABASE_UNAVAILABLE`, naming host and port;
 * - authentication failure, missing database, missing privileges → `DATABASE_UNAVAILABLE`;
 * - a memauth trigger refusing a change → `IMMUTABLE_FIELD`;
 * - lock timeout, deadlock, serialization failure → `DATABASE_LOCKED`;
 * - a NUL character or invalid text → `INVALID_ARGUMENT`.
 * Anything else is returned unchanged.
 */
export function mapPgError(e: unknown, target: PostgresTarget): unknown {
  if (e instanceof MemauthError) return e;
  const code = String((e as { code?: unknown })?.code ?? '');
  const msg = e instanceof Error ? e.message : String(e);
  const details = { host: target.host, port: target.port, database: target.database, pgCode: code };
  if (msg.includes('memauth IMMUTABLE_FIELD')) {
    return new MemauthError('IMMUTABLE_FIELD', msg.replace(/^.*memauth IMMUTABLE_FIELD: /, ''), details, { cause: e });
  }
  if (['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOENT', 'EPIPE'].includes(code) || /timeout expired|Connection terminated/i.test(msg)) {
    return new MemauthError('DATABASE_UNAVAILABLE', `cannot reach ${where(target)}: ${code || msg}. Is the server running and listening there? Nothing was written.`, details, { cause: e });
  }
  if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300') {
    return new MemauthError('DATABASE_UNAVAILABLE', `${where(target)} is not accepting connections (${code}: ${msg}). Nothing was written.`, details, { cause: e });
  }
  if (code === '28P01' || code === '28000') {
    return new MemauthError('DATABASE_UNAVAILABLE', `${where(target)} refused the login (${msg}); check the user and password in the URL. Nothing was written.`, details, { cause: e });
  }
  if (code === '3D000') {
    return new MemauthError('DATABASE_UNAVAILABLE', `${where(target)}: the database does not exist (${msg}); create it first, e.g. createdb ${target.database}. Nothing was written.`, details, { cause: e });
  }
  if (code === '42501') {
    return new MemauthError('DATABASE_UNAVAILABLE', `${where(target)}: permission denied (${msg}); the role needs CREATE on the schema to migrate it, and SELECT/INSERT/UPDATE on memauth's tables. Nothing was written.`, details, { cause: e });
  }
  if (code === '55P03' || code === '40P01' || code === '40001') {
    return new MemauthError('DATABASE_LOCKED', `${where(target)}: ${msg} (${code}); retry`, details, { cause: e });
  }
  if (code === '22021' || code === '22P05' || code === '54000') {
    return new MemauthError('INVALID_ARGUMENT', `PostgreSQL cannot store this text (${msg})`, details, { cause: e });
  }
  return e;
}

/** Statement name for pg's per-connection prepared-statement cache. */
const stmtName = (sql: string): string => `m_${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`;

const recordCols = `id, tenant, scope, content, content_hash, created_at, expires_at, origin_authority, origin_principal, origin_source,
  origin_written_at, taint_lowest, taint_channels, taint_sources, taint_oldest_source_at, policy_version, write_reason, audit_seq, status, deleted_at`;

/** Reads, over the pool (outside transactions) or one client (inside). */
class PgReader implements StorageReader {
  constructor(
    protected readonly q: Queryable,
    readonly target: PostgresTarget,
  ) {}

  protected async rows(sql: string, values: unknown[] = []): Promise<Row[]> {
    this.check();
    try {
      return (await this.q.query({ name: stmtName(sql), text: sql, values })).rows as Row[];
    } catch (e) {
      throw mapPgError(e, this.target);
    }
  }

  protected async one(sql: string, values: unknown[] = []): Promise<Row | undefined> {
    return (await this.rows(sql, values))[0];
  }

  /** Overridden by the transaction to refuse use after it ended. */
  protected check(): void {}

  async getPolicyText(version: string): Promise<string | null> {
    const r = await this.one('SELECT text FROM policies WHERE version = $1', [version]);
    return r ? str(r.text) : null;
  }

  async getPrincipal(tenant: string, id: string): Promise<Principal | null> {
    const r = await this.one('SELECT * FROM principals WHERE tenant = $1 AND id = $2', [tenant, id]);
    return r ? toPrincipal(r) : null;
  }

  async listPrincipals(tenant: string): Promise<Principal[]> {
    return (await this.rows('SELECT * FROM principals WHERE tenant = $1 ORDER BY created_at, id', [tenant])).map(toPrincipal);
  }

  private async edgesFor(ids: readonly string[]): Promise<Map<string, DerivationEdge[]>> {
    const out = new Map<string, DerivationEdge[]>();
    for (const id of ids) out.set(id, []);
    if (ids.length === 0) return out;
    const rows = await this.rows('SELECT record_id, from_id, transform, kind FROM derivations WHERE record_id = ANY($1::text[]) ORDER BY record_id, ord', [ids]);
    for (const r of rows) out.get(str(r.record_id))?.push({ from: str(r.from_id), transform: str(r.transform) as Transform, kind: str(r.kind) as EdgeKind });
    return out;
  }

  private async recordsFromRows(rows: Row[], now?: string): Promise<MemoryRecord[]> {
    const edges = await this.edgesFor(rows.map((r) => str(r.id)));
    return rows.map((r) => toRecord(r, edges.get(str(r.id)) ?? [], now));
  }

  async getRecords(tenant: string, ids: readonly string[]): Promise<MemoryRecord[]> {
    if (ids.length === 0) return [];
    return this.recordsFromRows(await this.rows(`SELECT ${recordCols} FROM records WHERE tenant = $1 AND id = ANY($2::text[]) ORDER BY id`, [tenant, [...ids]]));
  }

  async listRecords(tenant: string, opts: ListRecordsOptions): Promise<MemoryRecord[]> {
    const rows = await this.rows(
      `SELECT ${recordCols} FROM records WHERE tenant = $1 AND ($2::text IS NULL OR scope = $2) AND ($3::boolean OR status = 'active')
       ORDER BY created_at DESC, id LIMIT $4 OFFSET $5`,
      [tenant, opts.scope ?? null, opts.includeDeleted === true, opts.limit, opts.offset ?? 0],
    );
    return this.recordsFromRows(rows);
  }

  /**
   * Full-text search with the same tokens as SQLite's: the query's words, OR-ed, matched against
   * the generated tsvector and ranked by `ts_rank` (higher is better).
   */
  async search(tenant: string, scope: string, query: string, limit: number, now: string): Promise<SearchHit[]> {
    const tokens = searchTokens(query);
    if (tokens.length === 0) return [];
    const rows = await this.rows(
      `WITH q AS (
         SELECT to_tsquery('simple', string_agg(quote_literal(lexeme), ' | ')) AS q
         FROM unnest(to_tsvector('simple', ${FTS_TEXT_FUNCTION}($1)))
       )
       SELECT ${recordCols.split(',').map((c) => `r.${c.trim()}`).join(', ')}, ts_rank(r.search, q.q) AS score
       FROM records r, q
       WHERE q.q IS NOT NULL AND r.search @@ q.q AND r.tenant = $2 AND r.scope = $3 AND r.status = 'active' AND (r.expires_at IS NULL OR r.expires_at > $4)
       ORDER BY score DESC, r.id LIMIT $5`,
      [tokens.join(' '), tenant, scope, now, limit],
    );
    const recs = await this.recordsFromRows(rows, now);
    return recs.map((record, i) => ({ record, score: Number((rows[i] as Row).score) }));
  }

  async lineage(tenant: string, ids: readonly string[]): Promise<Map<string, DerivationEdge[]>> {
    const out = new Map<string, DerivationEdge[]>();
    if (ids.length === 0) return out;
    // the lineage DAG in one statement; like the SQLite driver, it never leaves the tenant
    const rows = await this.rows(
      `WITH RECURSIVE l(id) AS (
         SELECT id FROM records WHERE tenant = $1 AND id = ANY($2::text[])
         UNION
         SELECT r.id FROM l JOIN derivations d ON d.record_id = l.id JOIN records r ON r.id = d.from_id AND r.tenant = $1
       )
       SELECT l.id, d.from_id, d.transform, d.kind FROM l LEFT JOIN derivations d ON d.record_id = l.id ORDER BY l.id, d.ord`,
      [tenant, [...new Set(ids)]],
    );
    for (const r of rows) {
      const id = str(r.id);
      const list = out.get(id) ?? [];
      if (r.from_id !== null) list.push({ from: str(r.from_id), transform: str(r.transform) as Transform, kind: str(r.kind) as EdgeKind });
      out.set(id, list);
    }
    return out;
  }

  async corroborationsFor(tenant: string, recordIds: readonly string[]): Promise<Corroboration[]> {
    if (recordIds.length === 0) return [];
    return (await this.rows('SELECT * FROM corroborations WHERE tenant = $1 AND record_id = ANY($2::text[]) ORDER BY at, id', [tenant, [...recordIds]])).map(toCorroboration);
  }

  async getConfirmation(tenant: string, id: string): Promise<Confirmation | null> {
    const r = await this.one('SELECT * FROM confirmations WHERE tenant = $1 AND id = $2', [tenant, id]);
    return r ? toConfirmation(r) : null;
  }

  async listConfirmations(tenant: string, actionType: string, argsHash: string, now: string): Promise<Confirmation[]> {
    return (await this.rows('SELECT * FROM confirmations WHERE tenant = $1 AND action_type = $2 AND args_hash = $3 AND expires_at > $4 ORDER BY created_at, id', [tenant, actionType, argsHash, now])).map(toConfirmation);
  }

  async confirmationUses(tenant: string, ids: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const id of ids) out.set(id, 0);
    if (ids.length === 0) return out;
    const rows = await this.rows('SELECT confirmation_id, count(*) AS n FROM confirmation_uses WHERE tenant = $1 AND confirmation_id = ANY($2::text[]) GROUP BY confirmation_id', [tenant, [...ids]]);
    for (const r of rows) out.set(str(r.confirmation_id), Number(r.n));
    return out;
  }

  async sessionExists(tenant: string, sessionId: string): Promise<boolean> {
    return (await this.one('SELECT 1 AS x FROM sessions WHERE tenant = $1 AND id = $2', [tenant, sessionId])) !== undefined;
  }

  async sessionOwner(tenant: string, sessionId: string): Promise<{ owner: string | null } | null> {
    const r = await this.one('SELECT owner FROM sessions WHERE tenant = $1 AND id = $2', [tenant, sessionId]);
    return r === undefined ? null : { owner: r.owner === null ? null : str(r.owner) };
  }

  async sessionReads(tenant: string, sessionId: string): Promise<string[]> {
    return (await this.rows('SELECT record_id FROM session_reads WHERE tenant = $1 AND session_id = $2 ORDER BY first_read_at, record_id', [tenant, sessionId])).map((r) => str(r.record_id));
  }

  async getDecision(tenant: string, id: string): Promise<Decision | null> {
    const r = await this.one('SELECT body FROM decisions WHERE tenant = $1 AND id = $2', [tenant, id]);
    return r ? (JSON.parse(str(r.body)) as Decision) : null;
  }

  async listDecisions(tenant: string, limit: number): Promise<Decision[]> {
    return (await this.rows('SELECT body FROM decisions WHERE tenant = $1 ORDER BY at DESC, id LIMIT $2', [tenant, limit])).map((r) => JSON.parse(str(r.body)) as Decision);
  }

  async auditHead(tenant: string): Promise<{ seq: number; hash: string } | null> {
    const r = await this.one('SELECT seq, hash FROM audit WHERE tenant = $1 ORDER BY seq DESC LIMIT 1', [tenant]);
    return r ? { seq: Number(r.seq), hash: str(r.hash) } : null;
  }

  async auditRange(tenant: string, fromSeq: number, toSeq: number): Promise<AuditEntry[]> {
    return (await this.rows('SELECT * FROM audit WHERE tenant = $1 AND seq >= $2 AND seq <= $3 ORDER BY seq', [tenant, fromSeq, toSeq])).map(toAudit);
  }

  async auditEntriesNaming(tenant: string, ops: readonly AuditOp[], name: { readonly field: 'principalId' | 'tokenId'; readonly value: string } | null): Promise<AuditEntry[]> {
    // index audit_op (tenant, op, seq); the payload is JSON text (never jsonb: see the schema)
    const rows = name === null
      ? await this.rows('SELECT * FROM audit WHERE tenant = $1 AND op = ANY($2::text[]) ORDER BY seq', [tenant, [...new Set(ops)]])
      : await this.rows('SELECT * FROM audit WHERE tenant = $1 AND op = ANY($2::text[]) AND (payload::json ->> $3) = $4 ORDER BY seq', [tenant, [...new Set(ops)], name.field, name.value]);
    return rows.map(toAudit);
  }

  async findToken(by: { readonly id: string } | { readonly hash: string }): Promise<TokenRow | null> {
    const r = 'id' in by ? await this.one('SELECT * FROM tokens WHERE id = $1', [by.id]) : await this.one('SELECT * FROM tokens WHERE hash = $1', [by.hash]);
    return r ? toToken(r) : null;
  }

  async listTokens(tenant: string | null): Promise<TokenRow[]> {
    const rows = tenant === null ? await this.rows('SELECT * FROM tokens WHERE tenant IS NULL ORDER BY created_at, id') : await this.rows('SELECT * FROM tokens WHERE tenant = $1 ORDER BY created_at, id', [tenant]);
    return rows.map(toToken);
  }

  async auditHasPolicy(tenant: string, policyVersion: string): Promise<boolean> {
    return (await this.one("SELECT 1 AS x FROM audit WHERE tenant = $1 AND op = 'policy' AND policy_version = $2 LIMIT 1", [tenant, policyVersion])) !== undefined;
  }

  async latestCheckpoint(tenant: string): Promise<Checkpoint | null> {
    const r = await this.one('SELECT * FROM checkpoints WHERE tenant = $1 ORDER BY seq DESC, at DESC LIMIT 1', [tenant]);
    return r ? toCheckpoint(r) : null;
  }

  async tenants(): Promise<string[]> {
    const sql = 'SELECT tenant FROM audit UNION SELECT tenant FROM principals UNION SELECT coalesce(tenant, $1) AS tenant FROM tokens ORDER BY tenant';
    return (await this.rows(sql, [ADMIN_CHAIN])).map((r) => str(r.tenant));
  }

  async tenantContentKey(tenant: string): Promise<string | null> {
    const r = await this.one('SELECT content_key FROM tenant_keys WHERE tenant = $1', [tenant]);
    return r ? str(r.content_key) : null;
  }
}

/** Writes, on the one client of a transaction that holds the tenant's advisory lock. */
class PgTx extends PgReader implements StorageTx {
  private ended = false;

  end(): void {
    this.ended = true;
  }

  protected override check(): void {
    if (this.ended) throw new Error('memauth internal: a transaction was used after it ended');
  }

  private async run(sql: string, values: unknown[]): Promise<void> {
    await this.rows(sql, values);
  }

  async putPolicyText(version: string, text: string, at: string): Promise<void> {
    // the policies table is shared by all tenants, whose transactions run in parallel: the
    // version is the hash of the text, so whichever insert wins stored the same row
    await this.run('INSERT INTO policies (version, text, created_at) VALUES ($1, $2, $3) ON CONFLICT (version) DO NOTHING', [version, text, at]);
  }

  async insertPrincipal(p: Principal): Promise<void> {
    await this.run('INSERT INTO principals (tenant, id, kind, max_authority, domain, created_at) VALUES ($1, $2, $3, $4, $5, $6)', [p.tenant, p.id, p.kind, p.maxAuthority, p.domain, p.createdAt]);
  }

  async insertRecord(r: MemoryRecord): Promise<void> {
    await this.run(
      `INSERT INTO records (id, tenant, scope, content, content_hash, created_at, expires_at, origin_authority, origin_principal,
        origin_source, origin_written_at, taint_lowest, taint_channels, taint_sources, taint_oldest_source_at, policy_version,
        write_reason, audit_seq, status) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, 'active')`,
      [
        r.id, r.tenant, r.scope, r.content, r.contentHash, r.createdAt, r.expiresAt, r.origin.authority, r.origin.principalId,
        r.origin.sourceRef, r.origin.writtenAt, r.taint.lowestAuthority, JSON.stringify(r.taint.channels), JSON.stringify(r.taint.sources),
        r.taint.oldestSourceAt, r.audit.policyVersion, r.audit.writeReason, r.audit.seq,
      ],
    );
    if (r.derivedFrom.length > 0) {
      await this.run(
        'INSERT INTO derivations (record_id, ord, from_id, transform, kind) SELECT $1, e.ord - 1, e.from_id, e.transform, e.kind FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS e(from_id, transform, kind, ord)',
        [r.id, r.derivedFrom.map((e) => e.from), r.derivedFrom.map((e) => e.transform), r.derivedFrom.map((e) => e.kind)],
      );
    }
  }

  async eraseRecord(tenant: string, id: string, at: string): Promise<void> {
    // the generated tsvector is recomputed from the NULL content in the same statement
    await this.run("UPDATE records SET content = NULL, status = 'deleted', deleted_at = $1 WHERE tenant = $2 AND id = $3 AND status = 'active'", [at, tenant, id]);
  }

  async insertCorroboration(c: Corroboration, auditSeq: number): Promise<void> {
    await this.run('INSERT INTO corroborations (id, tenant, record_id, principal_id, authority, domain, evidence_ref, at, audit_seq) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)', [
      c.id, c.tenant, c.recordId, c.principalId, c.authority, c.domain, c.evidenceRef, c.at, auditSeq,
    ]);
  }

  async insertConfirmation(c: Confirmation, auditSeq: number): Promise<void> {
    await this.run(
      'INSERT INTO confirmations (id, tenant, principal_id, action_type, resource, args_hash, args, memory_ids, expires_at, max_uses, created_at, audit_seq, usable_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)',
      [
        c.id, c.tenant, c.principalId, c.actionType, c.resource, c.argsHash, c.args === null ? null : JSON.stringify(c.args),
        c.memoryIds === null ? null : JSON.stringify(c.memoryIds), c.expiresAt, c.maxUses, c.createdAt, auditSeq,
        c.usableBy === undefined || c.usableBy === null ? null : JSON.stringify(c.usableBy),
      ],
    );
  }

  async insertConfirmationUse(tenant: string, confirmationId: string, decisionId: string, at: string): Promise<void> {
    await this.run('INSERT INTO confirmation_uses (tenant, confirmation_id, decision_id, at) VALUES ($1, $2, $3, $4)', [tenant, confirmationId, decisionId, at]);
  }

  async ensureSession(tenant: string, sessionId: string, at: string, owner: string | null = null): Promise<string | null> {
    await this.run('INSERT INTO sessions (tenant, id, created_at, owner) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING', [tenant, sessionId, at, owner]);
    return (await this.sessionOwner(tenant, sessionId))?.owner ?? null;
  }

  async addSessionReads(tenant: string, sessionId: string, recordIds: readonly string[], at: string): Promise<void> {
    if (recordIds.length === 0) return;
    await this.run(
      'INSERT INTO session_reads (tenant, session_id, record_id, first_read_at) SELECT $1, $2, x, $4 FROM unnest($3::text[]) AS x ON CONFLICT DO NOTHING',
      [tenant, sessionId, [...new Set(recordIds)], at],
    );
  }

  async insertDecision(d: Decision): Promise<void> {
    await this.run('INSERT INTO decisions (id, tenant, session_id, at, outcome, body, audit_seq) VALUES ($1, $2, $3, $4, $5, $6, $7)', [d.id, d.tenant, d.sessionId, d.at, d.outcome, JSON.stringify(d), d.auditSeq]);
  }

  async appendAudit(e: AuditEntry): Promise<void> {
    await this.run('INSERT INTO audit (tenant, seq, prev_hash, op, payload, policy_version, hash) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
      e.tenant, e.seq, e.prevHash, e.op, payloadJson(e), e.policyVersion, e.hash,
    ]);
  }

  async putToken(t: TokenRow): Promise<void> {
    await this.run('INSERT INTO tokens (id, tenant, principal_id, hash, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, NULL)', [t.id, t.tenant, t.principalId, t.hash, t.createdAt]);
  }

  async markTokenRevoked(id: string, at: string): Promise<boolean> {
    // the row lock makes two concurrent revocations (or rotations) of one token exclusive
    const row = await this.one('SELECT revoked_at FROM tokens WHERE id = $1 FOR UPDATE', [id]);
    if (!row || row.revoked_at !== null) return false;
    await this.run('UPDATE tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [at, id]);
    return true;
  }

  async insertCheckpoint(c: Checkpoint): Promise<void> {
    await this.run('INSERT INTO checkpoints (tenant, seq, hash, at, public_key, signature) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING', [c.tenant, c.seq, c.hash, c.at, c.publicKey, c.signature]);
  }

  async ensureTenantContentKey(tenant: string, keyHex: string, at: string): Promise<string> {
    await this.run('INSERT INTO tenant_keys (tenant, content_key, created_at) VALUES ($1, $2, $3) ON CONFLICT (tenant) DO NOTHING', [tenant, keyHex, at]);
    return str(((await this.one('SELECT content_key FROM tenant_keys WHERE tenant = $1', [tenant])) as Row).content_key);
  }
}

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
export class PostgresDriver extends PgReader implements StorageDriver, RowStore {
  readonly kind = 'postgres';
  readonly capabilities: PostgresCapabilities;
  private readonly pool: pg.Pool;
  private readonly lockPrefix: string;
  private readonly tenantQueues = new Map<string, Promise<void>>();
  private closed = false;

  private constructor(pool: pg.Pool, target: PostgresTarget, capabilities: PostgresCapabilities) {
    super(pool, target);
    this.pool = pool;
    this.capabilities = capabilities;
    this.lockPrefix = `memauth:${target.schema ?? ''}:`;
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
    if (schema !== null && !SCHEMA_NAME.test(schema)) throw new MemauthError('INVALID_ARGUMENT', `schema name ${JSON.stringify(schema)}: use lowercase letters, digits and _, starting with a letter or _`, { field: 'schema' });
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
        throw new MemauthError('INVALID_ARGUMENT', `${where(target)}${schema !== null ? `, schema ${schema},` : ''} holds no memauth store; create it with: memauth init --database <url>`, { field: 'database' });
      }
      if (opts.migrate !== false) await migrate(pool, target);
      const capabilities = await detect(pool);
      if (!capabilities.vector.available) opts.onNotice?.(capabilities.vector.message);
      return new PostgresDriver(pool, target, capabilities);
    } catch (e) {
      await pool.end().catch(() => undefined);
      throw mapPgError(e, target);
    }
  }

  /**
   * Run `fn` in one transaction on one pooled client, holding the tenant's audit-chain lock
   * (`pg_advisory_xact_lock`) from its first statement to commit. Rolls back when `fn` throws.
   * @throws MemauthError `DATABASE_UNAVAILABLE`, `IMMUTABLE_FIELD`, `DATABASE_LOCKED`, or what `fn` throws.
   */
  async transaction<T>(tenant: string, fn: (tx: StorageTx) => Promise<T>): Promise<T> {
    if (this.closed) throw new MemauthError('CLOSED', 'this PostgreSQL driver is closed', {});
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
      const tx = new PgTx(client, this.target);
      try {
        await client.query({ name: 'memauth_tenant_lock', text: 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', values: [this.lockPrefix + tenant] });
        return await fn(tx);
      } finally {
        tx.end();
      }
    });
  }

  // ---- review notes (src/server/routes/review.ts): append-only ----

  async insertReviewNote(n: ReviewNoteRow): Promise<void> {
    await this.rows('INSERT INTO review_notes (id, tenant, decision_id, verdict, by_principal, note, at) VALUES ($1, $2, $3, $4, $5, $6, $7)', [n.id, n.tenant, n.decisionId, n.verdict, n.by, n.note, n.at]);
  }

  async listReviewNotes(tenant: string): Promise<ReviewNoteRow[]> {
    return (await this.rows('SELECT * FROM review_notes WHERE tenant = $1 ORDER BY at, id', [tenant])).map(toReviewNote);
  }

  /** Every row of every table from one REPEATABLE READ snapshot, through cursors (see {@link RowStore.exportRows}). */
  async exportRows(sink: (table: TableName, rows: CopyRow[]) => Promise<void>, batchSize = 1000): Promise<void> {
    await this.onClient('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', async (client) => {
      for (const t of TABLE_NAMES) {
        await client.query(`DECLARE memauth_export NO SCROLL CURSOR FOR SELECT ${TABLE_COLUMNS[t].join(', ')} FROM ${t} ORDER BY ${TABLE_KEYS[t].join(', ')}`);
        for (;;) {
          const r = await client.query(`FETCH ${Math.max(1, Math.floor(batchSize))} FROM memauth_export`);
          if (r.rows.length === 0) break;
          await sink(t, (r.rows as Row[]).map((x) => copyRow(t, x)));
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
      if (n > 0) throw new MemauthError('INVALID_ARGUMENT', `${where(this.target)}${this.target.schema !== null ? `, schema ${this.target.schema},` : ''} already holds ${n} rows; migrate into a new, empty database or schema`, { rows: n });
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
    await this.pool.end();
  }

  /**
   * A raw client for tools and tests that must reach under the API (tamper tests, `memauth
   * migrate`). Release it with `client.release()`.
   */
  async unsafeClient(): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (e) {
      throw mapPgError(e, this.target);
    }
  }
}

async function currentVersion(c: Queryable): Promise<number | null> {
  const exists = await c.query({ text: 'SELECT to_regclass($1) IS NOT NULL AS x', values: [VERSION_TABLE] });
  if (exists.rows[0]?.x !== true) return null;
  const r = await c.query({ text: `SELECT coalesce(max(version), 0) AS v FROM ${VERSION_TABLE}` });
  return Number(r.rows[0]?.v ?? 0);
}

async function foreignTables(c: Queryable): Promise<string[]> {
  const r = await c.query({ text: 'SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ANY($1::text[]) ORDER BY 1', values: [TABLE_NAMES] });
  return r.rows.map((x: Row) => str(x.table_name));
}

async function checkVersion(c: Queryable, target: PostgresTarget): Promise<number> {
  const v = await currentVersion(c);
  const label = `${where(target)}${target.schema !== null ? `, schema ${target.schema}` : ''}`;
  if (v === null) {
    const foreign = await foreignTables(c);
    if (foreign.length > 0) throw new MemauthError('DATABASE_CORRUPT', `${label} has tables of another application (${foreign.join(', ')}) and no memauth version table; point memauth at an empty database or schema`, { tables: foreign });
    return 0;
  }
  if (v > MIGRATIONS.length) throw new MemauthError('DATABASE_CORRUPT', `${label} has memauth schema version ${v}, newer than this memauth (${MIGRATIONS.length}); upgrade memauth`, { version: v });
  return v;
}

/** Create or upgrade the schema in one transaction, under a migration advisory lock. */
async function migrate(pool: pg.Pool, target: PostgresTarget): Promise<void> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    await client.query({ text: 'SELECT pg_advisory_xact_lock($1::int, hashtext($2))', values: [MIGRATION_LOCK, target.schema ?? ''] });
    if (target.schema !== null) await client.query(`CREATE SCHEMA IF NOT EXISTS ${target.schema}`);
    const version = await checkVersion(client, target);
    if (version < MIGRATIONS.length) {
      if (version === 0) await client.query(`CREATE TABLE IF NOT EXISTS ${VERSION_TABLE} (version integer PRIMARY KEY, applied_at text NOT NULL, by text NOT NULL)`);
      for (let v = version; v < MIGRATIONS.length; v++) {
        await client.query(MIGRATIONS[v] as string);
        await client.query({ text: `INSERT INTO ${VERSION_TABLE} (version, applied_at, by) VALUES ($1, $2, 'memauth')`, values: [v + 1, new Date().toISOString()] });
      }
    }
    await client.query('COMMIT');
  } catch (e) {
    try {
      await client.query('ROLLBACK');
    } catch (re) {
      broken = re instanceof Error ? re : new Error(String(re));
    }
    throw e;
  } finally {
    client.release(broken);
  }
}

async function detect(pool: pg.Pool): Promise<PostgresCapabilities> {
  const v = await pool.query({ text: "SELECT current_setting('server_version') AS v" });
  const ext = await pool.query({ text: "SELECT default_version, installed_version FROM pg_available_extensions WHERE name = 'vector'" });
  const row = ext.rows[0] as Row | undefined;
  const available = row !== undefined;
  const installed = available && row.installed_version !== null;
  const version = available ? str(row.installed_version ?? row.default_version) : null;
  const message = !available
    ? 'pgvector (the "vector" extension) is not available on this PostgreSQL server. memauth does not use vector similarity yet on any store, so nothing is missing; to prepare, install the server package (Debian: postgresql-15-pgvector).'
    : `pgvector ${version} is ${installed ? 'installed' : 'available (not installed)'}; memauth does not use vector similarity yet on any store.`;
  return { serverVersion: str((v.rows[0] as Row).v), fullTextSearch: 'tsvector', vector: { available, installed, version, message } };
}
