import Database from 'better-sqlite3';
import type { AuditEntry, AuditOp, Checkpoint } from '../../core/audit.js';
import type { Authority } from '../../core/authority.js';
import { MemauthError } from '../../core/errors.js';
import type {
  Channel,
  Confirmation,
  Corroboration,
  Decision,
  DerivationEdge,
  EdgeKind,
  MemoryRecord,
  Principal,
  PrincipalKind,
  Transform,
} from '../../core/types.js';
import type { ListRecordsOptions, SearchHit, StorageDriver, StorageTx, ReviewNoteRow, TokenRow } from '../driver.js';
import { APPLICATION_ID, MIGRATIONS } from './schema.js';

type Row = Record<string, unknown>;
const str = (v: unknown): string => String(v);
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

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

function toRecord(row: Row, edges: DerivationEdge[], now?: string): MemoryRecord {
  const expiresAt = strOrNull(row.expires_at);
  const stored = str(row.status) as 'active' | 'deleted';
  const status = stored === 'active' && expiresAt !== null && now !== undefined && expiresAt <= now ? 'expired' : stored;
  return {
    formatVersion: 1,
    id: str(row.id),
    tenant: str(row.tenant),
    scope: str(row.scope),
    content: strOrNull(row.content),
    contentHash: str(row.content_hash),
    createdAt: str(row.created_at),
    expiresAt,
    origin: {
      authority: str(row.origin_authority) as Authority,
      principalId: str(row.origin_principal),
      sourceRef: str(row.origin_source),
      writtenAt: str(row.origin_written_at),
    },
    derivedFrom: edges,
    taint: {
      lowestAuthority: str(row.taint_lowest) as Authority,
      channels: JSON.parse(str(row.taint_channels)) as Channel[],
      sources: JSON.parse(str(row.taint_sources)) as string[],
      oldestSourceAt: str(row.taint_oldest_source_at),
    },
    audit: { policyVersion: str(row.policy_version), writeReason: str(row.write_reason), seq: Number(row.audit_seq) },
    status,
  };
}

const toPrincipal = (r: Row): Principal => ({
  tenant: str(r.tenant),
  id: str(r.id),
  kind: str(r.kind) as PrincipalKind,
  maxAuthority: str(r.max_authority) as Authority,
  domain: str(r.domain),
  createdAt: str(r.created_at),
});

const toCorroboration = (r: Row): Corroboration => ({
  id: str(r.id),
  tenant: str(r.tenant),
  recordId: str(r.record_id),
  principalId: str(r.principal_id),
  authority: str(r.authority) as Authority,
  domain: str(r.domain),
  evidenceRef: str(r.evidence_ref),
  at: str(r.at),
  auditSeq: Number(r.audit_seq),
});

const toConfirmation = (r: Row): Confirmation => ({
  id: str(r.id),
  tenant: str(r.tenant),
  principalId: str(r.principal_id),
  actionType: str(r.action_type),
  resource: strOrNull(r.resource),
  argsHash: str(r.args_hash),
  args: r.args === null ? null : (JSON.parse(str(r.args)) as Record<string, unknown>),
  memoryIds: r.memory_ids === null ? null : (JSON.parse(str(r.memory_ids)) as string[]),
  expiresAt: str(r.expires_at),
  maxUses: Number(r.max_uses),
  createdAt: str(r.created_at),
  auditSeq: Number(r.audit_seq),
});

const toToken = (r: Row): TokenRow => ({
  id: str(r.id),
  tenant: strOrNull(r.tenant),
  principalId: strOrNull(r.principal_id),
  hash: str(r.hash),
  createdAt: str(r.created_at),
  revokedAt: strOrNull(r.revoked_at),
});

const toAudit = (r: Row): AuditEntry => ({
  tenant: str(r.tenant),
  seq: Number(r.seq),
  prevHash: str(r.prev_hash),
  op: str(r.op) as AuditOp,
  payload: JSON.parse(str(r.payload)) as Record<string, unknown>,
  policyVersion: str(r.policy_version),
  hash: str(r.hash),
});

