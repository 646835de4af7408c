/**
 * PostgreSQL schema, by migration; it mirrors the SQLite schema (`../sqlite/schema.ts`) table
 * for table and column for column, so `memauth migrate` copies rows one to one and the audit
 * chain hashes the same bytes on both stores.
 *
 * - Every text column is `COLLATE "C"`: ISO-8601 timestamps and ids compare and sort by bytes,
 *   exactly as in SQLite, whatever the database's default collation.
 * - JSON is stored as text (never jsonb, which reorders keys and drops duplicates), so the audit
 *   payload reads back byte for byte.
 * - The PL/pgSQL triggers are the last line of defence of docs/design.md § Memory record: no code
 *   path, migration or script can UPDATE a record's origin, derivation or taint, rewrite its
 *   content (only erase it), or UPDATE/DELETE/TRUNCATE an append-only row. `INSERT … ON CONFLICT
 *   DO UPDATE` fires the same BEFORE UPDATE triggers, so an upsert cannot bypass them.
 *   A superuser can still disable triggers (`session_replication_role = replica`, `ALTER TABLE …
 *   DISABLE TRIGGER`): run memauth under a role that is neither a superuser nor the tables' owner
 *   where that matters (README § Running at scale).
 * - Full-text search: a generated `tsvector` column over {@link FTS_TEXT_FUNCTION} ('simple'
 *   configuration), with a GIN index. Erasing the content empties it in the same statement.
 */

/** Identifies memauth's version table (the SQLite driver's `application_id` counterpart). */
export const VERSION_TABLE = 'memauth_schema';

/**
 * Normalises text for the full-text index and the query alike: every run of characters that is
 * not a letter or a digit becomes one space, so e-mail addresses, URLs and hyphenated account
 * numbers split into their words the way SQLite's unicode61 tokenizer splits them. Letters are
 * classified by the database's default LC_CTYPE (the columns' "C" collation would make every
 * non-ASCII letter a separator), on the indexed text and the query alike.
 */
export const FTS_TEXT_FUNCTION = 'memauth_fts_text';

const refuse = (table: string, what: string): string => `
CREATE TRIGGER ${table}_no_update BEFORE UPDATE ON ${table} FOR EACH ROW
  EXECUTE FUNCTION memauth_refuse('${what} are append-only and cannot be updated');
CREATE TRIGGER ${table}_no_delete BEFORE DELETE ON ${table} FOR EACH ROW
  EXECUTE FUNCTION memauth_refuse('${what} are append-only and cannot be deleted');
CREATE TRIGGER ${table}_no_truncate BEFORE TRUNCATE ON ${table} FOR EACH STATEMENT
  EXECUTE FUNCTION memauth_refuse('${what} are append-only and cannot be truncated');`;

/** The provenance columns of `records`: never updated. */
export const RECORD_PROVENANCE_COLUMNS = [
  'id',
  'tenant',
  'scope',
  'content_hash',
  'created_at',
  'expires_at',
  'origin_authority',
  'origin_principal',
  'origin_source',
  'origin_written_at',
  'taint_lowest',
  'taint_channels',
  'taint_sources',
  'taint_oldest_source_at',
  'policy_version',
  'write_reason',
  'audit_seq',
] as const;

const T = 'text COLLATE "C"';

