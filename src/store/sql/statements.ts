/**
 * Every statement both drivers run, written once with `?` placeholders and rendered by a
 * {@link Dialect} (src/store/sql/dialect.ts). Pure: builds text and values, runs nothing. What
 * only one engine has (SQLite's FTS5 tables, pragmas and write lanes; PostgreSQL's tsvector,
 * advisory locks and recursive lineage) stays in its driver.
 *
 * May import: core types, ../driver.js types, ./dialect.js.
 */
import { type AuditEntry, type AuditOp, type Checkpoint, payloadJson } from '../../core/audit.js';
import { DEFAULT_USABLE_KINDS } from '../../core/confirmation.js';
import type { SessionLogEntry } from '../../core/session.js';
import type { Confirmation, Corroboration, Decision, MemoryRecord, Principal } from '../../core/types.js';
import type { ListRecordsOptions, QueuedDecisionsQuery, ReviewNoteRow, TokenRow } from '../driver.js';
import { TABLE_COLUMNS } from '../tables.js';
import type { Dialect, Stmt } from './dialect.js';

/** The storable columns of `records` (never PostgreSQL's generated tsvector). */
export const RECORD_COLUMNS = TABLE_COLUMNS.records.join(', ');

const st = (d: Dialect, text: string, ...values: unknown[]): Stmt => ({ text: d.sql(text), values });

/** A statement whose text holds one IN list (`{in}`) over `ids`, the list's values bound where it stands. */
function withIn(d: Dialect, column: string, ids: readonly string[], text: string, before: readonly unknown[], after: readonly unknown[] = []): Stmt {
  const list = d.inList(column, ids);
  return { text: d.sql(text.replace('{in}', list.sql)), values: [...before, ...list.values, ...after] };
}

// ------------------------------------------------------------------ reads

export const policyText = (d: Dialect, version: string): Stmt => st(d, 'SELECT text FROM policies WHERE version = ?', version);
export const principal = (d: Dialect, tenant: string, id: string): Stmt => st(d, 'SELECT * FROM principals WHERE tenant = ? AND id = ?', tenant, id);
export const principals = (d: Dialect, tenant: string): Stmt => st(d, 'SELECT * FROM principals WHERE tenant = ? ORDER BY created_at, id', tenant);

/** Derivation edges of `ids` (one chunk), by record and position. */
export const derivationsOf = (d: Dialect, ids: readonly string[]): Stmt =>
  withIn(d, 'record_id', ids, 'SELECT record_id, from_id, transform, kind FROM derivations WHERE {in} ORDER BY record_id, ord', []);

/** Records of the tenant among `ids` (one chunk), by id. */
export const recordsById = (d: Dialect, tenant: string, ids: readonly string[]): Stmt =>
  withIn(d, 'id', ids, `SELECT ${RECORD_COLUMNS} FROM records WHERE ${d.recordsTenantByKey} = ? AND {in} ORDER BY id`, [tenant]);

export function listRecords(d: Dialect, tenant: string, opts: ListRecordsOptions): Stmt {
  const where = ['tenant = ?'];
  const values: unknown[] = [tenant];
  if (opts.scope !== undefined) {
    where.push('scope = ?');
    values.push(opts.scope);
  }
  if (!opts.includeDeleted) where.push("status = 'active'");
  return st(d, `SELECT ${RECORD_COLUMNS} FROM records WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id LIMIT ? OFFSET ?`, ...values, opts.limit, opts.offset ?? 0);
}

/** The ids of the versions of chains `chains` (deleted ones included; not the chains' first records), by audit seq. */
export const versionIds = (d: Dialect, tenant: string, chains: readonly string[]): Stmt =>
  withIn(d, 'version_of', chains, 'SELECT id FROM records WHERE tenant = ? AND {in} ORDER BY audit_seq', [tenant]);

