/**
 * SQLite schema, by migration. The triggers are the last line of defence of docs/design.md
 * § Memory record: no code path, migration or script can UPDATE a record's origin,
 * derivation or taint, or UPDATE/DELETE an audit row. A record's content can only be
 * erased (set to NULL together with status = 'deleted'), never rewritten.
 */
import type Database from 'better-sqlite3';
import { migrateToTenantIndexes } from './search-index.js';

/** Refuse an INSERT that would replace an existing row (INSERT OR REPLACE), on any connection. */
const noReplace = (table: string, key: string[], what: string): string => `
CREATE TRIGGER ${table}_no_replace BEFORE INSERT ON ${table}
WHEN EXISTS (SELECT 1 FROM ${table} WHERE ${key.map((k) => `${k} = NEW.${k}`).join(' AND ')})
BEGIN SELECT RAISE(ABORT, 'memauth IMMUTABLE_FIELD: ${what} cannot be replaced'); END;`;

const immutable = (table: string, what: string): string => `
CREATE TRIGGER ${table}_no_update BEFORE UPDATE ON ${table}
BEGIN SELECT RAISE(ABORT, 'memauth IMMUTABLE_FIELD: ${what} are append-only and cannot be updated'); END;
CREATE TRIGGER ${table}_no_delete BEFORE DELETE ON ${table}
BEGIN SELECT RAISE(ABORT, 'memauth IMMUTABLE_FIELD: ${what} are append-only and cannot be deleted'); END;`;

/** `PRAGMA application_id` of a memauth database ('mema'). */
export const APPLICATION_ID = 0x6d656d61;

/** One migration: SQL, or a function for what depends on the data (run in the same transaction). */
export type Migration = string | ((db: Database.Database) => void);