/** FTS5 query from free text: each token quoted (no operator injection), OR-ed, ranked by BM25. */
export function ftsQuery(text: string): string | null {
  const tokens = [...text.normalize('NFKC').matchAll(/[\p{L}\p{N}]+/gu)].map((m) => m[0]).filter((t) => t.length > 0);
  if (tokens.length === 0) return null;
  return [...new Set(tokens.slice(0, 64))].map((t) => `"${t}"`).join(' OR ');
}

/** Options for {@link SqliteDriver.open}. */
export interface SqliteOptions {
  /** file path, or `:memory:` */
  readonly path: string;
  /** open read-only (no migrations). */
  readonly readonly?: boolean;
}

/**
 * Embedded SQLite driver on better-sqlite3 12 (WAL, synchronous=FULL, secure_delete).
 * One connection; transactions are serialised in-process by a promise chain and take
 * SQLite's write lock up front (BEGIN IMMEDIATE), so one tenant's chain never forks.
 *
 * @throws MemauthError `DATABASE_CORRUPT` when the file is not a memauth/SQLite database.
 */
export class SqliteDriver implements StorageDriver, StorageTx {
  readonly kind = 'sqlite';
  readonly path: string;
  private readonly db: Database.Database;
  private queue: Promise<unknown> = Promise.resolve();
  private inTx = false;
  private readonly stmts = new Map<string, Database.Statement>();

  private constructor(path: string, db: Database.Database) {
    this.path = path;
    this.db = db;
  }