/** Keyset page of every record of the tenant (deleted ones included) after `afterId`, by id. */
export function recordsAfter(d: Dialect, tenant: string, afterId: string | null, limit: number): Stmt {
  const t = d.recordsTenantByKey;
  return afterId === null
    ? st(d, `SELECT ${RECORD_COLUMNS} FROM records WHERE ${t} = ? ORDER BY id LIMIT ?`, tenant, limit)
    : st(d, `SELECT ${RECORD_COLUMNS} FROM records WHERE ${t} = ? AND id > ? ORDER BY id LIMIT ?`, tenant, afterId, limit);
}

export const corroborations = (d: Dialect, tenant: string, recordIds: readonly string[]): Stmt =>
  withIn(d, 'record_id', recordIds, 'SELECT * FROM corroborations WHERE tenant = ? AND {in} ORDER BY at, id', [tenant]);
export const confirmation = (d: Dialect, tenant: string, id: string): Stmt => st(d, 'SELECT * FROM confirmations WHERE tenant = ? AND id = ?', tenant, id);
export const confirmations = (d: Dialect, tenant: string, actionType: string, argsHash: string, now: string): Stmt =>
  st(d, 'SELECT * FROM confirmations WHERE tenant = ? AND action_type = ? AND args_hash = ? AND expires_at > ? ORDER BY created_at, id', tenant, actionType, argsHash, now);
export const confirmationUseCounts = (d: Dialect, tenant: string, ids: readonly string[]): Stmt =>
  withIn(d, 'confirmation_id', ids, 'SELECT confirmation_id, count(*) AS n FROM confirmation_uses WHERE tenant = ? AND {in} GROUP BY confirmation_id', [tenant]);
export const session = (d: Dialect, tenant: string, id: string): Stmt => st(d, 'SELECT owner FROM sessions WHERE tenant = ? AND id = ?', tenant, id);
/** Reads recorded before the session log existed (SQLite migration 10, PostgreSQL 8), in the order they were read. */
export const sessionReads = (d: Dialect, tenant: string, sessionId: string): Stmt =>
  st(d, 'SELECT record_id FROM session_reads WHERE tenant = ? AND session_id = ? ORDER BY first_read_at, record_id', tenant, sessionId);
/** The session logs of `sessionIds` (one chunk) with `ord <= length`, by session and ord. */
export const sessionLogIds = (d: Dialect, tenant: string, sessionIds: readonly string[], length: number): Stmt =>
  withIn(d, 'session_id', sessionIds, 'SELECT session_id, record_id FROM session_log WHERE tenant = ? AND {in} AND ord <= ? ORDER BY session_id, ord', [tenant], [length]);
/** The session log's last entry (an index look-up). */
export const sessionLogHead = (d: Dialect, tenant: string, sessionId: string): Stmt =>
  st(d, 'SELECT ord, record_id, hash, summary FROM session_log WHERE tenant = ? AND session_id = ? ORDER BY ord DESC LIMIT 1', tenant, sessionId);
/**
 * Up to `limit` entries of the tenant's session logs after (`sessionId`, `ord`), by session and ord
 * (keyset paging on the key): a row-value range on the primary key, so a page starts at its key
 * whatever the number of entries before it.
 */
export const sessionLogAfter = (d: Dialect, tenant: string, sessionId: string, ord: number, limit: number): Stmt =>
  st(d, 'SELECT session_id, ord, record_id, hash, summary FROM session_log WHERE tenant = ? AND (session_id, ord) > (?, ?) ORDER BY session_id, ord LIMIT ?', tenant, sessionId, ord, limit);
/** Which of `ids` (one chunk) the session log holds. */
export const sessionLogHas = (d: Dialect, tenant: string, sessionId: string, ids: readonly string[]): Stmt =>
  withIn(d, 'record_id', ids, 'SELECT record_id FROM session_log WHERE tenant = ? AND session_id = ? AND {in}', [tenant, sessionId]);