export const MIGRATIONS: readonly Migration[] = [
  `
CREATE TABLE policies (version TEXT PRIMARY KEY, text TEXT NOT NULL, created_at TEXT NOT NULL) STRICT;
CREATE TABLE principals (
  tenant TEXT NOT NULL, id TEXT NOT NULL, kind TEXT NOT NULL, max_authority TEXT NOT NULL,
  domain TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (tenant, id)) STRICT;
CREATE TABLE records (
  id TEXT PRIMARY KEY, tenant TEXT NOT NULL, scope TEXT NOT NULL,
  content TEXT, content_hash TEXT NOT NULL, created_at TEXT NOT NULL, expires_at TEXT,
  origin_authority TEXT NOT NULL, origin_principal TEXT NOT NULL, origin_source TEXT NOT NULL, origin_written_at TEXT NOT NULL,
  taint_lowest TEXT NOT NULL, taint_channels TEXT NOT NULL, taint_sources TEXT NOT NULL, taint_oldest_source_at TEXT NOT NULL,
  policy_version TEXT NOT NULL, write_reason TEXT NOT NULL, audit_seq INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('active', 'deleted')), deleted_at TEXT,
  CHECK ((status = 'active') = (content IS NOT NULL))) STRICT;
CREATE INDEX records_tenant_scope ON records (tenant, scope, created_at);
CREATE TABLE derivations (
  record_id TEXT NOT NULL, ord INTEGER NOT NULL, from_id TEXT NOT NULL, transform TEXT NOT NULL, kind TEXT NOT NULL,
  PRIMARY KEY (record_id, ord)) STRICT;
CREATE INDEX derivations_from ON derivations (from_id);
CREATE TABLE corroborations (
  id TEXT PRIMARY KEY, tenant TEXT NOT NULL, record_id TEXT NOT NULL, principal_id TEXT NOT NULL, authority TEXT NOT NULL,
  domain TEXT NOT NULL, evidence_ref TEXT NOT NULL, at TEXT NOT NULL, audit_seq INTEGER NOT NULL) STRICT;
CREATE INDEX corroborations_record ON corroborations (tenant, record_id);
CREATE TABLE confirmations (
  id TEXT PRIMARY KEY, tenant TEXT NOT NULL, principal_id TEXT NOT NULL, action_type TEXT NOT NULL, resource TEXT,
  args_hash TEXT NOT NULL, args TEXT, memory_ids TEXT, expires_at TEXT NOT NULL, max_uses INTEGER NOT NULL,
  created_at TEXT NOT NULL, audit_seq INTEGER NOT NULL) STRICT;
CREATE INDEX confirmations_action ON confirmations (tenant, action_type, args_hash, expires_at);
CREATE TABLE confirmation_uses (
  tenant TEXT NOT NULL, confirmation_id TEXT NOT NULL, decision_id TEXT NOT NULL PRIMARY KEY, at TEXT NOT NULL) STRICT;
CREATE INDEX confirmation_uses_conf ON confirmation_uses (tenant, confirmation_id);
CREATE TABLE sessions (tenant TEXT NOT NULL, id TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (tenant, id)) STRICT;
CREATE TABLE session_reads (
  tenant TEXT NOT NULL, session_id TEXT NOT NULL, record_id TEXT NOT NULL, first_read_at TEXT NOT NULL,
  PRIMARY KEY (tenant, session_id, record_id)) STRICT;
CREATE TABLE decisions (
  id TEXT PRIMARY KEY, tenant TEXT NOT NULL, session_id TEXT, at TEXT NOT NULL, outcome TEXT NOT NULL,
  body TEXT NOT NULL, audit_seq INTEGER NOT NULL) STRICT;
CREATE INDEX decisions_tenant_at ON decisions (tenant, at);
CREATE TABLE audit (
  tenant TEXT NOT NULL, seq INTEGER NOT NULL, prev_hash TEXT NOT NULL, op TEXT NOT NULL, payload TEXT NOT NULL,
  policy_version TEXT NOT NULL, hash TEXT NOT NULL, PRIMARY KEY (tenant, seq)) STRICT;
CREATE TABLE checkpoints (
  tenant TEXT NOT NULL, seq INTEGER NOT NULL, hash TEXT NOT NULL, at TEXT NOT NULL, public_key TEXT NOT NULL,
  signature TEXT NOT NULL, PRIMARY KEY (tenant, seq, at)) STRICT;
CREATE VIRTUAL TABLE records_fts USING fts5 (content, tokenize = 'unicode61 remove_diacritics 2');
INSERT INTO records_fts (records_fts, rank) VALUES ('secure-delete', 1);

CREATE TRIGGER records_provenance_immutable BEFORE UPDATE OF
  id, tenant, scope, content_hash, created_at, expires_at, origin_authority, origin_principal, origin_source,
  origin_written_at, taint_lowest, taint_channels, taint_sources, taint_oldest_source_at, policy_version,
  write_reason, audit_seq ON records
BEGIN SELECT RAISE(ABORT, 'memauth IMMUTABLE_FIELD: a record''s origin, derivation and taint cannot be updated'); END;
CREATE TRIGGER records_erase_only BEFORE UPDATE OF content, status, deleted_at ON records
WHEN NOT (OLD.status = 'active' AND NEW.status = 'deleted' AND NEW.content IS NULL AND NEW.deleted_at IS NOT NULL)
BEGIN SELECT RAISE(ABORT, 'memauth IMMUTABLE_FIELD: record content can only be erased by delete, never rewritten'); END;
CREATE TRIGGER records_no_delete BEFORE DELETE ON records
BEGIN SELECT RAISE(ABORT, 'memauth IMMUTABLE_FIELD: records are erased, never deleted (the hash is kept)'); END;
${immutable('derivations', 'derivation edges')}
${immutable('audit', 'audit entries')}
${immutable('corroborations', 'corroborations')}
${immutable('confirmations', 'confirmations')}
${immutable('confirmation_uses', 'confirmation uses')}
${immutable('decisions', 'decisions')}
${immutable('policies', 'policies')}
${immutable('principals', 'principal registrations')}
${immutable('checkpoints', 'checkpoints')}
${immutable('session_reads', 'session reads')}
`,
  // 2: bearer tokens of the HTTP API / MCP server (src/server/tokens.ts). Only the SHA-256 of a
  // token is stored. A row is append-only except that revoked_at may be set once, from NULL;
  // rows are never deleted (revocation is the record). tenant and principal_id are both NULL
  // for an admin token and both set for a principal token.
  `
CREATE TABLE tokens (
  id TEXT PRIMARY KEY, tenant TEXT, principal_id TEXT, hash TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL, revoked_at TEXT,
  CHECK ((tenant IS NULL) = (principal_id IS NULL)),
  CHECK (length(hash) = 64)) STRICT;
CREATE INDEX tokens_principal ON tokens (tenant, principal_id);
CREATE TRIGGER tokens_revoke_only BEFORE UPDATE ON tokens
WHEN NOT (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL AND NEW.id = OLD.id AND NEW.tenant IS OLD.tenant
  AND NEW.principal_id IS OLD.principal_id AND NEW.hash = OLD.hash AND NEW.created_at = OLD.created_at)
BEGIN SELECT RAISE(ABORT, 'memauth IMMUTABLE_FIELD: a token can only be revoked, once'); END;
CREATE TRIGGER tokens_no_delete BEFORE DELETE ON tokens
BEGIN SELECT RAISE(ABORT, 'memauth IMMUTABLE_FIELD: tokens are revoked, never deleted'); END;
${noReplace('tokens', ['id'], 'tokens')}
CREATE TRIGGER tokens_no_replace_hash BEFORE INSERT ON tokens
WHEN EXISTS (SELECT 1 FROM tokens WHERE hash = NEW.hash)
BEGIN SELECT RAISE(ABORT, 'memauth IMMUTABLE_FIELD: tokens cannot be replaced'); END;
`,
  // 3: review notes of the dashboard's review queue (src/server/routes/review.ts): a person's
  // rejection of a blocked or would_deny decision. Append-only: never updated or deleted (a
  // rejection is a record of what a person decided, like the audit chain; an approval is a
  // scoped confirmation, which lives in the confirmations table and the chain).
  `
CREATE TABLE review_notes (
  id TEXT PRIMARY KEY, tenant TEXT NOT NULL, decision_id TEXT NOT NULL, verdict TEXT NOT NULL CHECK (verdict IN ('rejected')),
  by_principal TEXT NOT NULL, note TEXT NOT NULL, at TEXT NOT NULL) STRICT;
CREATE INDEX review_notes_decision ON review_notes (tenant, decision_id);
${immutable('review_notes', 'review notes')}
${noReplace('review_notes', ['id'], 'review notes')}
`,
  // 4: the full-text index also holds each record's tenant-and-scope key (scopeKeyOf in
  // driver.ts, computed the same way here), so a search matches — and scores with BM25 — only
  // the rows of the tenant and scope it names instead of every matching row of the database.
  `
DROP TABLE records_fts;
CREATE VIRTUAL TABLE records_fts USING fts5 (content, scope_key, tokenize = 'unicode61 remove_diacritics 2');
INSERT INTO records_fts (records_fts, rank) VALUES ('secure-delete', 1);
INSERT INTO records_fts (rowid, content, scope_key)
  SELECT rowid, content, 'k' || lower(hex(tenant)) || 'x' || lower(hex(scope)) FROM records WHERE content IS NOT NULL;
`,
  // 5: one full-text index per tenant (search-index.ts): BM25's statistics — row count, average
  // length, each term's document frequency — then come from the tenant's own rows, never from
  // another tenant's. A registry (search_indexes, append-only) names each tenant's FTS5 table
  // records_fts_<id>; every active record's entry moves there and the shared records_fts is dropped.
  migrateToTenantIndexes,
  // 6: who may use what. A session's owner is the principal that used it first (NULL: the
  // application — every session of an older store is the application's); a confirmation's
  // usable_by lists the principals whose requests may use it (JSON array; NULL: the default
  // kinds, see core/confirmation.ts). A session row is never updated: its owner is fixed.
  `
ALTER TABLE sessions ADD COLUMN owner TEXT;
ALTER TABLE confirmations ADD COLUMN usable_by TEXT;
CREATE TRIGGER sessions_no_update BEFORE UPDATE ON sessions
BEGIN SELECT RAISE(ABORT, 'memauth IMMUTABLE_FIELD: a session''s owner cannot be changed'); END;
`,
  // 7: the identity entries of a chain (`principal`, `token_*`: core/identity.ts) are looked up by
  // op on every authentication and principal check: an index keeps that off the whole chain
  `
CREATE INDEX audit_op ON audit (tenant, op, seq);
`,
  // 8: each tenant's content key (src/core/content-hash.ts): records carry an HMAC of their
  // content under it, so a deleted record's kept hash cannot be guessed from low-entropy text.
  // Outside the audit chain; never updated; deleting the row shreds the key.
  `
CREATE TABLE tenant_keys (tenant TEXT PRIMARY KEY, content_key TEXT NOT NULL CHECK (length(content_key) = 64), created_at TEXT NOT NULL) STRICT;
CREATE TRIGGER tenant_keys_no_update BEFORE UPDATE ON tenant_keys
BEGIN SELECT RAISE(ABORT, 'memauth IMMUTABLE_FIELD: a tenant content key is never changed (delete the row to shred it)'); END;
`,
  // 9: the review queue pages one outcome's decisions newest first (sql/statements.ts
  // queuedDecisions): an index keeps a page off the tenant's allowed decisions
  `
CREATE INDEX IF NOT EXISTS decisions_queue ON decisions (tenant, outcome, at, id);
`,
  // 10: a session's context (core/session.ts): its read log, one append-only row per record read,
  // each with the running hash of the log and the running taint summary (JSON) after it; a record
  // written in a session refers to a prefix of it once (records.session_context, JSON) instead of
  // one derivation row per record read. Reads recorded in session_reads before stay there (the log
  // starts with them, in the order they were read, on the session's next read or write).
  `
CREATE TABLE session_log (
  tenant TEXT NOT NULL, session_id TEXT NOT NULL, ord INTEGER NOT NULL, record_id TEXT NOT NULL, hash TEXT NOT NULL,
  summary TEXT NOT NULL, at TEXT NOT NULL,
  PRIMARY KEY (tenant, session_id, ord), UNIQUE (tenant, session_id, record_id)) STRICT;
${immutable('session_log', 'session log entries')}
ALTER TABLE records ADD COLUMN session_context TEXT;
CREATE TRIGGER records_session_context_immutable BEFORE UPDATE OF session_context ON records
BEGIN SELECT RAISE(ABORT, 'memauth IMMUTABLE_FIELD: a record''s origin, derivation and taint cannot be updated'); END;
`,
  // the write-surface inventory (sql/surfaces.ts) counts the newest records of a time window
  // across every scope: an index keeps that off the tenant's older records
  `
CREATE INDEX IF NOT EXISTS records_tenant_created ON records (tenant, created_at);
`,
  // a record's typed claims (docs/design.md § Claims and intent; JSON, NULL: none): covered by
  // its content hash and audit entry, never changed — only erased with the content by delete.
  `
ALTER TABLE records ADD COLUMN claims TEXT;
CREATE TRIGGER records_claims_erase_only BEFORE UPDATE OF claims ON records
WHEN NOT (NEW.claims IS NULL AND NEW.content IS NULL AND OLD.status = 'active' AND NEW.status = 'deleted')
BEGIN SELECT RAISE(ABORT, 'memauth IMMUTABLE_FIELD: a record''s claims can only be erased with its content by delete'); END;
`,
  // versions (core/versions.ts): a version written by supersede names its chain (version_of, the
  // chain's first record) and the version it replaced (supersedes); both are in its write entry
  // and never change. The index finds a chain's versions.
  `
ALTER TABLE records ADD COLUMN version_of TEXT;
ALTER TABLE records ADD COLUMN supersedes TEXT;
CREATE INDEX records_version_of ON records (tenant, version_of) WHERE version_of IS NOT NULL;
CREATE TRIGGER records_version_immutable BEFORE UPDATE OF version_of, supersedes ON records
BEGIN SELECT RAISE(ABORT, 'memauth IMMUTABLE_FIELD: a record''s origin, derivation and taint cannot be updated'); END;
`,
  // the allowed decisions of a session, found by the gate's once-per-action waiver
  `
CREATE INDEX IF NOT EXISTS decisions_session ON decisions (tenant, session_id);
`,
  // a decision's action type and whether its context was waived (sql/statements.ts insertDecision;
  // NULL on decisions stored before, whose body has both), and the index that finds a session's first allowed decision of
  // one type (allowedInSession) without reading its other decisions
  `
ALTER TABLE decisions ADD COLUMN action_type TEXT;
ALTER TABLE decisions ADD COLUMN context_waived INTEGER;
CREATE INDEX IF NOT EXISTS decisions_session_action ON decisions (tenant, session_id, action_type, at, id) WHERE outcome = 'allow';
`,
];