  static open(opts: SqliteOptions): SqliteDriver {
    let db: Database.Database;
    try {
      db = new Database(opts.path, { readonly: opts.readonly ?? false, fileMustExist: opts.readonly ?? false });
    } catch (e) {
      throw mapSqliteError(e, opts.path);
    }
    const d = new SqliteDriver(opts.path, db);
    try {
      db.pragma('busy_timeout = 5000');
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
      const sql = MIGRATIONS[v] as string;
      this.db.transaction(() => {
        this.db.exec(sql);
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

  /** Raw handle for tests and tools that must reach under the API (tamper tests, migrations). */
  unsafeDatabase(): Database.Database {
    return this.db;
  }

  async transaction<T>(_tenant: string, fn: (tx: StorageTx) => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      try {
        this.db.exec('BEGIN IMMEDIATE');
      } catch (e) {
        throw mapSqliteError(e, this.path);
      }
      this.inTx = true;
      try {
        const out = await fn(this);
        this.db.exec('COMMIT');
        return out;
      } catch (e) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        throw mapSqliteError(e, this.path);
      } finally {
        this.inTx = false;
      }
    };
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => undefined);
    return p;
  }

  async close(): Promise<void> {
    await this.queue;
    if (this.db.open) this.db.close();
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
      const rows = this.stmt(`SELECT record_id, from_id, transform, kind FROM derivations WHERE record_id IN (${chunk.map(() => '?').join(',')}) ORDER BY record_id, ord`).all(...chunk) as Row[];
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
      out.push(...(this.stmt(`SELECT * FROM records WHERE tenant = ? AND id IN (${chunk.map(() => '?').join(',')})`).all(tenant, ...chunk) as Row[]));
    }
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

  async search(tenant: string, scope: string, query: string, limit: number, now: string): Promise<SearchHit[]> {
    const q = ftsQuery(query);
    if (q === null) return [];
    const rows = this.all(
      `SELECT r.*, bm25(records_fts) AS score FROM records_fts JOIN records r ON r.rowid = records_fts.rowid
       WHERE records_fts MATCH ? AND r.tenant = ? AND r.scope = ? AND r.status = 'active' AND (r.expires_at IS NULL OR r.expires_at > ?)
       ORDER BY score, r.id LIMIT ?`,
      q,
      tenant,
      scope,
      now,
      limit,
    );
    const recs = this.recordsFromRows(rows, now);
    return recs.map((record, i) => ({ record, score: -Number((rows[i] as Row).score) }));
  }

  async lineage(tenant: string, ids: readonly string[]): Promise<Map<string, DerivationEdge[]>> {
    const out = new Map<string, DerivationEdge[]>();
    let frontier = [...new Set(ids)];
    while (frontier.length > 0) {
      const known = await this.getRecords(tenant, frontier.filter((id) => !out.has(id)));
      const next: string[] = [];
      for (const r of known) {
        out.set(r.id, [...r.derivedFrom]);
        for (const e of r.derivedFrom) if (!out.has(e.from)) next.push(e.from);
      }
      frontier = [...new Set(next)];
    }
    return out;
  }

  async corroborationsFor(tenant: string, recordIds: readonly string[]): Promise<Corroboration[]> {
    if (recordIds.length === 0) return [];
    const out: Corroboration[] = [];
    for (let i = 0; i < recordIds.length; i += 500) {
      const chunk = recordIds.slice(i, i + 500);
      const rows = this.stmt(`SELECT * FROM corroborations WHERE tenant = ? AND record_id IN (${chunk.map(() => '?').join(',')}) ORDER BY at, id`).all(tenant, ...chunk) as Row[];
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
    for (const id of ids) out.set(id, Number(this.get('SELECT count(*) AS n FROM confirmation_uses WHERE tenant = ? AND confirmation_id = ?', tenant, id)?.n ?? 0));
    return out;
  }

  async sessionExists(tenant: string, sessionId: string): Promise<boolean> {
    return this.get('SELECT 1 AS x FROM sessions WHERE tenant = ? AND id = ?', tenant, sessionId) !== undefined;
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

  async auditHasPolicy(tenant: string, policyVersion: string): Promise<boolean> {
    return this.get("SELECT 1 AS x FROM audit WHERE tenant = ? AND op = 'policy' AND policy_version = ? LIMIT 1", tenant, policyVersion) !== undefined;
  }

  async latestCheckpoint(tenant: string): Promise<Checkpoint | null> {
    const r = this.get('SELECT * FROM checkpoints WHERE tenant = ? ORDER BY seq DESC, at DESC LIMIT 1', tenant);
    return r
      ? { formatVersion: 1, tenant: str(r.tenant), seq: Number(r.seq), hash: str(r.hash), at: str(r.at), publicKey: str(r.public_key), signature: str(r.signature) }
      : null;
  }

  async tenants(): Promise<string[]> {
    return this.all('SELECT DISTINCT tenant FROM audit ORDER BY tenant').map((r) => str(r.tenant));
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
    this.run(
      `INSERT INTO records (id, tenant, scope, content, content_hash, created_at, expires_at, origin_authority, origin_principal,
        origin_source, origin_written_at, taint_lowest, taint_channels, taint_sources, taint_oldest_source_at, policy_version,
        write_reason, audit_seq, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active')`,
      r.id, r.tenant, r.scope, r.content, r.contentHash, r.createdAt, r.expiresAt, r.origin.authority, r.origin.principalId,
      r.origin.sourceRef, r.origin.writtenAt, r.taint.lowestAuthority, JSON.stringify(r.taint.channels), JSON.stringify(r.taint.sources),
      r.taint.oldestSourceAt, r.audit.policyVersion, r.audit.writeReason, r.audit.seq,
    );
    r.derivedFrom.forEach((e, i) => this.run('INSERT INTO derivations (record_id, ord, from_id, transform, kind) VALUES (?, ?, ?, ?, ?)', r.id, i, e.from, e.transform, e.kind));
    const rowid = this.get('SELECT rowid FROM records WHERE id = ?', r.id)?.rowid;
    this.run('INSERT INTO records_fts (rowid, content) VALUES (?, ?)', rowid, r.content);
  }

  async eraseRecord(tenant: string, id: string, at: string): Promise<void> {
    this.assertTx();
    const row = this.get('SELECT rowid FROM records WHERE tenant = ? AND id = ?', tenant, id);
    if (!row) return;
    this.run('DELETE FROM records_fts WHERE rowid = ?', row.rowid);
    this.run("UPDATE records SET content = NULL, status = 'deleted', deleted_at = ? WHERE tenant = ? AND id = ?", at, tenant, id);
  }

  async insertCorroboration(c: Corroboration, auditSeq: number): Promise<void> {
    this.assertTx();
    this.run('INSERT INTO corroborations (id, tenant, record_id, principal_id, authority, domain, evidence_ref, at, audit_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', c.id, c.tenant, c.recordId, c.principalId, c.authority, c.domain, c.evidenceRef, c.at, auditSeq);
  }

  async insertConfirmation(c: Confirmation, auditSeq: number): Promise<void> {
    this.assertTx();
    this.run(
      'INSERT INTO confirmations (id, tenant, principal_id, action_type, resource, args_hash, args, memory_ids, expires_at, max_uses, created_at, audit_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      c.id, c.tenant, c.principalId, c.actionType, c.resource, c.argsHash, c.args === null ? null : JSON.stringify(c.args),
      c.memoryIds === null ? null : JSON.stringify(c.memoryIds), c.expiresAt, c.maxUses, c.createdAt, auditSeq,
    );
  }

  async insertConfirmationUse(tenant: string, confirmationId: string, decisionId: string, at: string): Promise<void> {
    this.assertTx();
    this.run('INSERT INTO confirmation_uses (tenant, confirmation_id, decision_id, at) VALUES (?, ?, ?, ?)', tenant, confirmationId, decisionId, at);
  }

  async ensureSession(tenant: string, sessionId: string, at: string): Promise<void> {
    this.assertTx();
    this.run('INSERT OR IGNORE INTO sessions (tenant, id, created_at) VALUES (?, ?, ?)', tenant, sessionId, at);
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
    this.run('INSERT INTO audit (tenant, seq, prev_hash, op, payload, policy_version, hash) VALUES (?, ?, ?, ?, ?, ?, ?)', e.tenant, e.seq, e.prevHash, e.op, JSON.stringify(e.payload), e.policyVersion, e.hash);
  }

  // ---- tokens (each call is its own transaction, serialised with the others) ----
  async insertToken(t: TokenRow): Promise<void> {
    await this.transaction('', async () => {
      this.run('INSERT INTO tokens (id, tenant, principal_id, hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL)', t.id, t.tenant, t.principalId, t.hash, t.createdAt);
    });
  }

  async findToken(by: { readonly id: string } | { readonly hash: string }): Promise<TokenRow | null> {
    const r = 'id' in by ? this.get('SELECT * FROM tokens WHERE id = ?', by.id) : this.get('SELECT * FROM tokens WHERE hash = ?', by.hash);
    return r ? toToken(r) : null;
  }

  async listTokens(tenant: string | null): Promise<TokenRow[]> {
    const rows = tenant === null ? this.all('SELECT * FROM tokens WHERE tenant IS NULL ORDER BY created_at, id') : this.all('SELECT * FROM tokens WHERE tenant = ? ORDER BY created_at, id', tenant);
    return rows.map(toToken);
  }

  async revokeToken(id: string, at: string, replacement?: TokenRow): Promise<boolean> {
    return this.transaction('', async () => {
      const r = this.get('SELECT revoked_at FROM tokens WHERE id = ?', id);
      if (!r || r.revoked_at !== null) return false;
      this.run('UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', at, id);
      if (replacement) {
        this.run('INSERT INTO tokens (id, tenant, principal_id, hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL)', replacement.id, replacement.tenant, replacement.principalId, replacement.hash, replacement.createdAt);
      }
      return true;
    });
  }

  // ---- review notes (append-only) ----
  async insertReviewNote(n: ReviewNoteRow): Promise<void> {
    await this.transaction(n.tenant, async () => {
      this.run('INSERT INTO review_notes (id, tenant, decision_id, verdict, by_principal, note, at) VALUES (?, ?, ?, ?, ?, ?, ?)', n.id, n.tenant, n.decisionId, n.verdict, n.by, n.note, n.at);
    });
  }

  async listReviewNotes(tenant: string): Promise<ReviewNoteRow[]> {
    return this.all('SELECT * FROM review_notes WHERE tenant = ? ORDER BY at, id', tenant).map((r) => ({
      id: r.id as string,
      tenant: r.tenant as string,
      decisionId: r.decision_id as string,
      verdict: 'rejected' as const,
      by: r.by_principal as string,
      note: r.note as string,
      at: r.at as string,
    }));
  }

  async insertCheckpoint(c: Checkpoint): Promise<void> {
    this.assertTx();
    if (this.get('SELECT 1 AS x FROM checkpoints WHERE tenant = ? AND seq = ? AND at = ?', c.tenant, c.seq, c.at) === undefined) {
      this.run('INSERT INTO checkpoints (tenant, seq, hash, at, public_key, signature) VALUES (?, ?, ?, ?, ?, ?)', c.tenant, c.seq, c.hash, c.at, c.publicKey, c.signature);
    }
  }
}