export const decision = (d: Dialect, tenant: string, id: string): Stmt => st(d, 'SELECT body FROM decisions WHERE tenant = ? AND id = ?', tenant, id);
/** The tenant's decisions, newest first (by `at`, then `id`): the first `limit`, or the first `limit` after the decision `after` in that order. */
export const decisions = (d: Dialect, tenant: string, limit: number, after?: { readonly at: string; readonly id: string }): Stmt =>
  after === undefined
    ? st(d, 'SELECT body FROM decisions WHERE tenant = ? ORDER BY at DESC, id LIMIT ?', tenant, limit)
    : st(d, 'SELECT body FROM decisions WHERE tenant = ? AND (at < ? OR (at = ? AND id > ?)) ORDER BY at DESC, id LIMIT ?', tenant, after.at, after.at, after.id, limit);

/**
 * The review queue's requester side of decision `d`: internal when its JSON body's `requester` is
 * null or absent (the application, the admin token) or names a registered principal that is not
 * `external`; external otherwise (an external principal, or one that is not registered). Binds
 * the field name twice.
 */
function internalRequester(d: Dialect): { sql: string; values: unknown[] } {
  const requester = d.jsonField('d.body');
  return {
    sql: `(${requester} IS NULL OR EXISTS (SELECT 1 FROM principals p WHERE p.tenant = d.tenant AND p.id = ${requester} AND p.kind IN (${[...DEFAULT_USABLE_KINDS].map(() => '?').join(', ')})))`,
    values: ['requester', 'requester', ...DEFAULT_USABLE_KINDS],
  };
}

/** One page of the review queue (index decisions_queue): one outcome, tier and requester side, newest first by (at, id), strictly before `before`. */
export function queuedDecisions(d: Dialect, tenant: string, q: QueuedDecisionsQuery): Stmt {
  const side = internalRequester(d);
  const where = [`d.tenant = ? AND d.outcome = ? AND ${d.jsonField('d.body')} = ?`, q.requesters === 'internal' ? side.sql : `NOT ${side.sql}`];
  const values: unknown[] = [tenant, q.outcome, 'tier', q.tier, ...side.values];
  if (q.before !== null) {
    where.push('(d.at, d.id) < (?, ?)');
    values.push(q.before.at, q.before.id);
  }
  return st(d, `SELECT d.body FROM decisions d WHERE ${where.join(' AND ')} ORDER BY d.at DESC, d.id DESC LIMIT ?`, ...values, q.limit);
}

/** How many deny and would_deny decisions the tenant holds, per outcome, tier and requester side. */
export function queuedDecisionCounts(d: Dialect, tenant: string): Stmt {
  const side = internalRequester(d);
  return st(
    d,
    `SELECT d.outcome AS outcome, ${d.jsonField('d.body')} AS tier, CASE WHEN ${side.sql} THEN 'internal' ELSE 'external' END AS requesters, count(*) AS n
     FROM decisions d WHERE d.tenant = ? AND d.outcome IN ('deny', 'would_deny') GROUP BY d.outcome, 2, 3 ORDER BY 1, 2, 3`,
    'tier',
    ...side.values,
    tenant,
  );
}
export const auditHead = (d: Dialect, tenant: string): Stmt => st(d, 'SELECT seq, hash FROM audit WHERE tenant = ? ORDER BY seq DESC LIMIT 1', tenant);
export const auditRange = (d: Dialect, tenant: string, fromSeq: number, toSeq: number): Stmt =>
  st(d, 'SELECT * FROM audit WHERE tenant = ? AND seq >= ? AND seq <= ? ORDER BY seq', tenant, fromSeq, toSeq);
/** The entries at `seqs` (non-empty, at most the dialect's IN-list size). */
export const auditAt = (d: Dialect, tenant: string, seqs: readonly number[]): Stmt => {
  const list = d.inList('seq', seqs, 'bigint');
  return { text: d.sql(`SELECT * FROM audit WHERE tenant = ? AND ${list.sql} ORDER BY seq`), values: [tenant, ...list.values] };
};

/** Entries of `ops` (index audit_op: tenant, op, seq), optionally only those whose JSON payload's `field` is `value`. */
export function auditNaming(d: Dialect, tenant: string, ops: readonly AuditOp[], name: { readonly field: string; readonly value: string } | null): Stmt {
  return name === null
    ? withIn(d, 'op', ops, 'SELECT * FROM audit WHERE tenant = ? AND {in} ORDER BY seq', [tenant])
    : withIn(d, 'op', ops, `SELECT * FROM audit WHERE tenant = ? AND {in} AND ${d.jsonField('payload')} = ? ORDER BY seq`, [tenant], [name.field, name.value]);
}