/** Migrations in order; `memauth_schema.version` counts those applied. */
export const MIGRATIONS: readonly string[] = [
  `
CREATE FUNCTION memauth_refuse() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  RAISE EXCEPTION 'memauth IMMUTABLE_FIELD: %', TG_ARGV[0] USING ERRCODE = 'P0001';
END
$fn$;

CREATE FUNCTION ${FTS_TEXT_FUNCTION}(t text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
  SELECT regexp_replace(coalesce(t, '') COLLATE "default", '[^[:alpha:][:digit:]]+', ' ', 'g')
$fn$;

CREATE TABLE policies (version ${T} PRIMARY KEY, text ${T} NOT NULL, created_at ${T} NOT NULL);
CREATE TABLE principals (
  tenant ${T} NOT NULL, id ${T} NOT NULL, kind ${T} NOT NULL, max_authority ${T} NOT NULL,
  domain ${T} NOT NULL, created_at ${T} NOT NULL, PRIMARY KEY (tenant, id));
CREATE TABLE records (
  id ${T} PRIMARY KEY, tenant ${T} NOT NULL, scope ${T} NOT NULL,
  content ${T}, content_hash ${T} NOT NULL, created_at ${T} NOT NULL, expires_at ${T},
  origin_authority ${T} NOT NULL, origin_principal ${T} NOT NULL, origin_source ${T} NOT NULL, origin_written_at ${T} NOT NULL,
  taint_lowest ${T} NOT NULL, taint_channels ${T} NOT NULL, taint_sources ${T} NOT NULL, taint_oldest_source_at ${T} NOT NULL,
  policy_version ${T} NOT NULL, write_reason ${T} NOT NULL, audit_seq bigint NOT NULL,
  status ${T} NOT NULL CHECK (status IN ('active', 'deleted')), deleted_at ${T},
  search tsvector GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, ${FTS_TEXT_FUNCTION}(content))) STORED,
  CHECK ((status = 'active') = (content IS NOT NULL)));
CREATE INDEX records_tenant_scope ON records (tenant, scope, created_at);
CREATE INDEX records_search ON records USING gin (search);
CREATE TABLE derivations (
  record_id ${T} NOT NULL, ord bigint NOT NULL, from_id ${T} NOT NULL, transform ${T} NOT NULL, kind ${T} NOT NULL,
  PRIMARY KEY (record_id, ord));
CREATE INDEX derivations_from ON derivations (from_id);
CREATE TABLE corroborations (
  id ${T} PRIMARY KEY, tenant ${T} NOT NULL, record_id ${T} NOT NULL, principal_id ${T} NOT NULL, authority ${T} NOT NULL,
  domain ${T} NOT NULL, evidence_ref ${T} NOT NULL, at ${T} NOT NULL, audit_seq bigint NOT NULL);
CREATE INDEX corroborations_record ON corroborations (tenant, record_id);
CREATE TABLE confirmations (
  id ${T} PRIMARY KEY, tenant ${T} NOT NULL, principal_id ${T} NOT NULL, action_type ${T} NOT NULL, resource ${T},
  args_hash ${T} NOT NULL, args ${T}, memory_ids ${T}, expires_at ${T} NOT NULL, max_uses bigint NOT NULL,
  created_at ${T} NOT NULL, audit_seq bigint NOT NULL);
CREATE INDEX confirmations_action ON confirmations (tenant, action_type, args_hash, expires_at);
CREATE TABLE confirmation_uses (
  tenant ${T} NOT NULL, confirmation_id ${T} NOT NULL, decision_id ${T} NOT NULL PRIMARY KEY, at ${T} NOT NULL);
CREATE INDEX confirmation_uses_conf ON confirmation_uses (tenant, confirmation_id);
CREATE TABLE sessions (tenant ${T} NOT NULL, id ${T} NOT NULL, created_at ${T} NOT NULL, PRIMARY KEY (tenant, id));
CREATE TABLE session_reads (
  tenant ${T} NOT NULL, session_id ${T} NOT NULL, record_id ${T} NOT NULL, first_read_at ${T} NOT NULL,
  PRIMARY KEY (tenant, session_id, record_id));
CREATE TABLE decisions (
  id ${T} PRIMARY KEY, tenant ${T} NOT NULL, session_id ${T}, at ${T} NOT NULL, outcome ${T} NOT NULL,
  body ${T} NOT NULL, audit_seq bigint NOT NULL);
CREATE INDEX decisions_tenant_at ON decisions (tenant, at);
CREATE TABLE audit (
  tenant ${T} NOT NULL, seq bigint NOT NULL, prev_hash ${T} NOT NULL, op ${T} NOT NULL, payload ${T} NOT NULL,
  policy_version ${T} NOT NULL, hash ${T} NOT NULL, PRIMARY KEY (tenant, seq));
CREATE TABLE checkpoints (
  tenant ${T} NOT NULL, seq bigint NOT NULL, hash ${T} NOT NULL, at ${T} NOT NULL, public_key ${T} NOT NULL,
  signature ${T} NOT NULL, PRIMARY KEY (tenant, seq, at));

-- records: provenance never changes; content only goes from active text to erased NULL.
CREATE FUNCTION memauth_records_provenance() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF ${RECORD_PROVENANCE_COLUMNS.map((c) => `NEW.${c} IS DISTINCT FROM OLD.${c}`).join('\n     OR ')} THEN
    RAISE EXCEPTION 'memauth IMMUTABLE_FIELD: a record''s origin, derivation and taint cannot be updated' USING ERRCODE = 'P0001';
  END IF;
  RETURN NEW;
END
$fn$;
CREATE FUNCTION memauth_records_erase_only() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF (NEW.content IS DISTINCT FROM OLD.content OR NEW.status IS DISTINCT FROM OLD.status OR NEW.deleted_at IS DISTINCT FROM OLD.deleted_at)
     AND NOT (OLD.status = 'active' AND NEW.status = 'deleted' AND NEW.content IS NULL AND NEW.deleted_at IS NOT NULL) THEN
    RAISE EXCEPTION 'memauth IMMUTABLE_FIELD: record content can only be erased by delete, never rewritten' USING ERRCODE = 'P0001';
  END IF;
  RETURN NEW;
END
$fn$;
CREATE TRIGGER records_provenance_immutable BEFORE UPDATE ON records FOR EACH ROW EXECUTE FUNCTION memauth_records_provenance();
CREATE TRIGGER records_erase_only BEFORE UPDATE ON records FOR EACH ROW EXECUTE FUNCTION memauth_records_erase_only();
CREATE TRIGGER records_no_delete BEFORE DELETE ON records FOR EACH ROW
  EXECUTE FUNCTION memauth_refuse('records are erased, never deleted (the hash is kept)');
CREATE TRIGGER records_no_truncate BEFORE TRUNCATE ON records FOR EACH STATEMENT
  EXECUTE FUNCTION memauth_refuse('records are erased, never deleted (the hash is kept)');
${refuse('derivations', 'derivation edges')}
${refuse('audit', 'audit entries')}
${refuse('corroborations', 'corroborations')}
${refuse('confirmations', 'confirmations')}
${refuse('confirmation_uses', 'confirmation uses')}
${refuse('decisions', 'decisions')}
${refuse('policies', 'policies')}
${refuse('principals', 'principal registrations')}
${refuse('checkpoints', 'checkpoints')}
${refuse('session_reads', 'session reads')}
`,
  // 2: bearer tokens of the HTTP API / MCP server (src/server/tokens.ts), as in SQLite's migration
  // 2: only the SHA-256 of a token is stored; a row is append-only except that revoked_at may be
  // set once, from NULL; rows are never deleted (revocation is the record).
  `
CREATE TABLE tokens (
  id ${T} PRIMARY KEY, tenant ${T}, principal_id ${T}, hash ${T} NOT NULL UNIQUE,
  created_at ${T} NOT NULL, revoked_at ${T},
  CHECK ((tenant IS NULL) = (principal_id IS NULL)),
  CHECK (length(hash) = 64));
CREATE INDEX tokens_principal ON tokens (tenant, principal_id);
CREATE FUNCTION memauth_tokens_revoke_only() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF NOT (OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL AND NEW.id = OLD.id AND NEW.tenant IS NOT DISTINCT FROM OLD.tenant
          AND NEW.principal_id IS NOT DISTINCT FROM OLD.principal_id AND NEW.hash = OLD.hash AND NEW.created_at = OLD.created_at) THEN
    RAISE EXCEPTION 'memauth IMMUTABLE_FIELD: a token can only be revoked, once' USING ERRCODE = 'P0001';
  END IF;
  RETURN NEW;
END
$fn$;
CREATE TRIGGER tokens_revoke_only BEFORE UPDATE ON tokens FOR EACH ROW EXECUTE FUNCTION memauth_tokens_revoke_only();
CREATE TRIGGER tokens_no_delete BEFORE DELETE ON tokens FOR EACH ROW
  EXECUTE FUNCTION memauth_refuse('tokens are revoked, never deleted');
CREATE TRIGGER tokens_no_truncate BEFORE TRUNCATE ON tokens FOR EACH STATEMENT
  EXECUTE FUNCTION memauth_refuse('tokens are revoked, never deleted');
`,
  // 3: review notes of the dashboard's review queue (src/server/routes/review.ts), as in SQLite's
  // migration 3: a person's rejection of a decision; append-only.
  `
CREATE TABLE review_notes (
  id ${T} PRIMARY KEY, tenant ${T} NOT NULL, decision_id ${T} NOT NULL, verdict ${T} NOT NULL CHECK (verdict IN ('rejected')),
  by_principal ${T} NOT NULL, note ${T} NOT NULL, at ${T} NOT NULL);
CREATE INDEX review_notes_decision ON review_notes (tenant, decision_id);
${refuse('review_notes', 'review notes')}
`,
  // 4: who may use what, as in SQLite's migration 6: a session's owner (NULL: the application),
  // a confirmation's usable_by (JSON array; NULL: the default kinds); a session row is never updated.
  `
ALTER TABLE sessions ADD COLUMN owner ${T};
ALTER TABLE confirmations ADD COLUMN usable_by ${T};
CREATE TRIGGER sessions_no_update BEFORE UPDATE ON sessions FOR EACH ROW
  EXECUTE FUNCTION memauth_refuse('a session''s owner cannot be changed');
`,
  // 5: as SQLite's migration 7: identity entries (`principal`, `token_*`) are looked up by op
  `
CREATE INDEX audit_op ON audit (tenant, op, seq);
`,
  // 6: each tenant's content key, as in SQLite's migration 8: outside the audit chain, never
  // updated; deleting the row shreds the key.
  `
CREATE TABLE tenant_keys (tenant ${T} PRIMARY KEY, content_key ${T} NOT NULL CHECK (length(content_key) = 64), created_at ${T} NOT NULL);
CREATE TRIGGER tenant_keys_no_update BEFORE UPDATE ON tenant_keys FOR EACH ROW
  EXECUTE FUNCTION memauth_refuse('a tenant content key is never changed (delete the row to shred it)');
`,
  // 7: as SQLite's migration 9: the review queue pages one outcome's decisions newest first
  `
CREATE INDEX IF NOT EXISTS decisions_queue ON decisions (tenant, outcome, at, id);
`,
  // 8: a session's context, as in SQLite's migration 10: the append-only read log with its running
  // hash and taint summary, and each record's one reference to a prefix of it.
  `
CREATE TABLE session_log (
  tenant ${T} NOT NULL, session_id ${T} NOT NULL, ord integer NOT NULL, record_id ${T} NOT NULL, hash ${T} NOT NULL,
  summary ${T} NOT NULL, at ${T} NOT NULL,
  PRIMARY KEY (tenant, session_id, ord), UNIQUE (tenant, session_id, record_id));
${refuse('session_log', 'session log entries')}
ALTER TABLE records ADD COLUMN session_context ${T};
CREATE TRIGGER records_session_context_immutable BEFORE UPDATE OF session_context ON records FOR EACH ROW
  EXECUTE FUNCTION memauth_refuse('a record''s origin, derivation and taint cannot be updated');
`,
  // the write-surface inventory, as SQLite's: the newest records of a window across every scope
  `
CREATE INDEX IF NOT EXISTS records_tenant_created ON records (tenant, created_at);
`,
  // 9: the vector index (src/store/postgres/vector-index.ts): pgvector's type when the extension
  // exists or can be created here, else real[] with an exact scan. Vectors are derived rows,
  // erased with their record (the driver's eraseRecord).
  `
DO $$
DECLARE ns text;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') AND EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN
    BEGIN
      CREATE EXTENSION IF NOT EXISTS vector;
    EXCEPTION WHEN others THEN NULL;
    END;
  END IF;
  SELECT quote_ident(n.nspname) INTO ns FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector';
  CREATE TABLE IF NOT EXISTS vector_indexes (id serial PRIMARY KEY, embedder text NOT NULL UNIQUE, dimensions integer NOT NULL CHECK (dimensions > 0));
  EXECUTE format('CREATE TABLE IF NOT EXISTS record_vectors (index_id integer NOT NULL REFERENCES vector_indexes (id), tenant text NOT NULL, record_id text NOT NULL, '
    'content_hash text NOT NULL, scope text NOT NULL, embedding %s NOT NULL, PRIMARY KEY (tenant, record_id, index_id))', CASE WHEN ns IS NULL THEN 'real[]' ELSE ns || '.vector' END);
  CREATE INDEX IF NOT EXISTS record_vectors_scope ON record_vectors (tenant, index_id, scope);
END $$;
`,
  // a record's typed claims, as in SQLite's: never changed, only erased with the content.
  `
ALTER TABLE records ADD COLUMN claims ${T};
CREATE FUNCTION memauth_records_claims_erase_only() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF NEW.claims IS DISTINCT FROM OLD.claims AND NOT (NEW.claims IS NULL AND NEW.content IS NULL AND OLD.status = 'active' AND NEW.status = 'deleted') THEN
    RAISE EXCEPTION 'memauth IMMUTABLE_FIELD: a record''s claims can only be erased with its content by delete' USING ERRCODE = 'P0001';
  END IF;
  RETURN NEW;
END
$fn$;
CREATE TRIGGER records_claims_erase_only BEFORE UPDATE ON records FOR EACH ROW EXECUTE FUNCTION memauth_records_claims_erase_only();
`,
  // versions, as in SQLite's migration of the same name: a version's chain and the version it
  // replaced, fixed at write time, and the index that finds a chain's versions.
  `
ALTER TABLE records ADD COLUMN version_of ${T};
ALTER TABLE records ADD COLUMN supersedes ${T};
CREATE INDEX records_version_of ON records (tenant, version_of) WHERE version_of IS NOT NULL;
CREATE TRIGGER records_version_immutable BEFORE UPDATE OF version_of, supersedes ON records FOR EACH ROW
  EXECUTE FUNCTION memauth_refuse('a record''s origin, derivation and taint cannot be updated');
`,
  // the allowed decisions of a session, found by the gate's once-per-action waiver
  `
CREATE INDEX IF NOT EXISTS decisions_session ON decisions (tenant, session_id);
`,
  // a decision's action type and the index of a session's allowed decisions by type, as SQLite's
  `
ALTER TABLE decisions ADD COLUMN action_type ${T};
ALTER TABLE decisions ADD COLUMN context_waived integer;
CREATE INDEX IF NOT EXISTS decisions_session_action ON decisions (tenant, session_id, action_type, at, id) WHERE outcome = 'allow';
`,
  // a tenant's unexpired confirmations, read once per group-commit batch (./kept-reads.ts)
  `
CREATE INDEX IF NOT EXISTS confirmations_live ON confirmations (tenant, expires_at);
`,
];