export const auditHasPolicy = (d: Dialect, tenant: string, policyVersion: string): Stmt =>
  st(d, "SELECT 1 AS x FROM audit WHERE tenant = ? AND op = 'policy' AND policy_version = ? LIMIT 1", tenant, policyVersion);
export const token = (d: Dialect, by: { readonly id: string } | { readonly hash: string }): Stmt =>
  'id' in by ? st(d, 'SELECT * FROM tokens WHERE id = ?', by.id) : st(d, 'SELECT * FROM tokens WHERE hash = ?', by.hash);
export const tokens = (d: Dialect, tenant: string | null): Stmt =>
  tenant === null ? st(d, 'SELECT * FROM tokens WHERE tenant IS NULL ORDER BY created_at, id') : st(d, 'SELECT * FROM tokens WHERE tenant = ? ORDER BY created_at, id', tenant);
export const latestCheckpoint = (d: Dialect, tenant: string): Stmt => st(d, 'SELECT * FROM checkpoints WHERE tenant = ? ORDER BY seq DESC, at DESC LIMIT 1', tenant);
export const tenants = (d: Dialect, adminChain: string): Stmt =>
  st(d, 'SELECT tenant FROM audit UNION SELECT tenant FROM principals UNION SELECT coalesce(tenant, ?) AS tenant FROM tokens ORDER BY tenant', adminChain);
export const tenantContentKey = (d: Dialect, tenant: string): Stmt => st(d, 'SELECT content_key FROM tenant_keys WHERE tenant = ?', tenant);
export const reviewNotes = (d: Dialect, tenant: string): Stmt => st(d, 'SELECT * FROM review_notes WHERE tenant = ? ORDER BY at, id', tenant);

// ------------------------------------------------------------------ writes

/** The policies table is shared by all tenants; the version is the hash of the text, so a conflict stored the same row. */
export const insertPolicy = (d: Dialect, version: string, text: string, at: string): Stmt =>
  st(d, 'INSERT INTO policies (version, text, created_at) VALUES (?, ?, ?) ON CONFLICT (version) DO NOTHING', version, text, at);
export const insertPrincipal = (d: Dialect, p: Principal): Stmt =>
  st(d, 'INSERT INTO principals (tenant, id, kind, max_authority, domain, created_at) VALUES (?, ?, ?, ?, ?, ?)', p.tenant, p.id, p.kind, p.maxAuthority, p.domain, p.createdAt);

export const insertRecord = (d: Dialect, r: MemoryRecord): Stmt =>
  st(
    d,
    `INSERT INTO records (id, tenant, scope, content, content_hash, created_at, expires_at, origin_authority, origin_principal,
      origin_source, origin_written_at, taint_lowest, taint_channels, taint_sources, taint_oldest_source_at, policy_version,
      write_reason, audit_seq, status, session_context, claims, version_of, supersedes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?)`,
    r.id,
    r.tenant,
    r.scope,
    r.content,
    r.contentHash,
    r.createdAt,
    r.expiresAt,
    r.origin.authority,
    r.origin.principalId,
    r.origin.sourceRef,
    r.origin.writtenAt,
    r.taint.lowestAuthority,
    JSON.stringify(r.taint.channels),
    JSON.stringify(r.taint.sources),
    r.taint.oldestSourceAt,
    r.audit.policyVersion,
    r.audit.writeReason,
    r.audit.seq,
    r.sessionContext === undefined ? null : JSON.stringify(r.sessionContext),
    r.claims === undefined || r.claims.length === 0 ? null : JSON.stringify(r.claims),
    r.version?.of ?? null,
    r.version?.supersedes ?? null,
  );

/** Rows per derivation INSERT at most; a record's edges are split into power-of-two chunks up to it. */
const DERIVATION_ROWS = 128;

/**
 * The record's derivation edges as multi-row INSERTs (none when it has none), each of a
 * power-of-two number of rows up to {@link DERIVATION_ROWS}: a session's writes derive from
 * every record read before them, so the count is unbounded — bound parameters per statement stay
 * under both engines' limits, and at most 8 distinct statement texts are ever prepared.
 */
export function insertDerivations(d: Dialect, r: MemoryRecord): Stmt[] {
  return powerOfTwoChunks(r.derivedFrom, DERIVATION_ROWS).map(({ start, items }) => {
    const values = items.flatMap((e, j) => [r.id, start + j, e.from, e.transform, e.kind]);
    return st(d, `INSERT INTO derivations (record_id, ord, from_id, transform, kind) VALUES (?, ?, ?, ?, ?)${', (?, ?, ?, ?, ?)'.repeat(items.length - 1)}`, ...values);
  });
}

/** `items` cut, in order, into chunks of a power-of-two size up to `max` (a power of two): few distinct multi-row statements. */
function powerOfTwoChunks<T>(items: readonly T[], max: number): Array<{ start: number; items: readonly T[] }> {
  const out: Array<{ start: number; items: readonly T[] }> = [];
  let i = 0;
  while (i < items.length) {
    let n = max;
    while (n > items.length - i) n /= 2;
    out.push({ start: i, items: items.slice(i, i + n) });
    i += n;
  }
  return out;
}

/** Erase an active record's content (an erased one is left as it is: its deletion time stays the first). */
export const eraseRecord = (d: Dialect, tenant: string, id: string, at: string): Stmt =>
  st(d, "UPDATE records SET content = NULL, claims = NULL, status = 'deleted', deleted_at = ? WHERE tenant = ? AND id = ? AND status = 'active'", at, tenant, id);

export const insertCorroboration = (d: Dialect, c: Corroboration, auditSeq: number): Stmt =>
  st(
    d,
    'INSERT INTO corroborations (id, tenant, record_id, principal_id, authority, domain, evidence_ref, at, audit_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    c.id,
    c.tenant,
    c.recordId,
    c.principalId,
    c.authority,
    c.domain,
    c.evidenceRef,
    c.at,
    auditSeq,
  );

export const insertConfirmation = (d: Dialect, c: Confirmation, auditSeq: number): Stmt =>
  st(
    d,
    'INSERT INTO confirmations (id, tenant, principal_id, action_type, resource, args_hash, args, memory_ids, expires_at, max_uses, created_at, audit_seq, usable_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    c.id,
    c.tenant,
    c.principalId,
    c.actionType,
    c.resource,
    c.argsHash,
    c.args === null ? null : JSON.stringify(c.args),
    c.memoryIds === null ? null : JSON.stringify(c.memoryIds),
    c.expiresAt,
    c.maxUses,
    c.createdAt,
    auditSeq,
    c.usableBy === undefined || c.usableBy === null ? null : JSON.stringify(c.usableBy),
  );

export const insertConfirmationUse = (d: Dialect, tenant: string, confirmationId: string, decisionId: string, at: string): Stmt =>
  st(d, 'INSERT INTO confirmation_uses (tenant, confirmation_id, decision_id, at) VALUES (?, ?, ?, ?)', tenant, confirmationId, decisionId, at);
/** A new session; an existing one is kept as it is (its owner never changes). */
export const insertSession = (d: Dialect, tenant: string, id: string, at: string, owner: string | null): Stmt =>
  st(d, 'INSERT INTO sessions (tenant, id, created_at, owner) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING', tenant, id, at, owner);

/**
 * Session log entries (new ordinals, in order) as multi-row INSERTs of a power-of-two number of
 * rows up to 64 (at most 7 distinct statement texts). A row for an ordinal or record already in
 * the log is a conflict: the statement fails and the transaction rolls back.
 */
export function insertSessionLog(d: Dialect, tenant: string, sessionId: string, entries: readonly SessionLogEntry[], at: string): Stmt[] {
  return powerOfTwoChunks(entries, 64).map(({ items }) => {
    const values = items.flatMap((e) => [tenant, sessionId, e.ord, e.recordId, e.hash, JSON.stringify(e.summary), at]);
    return st(d, `INSERT INTO session_log (tenant, session_id, ord, record_id, hash, summary, at) VALUES (?, ?, ?, ?, ?, ?, ?)${', (?, ?, ?, ?, ?, ?, ?)'.repeat(items.length - 1)}`, ...values);
  });
}

/**
 * A session's allowed decisions that may be its first of one action type or its first allowed with
 * the context waived, oldest by (at, id): the first whose `action_type` column is that type or
 * whose `context_waived` is 1 (index decisions_session_action), and every one whose columns are
 * NULL (stored before the columns existed; the body has both). The first row that matches is the
 * answer (sql/reader.ts allowedInSession).
 */
export const allowedInSession = (d: Dialect, tenant: string, sessionId: string, actionType: string): Stmt =>
  st(
    d,
    "SELECT body, action_type, at, id FROM (SELECT body, action_type, at, id FROM decisions WHERE tenant = ? AND session_id = ? AND outcome = 'allow' AND (action_type = ? OR context_waived = 1) ORDER BY at, id LIMIT 1) typed " +
      "UNION ALL SELECT body, action_type, at, id FROM decisions WHERE tenant = ? AND session_id = ? AND outcome = 'allow' AND action_type IS NULL ORDER BY at, id",
    tenant,
    sessionId,
    actionType,
    tenant,
    sessionId,
  );
/** A decision row; `action_type` and `context_waived` (1 or 0) repeat the body's `action.type` and `contextWaived` for {@link allowedInSession}. */
export const insertDecision = (d: Dialect, x: Decision): Stmt =>
  st(
    d,
    'INSERT INTO decisions (id, tenant, session_id, at, outcome, body, audit_seq, action_type, context_waived) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    x.id,
    x.tenant,
    x.sessionId,
    x.at,
    x.outcome,
    JSON.stringify(x),
    x.auditSeq,
    x.action.type,
    x.contextWaived === true ? 1 : 0,
  );
export const appendAudit = (d: Dialect, e: AuditEntry): Stmt =>
  st(d, 'INSERT INTO audit (tenant, seq, prev_hash, op, payload, policy_version, hash) VALUES (?, ?, ?, ?, ?, ?, ?)', e.tenant, e.seq, e.prevHash, e.op, payloadJson(e), e.policyVersion, e.hash);
export const insertToken = (d: Dialect, t: TokenRow): Stmt =>
  st(d, 'INSERT INTO tokens (id, tenant, principal_id, hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL)', t.id, t.tenant, t.principalId, t.hash, t.createdAt);
/** The token's revocation time, its row locked where the engine locks rows. */
export const tokenRevokedAt = (d: Dialect, id: string): Stmt => st(d, `SELECT revoked_at FROM tokens WHERE id = ?${d.forUpdate}`, id);
export const revokeToken = (d: Dialect, id: string, at: string): Stmt => st(d, 'UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', at, id);
/** A checkpoint; one already stored at the same (tenant, seq, at) is kept. */
export const insertCheckpoint = (d: Dialect, c: Checkpoint): Stmt =>
  st(d, 'INSERT INTO checkpoints (tenant, seq, hash, at, public_key, signature) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING', c.tenant, c.seq, c.hash, c.at, c.publicKey, c.signature);
export const insertTenantKey = (d: Dialect, tenant: string, keyHex: string, at: string): Stmt =>
  st(d, 'INSERT INTO tenant_keys (tenant, content_key, created_at) VALUES (?, ?, ?) ON CONFLICT (tenant) DO NOTHING', tenant, keyHex, at);
export const insertReviewNote = (d: Dialect, n: ReviewNoteRow): Stmt =>
  st(d, 'INSERT INTO review_notes (id, tenant, decision_id, verdict, by_principal, note, at) VALUES (?, ?, ?, ?, ?, ?, ?)', n.id, n.tenant, n.decisionId, n.verdict, n.by, n.note, n.at);
