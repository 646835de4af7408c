/**
 * The error table: every code memauth can refuse with — the {@link MemauthError} codes of
 * src/core/errors.ts and the codes the server edge adds (HttpError, src/server/errors.ts) — each
 * documented ONCE with its HTTP status, its CLI exit code and whether the refusal is written to
 * the tenant's audit chain. The server's status mapping (src/server/errors.ts), the CLI's exit
 * codes (src/cli/errors.ts), the MCP tools' error results (through the server's mapping) and
 * docs/errors.md (src/core/error-docs.ts, `npm run docs:errors`) all read this file.
 *
 * Pure data: imports only src/core/errors.ts. Source: docs/design.md § Audit log (refused attempts
 * are logged in the chain).
 */
import type { ErrorCode } from './errors.js';

/** Process exit codes of the `memauth` CLI. */
export const EXIT = {
  /** the command did what was asked (including an `allow` or `would_deny` decision). */
  OK: 0,
  /** a decision was `deny`, or a check failed (audit verify not ok, replay mismatch). */
  FAILED: 1,
  /** usage error or invalid input (bad flags, missing tenant, unknown principal/record, bad policy…). */
  USAGE: 2,
  /** the environment failed (database unavailable, locked, corrupt or closed; I/O) or an unexpected error (a bug). */
  UNEXPECTED: 3,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/**
 * Whether a refusal is written to the tenant's audit chain as an entry `{refused: CODE, …}` of the
 * attempted operation: `always`, `never`, or `partly` (see `auditedWhen`). Logging is best effort:
 * the refusal stands even when its entry could not be written.
 */
export type Audited = 'always' | 'partly' | 'never';

/** One row of the error table. */
export interface ErrorSpec {
  /** HTTP status of the server; a 500 is sent with a generic message naming the request id. */
  readonly status: number;
  /** exit code of the CLI. */
  readonly exit: ExitCode;
  readonly audited: Audited;
  /** for `partly`: which operations log it (and which do not). */
  readonly auditedWhen?: string;
  /** when it is raised, in a sentence. */
  readonly meaning: string;
  /** true for a code in the list that this version never raises (kept for compatibility). */
  readonly reserved?: true;
}

/** A usage/input refusal: exit 2, never audited. */
const input = (status: number, meaning: string, extra: Partial<ErrorSpec> = {}): ErrorSpec => ({ status, exit: EXIT.USAGE, audited: 'never', meaning, ...extra });
/** A failure of the environment (database, I/O): exit 3, never audited. */
const environment = (status: number, meaning: string): ErrorSpec => ({ status, exit: EXIT.UNEXPECTED, audited: 'never', meaning });

/** Every {@link MemauthError} code, in the order of `ERROR_CODES`. */
export const ERROR_TABLE: Readonly<Record<ErrorCode, ErrorSpec>> = Object.freeze({
  TENANT_REQUIRED: input(400, 'no tenant named: every read and write names its tenant (the admin token must name it; the CLI needs --tenant or $MEMAUTH_TENANT)'),
  SCOPE_REQUIRED: input(400, 'no scope named where one is needed (a write, a search, a derivation without inputs)'),
  INVALID_ARGUMENT: input(400, 'an argument is missing, malformed or out of range; `details.field` names it. Nothing was stored. (A request the HTTP framework itself refuses may carry its own 4xx.)'),
  ARGS_TOO_LARGE: input(
    400,
    "an action's arguments (of a decision, dry run or confirmation) hold more than 256 values or 16 KiB of canonical JSON; `details.unit` says which. Nothing was decided or stored: pass bulk data by reference",
  ),
  UNKNOWN_PRINCIPAL: input(404, 'the principal is not registered in the tenant, or its row does not match its registration in the audit chain', {
    audited: 'partly',
    auditedWhen:
      "logged when it is the acting principal of write, derive, corroborate, confirm, delete, or the user-turn principal of authorize; not for a dry run (evaluate / check_action), a requester or usableBy principal, a token's principal, an import or a tool gate",
  }),
  PRINCIPAL_EXISTS: input(409, 'a principal with this id already exists in the tenant'),
  AUTHORITY_EXCEEDS_PRINCIPAL: input(403, "the authority claimed is above the principal's ceiling (a write's `authority`, a registration's `maxAuthority` above its kind's)", {
    audited: 'partly',
    auditedWhen: "logged by registerPrincipal and write; not by import's check of an existing import principal (nothing is attempted)",
  }),
  RECORD_NOT_FOUND: input(404, 'no record with this id in the tenant'),
  RECORD_DELETED: input(409, 'the record is deleted and cannot be corroborated or superseded'),
  RECORD_SUPERSEDED: input(
    409,
    'supersede: the record is not a current version of its chain (a newer version replaced it, or it expired); `details.current` lists the current versions to supersede instead',
  ),
  TOO_MANY_VERSIONS: input(409, "supersede: the record's chain holds the most versions it may, and the writer does not outrank every current version; only such a writer can add a version now"),
  VERSION_CHAIN_FULL: input(
    409,
    "supersede: the record's chain holds the most versions any chain may (`maxVersionsPerChain`, default 100; `details.max`); write the update as a new record instead (delete the old one if it should no longer be read)",
  ),
  SESSION_TENANT_MISMATCH: input(403, 'the session belongs to another tenant', { reserved: true }),
  SESSION_FORBIDDEN: input(403, 'the session belongs to another principal (a session is owned by the principal that used it first)'),
  CONFIRMATION_REQUIRES_USER: input(403, 'only a user principal can confirm an action', { audited: 'always' }),
  CONFIRMATION_USABLE_BY_EXTERNAL: input(403, "a confirmation's usableBy names an external principal; a confirmation is never usable by one"),
  CONFIRMATION_USABLE_BY_TOOL: input(
    403,
    "a confirmation's usableBy names a tool principal: a tool is a channel that carries others' text, never one that acts for the user; name the agent or application that requests the action",
  ),
  CORROBORATOR_BELOW_FLOOR: input(
    403,
    "the corroborating principal's ceiling is below the policy's corroboration floor (`corroboration.minAuthority`): its corroboration could never count, so it is not recorded",
    {
      audited: 'always',
    },
  ),
  CONFIRMATION_NOT_FOUND: input(404, 'no confirmation with this id in the tenant', { reserved: true }),
  DECISION_NOT_FOUND: input(404, 'no decision with this id in the tenant (or not one the caller requested)'),
  POLICY_INVALID: input(400, 'the policy document does not validate'),
  POLICY_NOT_FOUND: input(404, "replay: the decision's policy version is not in the log, or its text does not hash to it"),
  AUDIT_CHAIN_BROKEN: { status: 500, exit: EXIT.FAILED, audited: 'never', meaning: 'the audit chain does not verify', reserved: true },
  REPLAY_MISMATCH: { status: 500, exit: EXIT.FAILED, audited: 'never', meaning: 'a replayed decision differs from the recorded one', reserved: true },
  DATABASE_CORRUPT: environment(500, 'the file is not a memauth database, is corrupted, has a newer schema, or its chain contradicts its signed checkpoint'),
  DATABASE_LOCKED: environment(503, 'the database is locked by another writer, or a transaction had to be rolled back; retry'),
  DATABASE_UNAVAILABLE: environment(500, 'the database cannot be reached, opened or written (server down, login refused, missing database or permission, disk full, I/O error)'),
  IMMUTABLE_FIELD: environment(500, 'a memauth trigger refused to change append-only data (origin, taint, provenance, audit entries, tokens): a bug or tampering, never caller input'),
  SCENARIO_INVALID: input(400, 'the benchmark scenario file cannot be read or does not validate'),
  CLOSED: environment(503, 'the memory (or its driver) is closed'),
  EMBEDDER_UNAVAILABLE: environment(
    503,
    'the embedder (an embeddings endpoint or model adapter) cannot be reached, timed out, refused the request, or kept answering 429/5xx after its retries; `details.status` is the last HTTP status, if any. Nothing was stored; retry later or check the URL, model and key',
  ),
  EMBEDDER_BAD_RESPONSE: environment(
    502,
    'the embedder answered with something that is not one vector per text of its configured dimensions (wrong count, wrong length, a NaN or infinite value, malformed JSON); `details` says which. Nothing was stored; check the model and `dimensions` setting',
  ),
  CLAIM_INVALID: input(
    400,
    "a record's claims break their bounds: more than 32, a `field` that is not a lowercase identifier, a subject or value longer than 500 characters or without a letter or digit, a repeated claim; `details.field` names it",
  ),
  CLAIM_NOT_IN_INPUTS: input(403, 'a derivation names a claim that none of its declared inputs makes (a summary cannot mint or change a claim)'),
  SEMANTIC_SEARCH_UNAVAILABLE: input(
    400,
    'semantic or hybrid search was asked for, but no embedder is configured or the store has no vector index (`details.reason`); search with mode lexical, or configure an embedder (docs/embeddings.md)',
  ),
});

/** The codes the server edge adds to {@link ErrorCode} (HttpError), in documentation order. */
export const EDGE_ERROR_CODES = [
  'UNAUTHENTICATED',
  'ADMIN_REQUIRED',
  'PRINCIPAL_TOKEN_REQUIRED',
  'TENANT_MISMATCH',
  'PRINCIPAL_MISMATCH',
  'USER_TURN_NOT_CALLER',
  'FORBIDDEN',
  'MCP_PRINCIPAL_KIND',
  'TOKEN_NOT_FOUND',
  'TOKEN_REVOKED',
  'TOKEN_NOT_IN_AUDIT',
  'NOT_IN_REVIEW',
  'NOT_APPROVABLE',
  'REVIEW_ALREADY_REJECTED',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'INVALID_JSON',
  'INEXACT_NUMBER',
  'DUPLICATE_KEY',
  'UNSUPPORTED_MEDIA_TYPE',
  'BODY_TOO_LARGE',
  'CONTENT_TOO_LONG',
  'TOO_MANY_SESSIONS',
  'TOO_MANY_REQUESTS',
  'RATE_LIMITED',
  'SHUTTING_DOWN',
  'INTERNAL',
] as const;

export type EdgeErrorCode = (typeof EDGE_ERROR_CODES)[number];

/** Every code of the server edge: a 5xx exits 3 when the CLI meets it, any other status 2; none is audited. */
export const EDGE_ERROR_TABLE: Readonly<Record<EdgeErrorCode, ErrorSpec>> = Object.freeze({
  UNAUTHENTICATED: input(401, 'no, malformed, unknown or revoked bearer token (or one with no entry in the audit chain)'),
  ADMIN_REQUIRED: input(403, 'the endpoint needs the admin token'),
  PRINCIPAL_TOKEN_REQUIRED: input(403, "the endpoint needs a principal's token: writes are bound to the authenticated principal"),
  TENANT_MISMATCH: input(403, "the body or query names a tenant other than the token's"),
  PRINCIPAL_MISMATCH: input(403, "the body names a principal other than the token's"),
  USER_TURN_NOT_CALLER: input(403, "a user's turn can only be given by that user principal or the admin"),
  FORBIDDEN: input(403, 'the principal may not do this (e.g. delete a record another principal wrote, use an MCP session bound to another principal)'),
  MCP_PRINCIPAL_KIND: input(403, 'an MCP connection must be bound to an agent, tool or external principal'),
  TOKEN_NOT_FOUND: input(404, 'no token with this id'),
  TOKEN_REVOKED: input(409, 'the token is already revoked'),
  TOKEN_NOT_IN_AUDIT: input(409, 'the token has no entry in the audit chain (issued before tokens were audited): adopt it first'),
  NOT_IN_REVIEW: input(409, 'review queue: an allowed decision cannot be rejected'),
  NOT_APPROVABLE: input(409, 'the decision cannot be approved into a confirmation: not a soft denial, or requested by an external or unregistered principal'),
  REVIEW_ALREADY_REJECTED: input(409, 'review queue: the decision was already rejected'),
  NOT_FOUND: input(404, 'no such route, dashboard file or MCP session'),
  METHOD_NOT_ALLOWED: input(405, 'the route does not take this method', { reserved: true }),
  INVALID_JSON: input(400, 'the body is not valid JSON (or is empty with a JSON content type)'),
  INEXACT_NUMBER: input(
    400,
    'a number in the JSON body is not held exactly by a double (more significant digits than it keeps, an integer past 2^53 - 1, or one too large): pass it as a string; `details.literal` and `details.parsed` say what was written and what it would have read as',
  ),
  DUPLICATE_KEY: input(400, 'an object in the JSON body repeats a key (`{"to":"A","to":"B"}`: one reader keeps the last value, another the first); `details.key` names it. Send each key once'),
  UNSUPPORTED_MEDIA_TYPE: input(415, 'the body is not application/json'),
  BODY_TOO_LARGE: input(413, 'the body exceeds the configured body limit'),
  CONTENT_TOO_LONG: input(413, "a memory's content exceeds the configured maximum length"),
  TOO_MANY_SESSIONS: input(429, 'too many open MCP-over-HTTP sessions of this principal (or tenant, or server); details name the limit'),
  TOO_MANY_REQUESTS: input(429, 'this tenant already runs its limit of expensive requests (metrics, replay, audit verification)'),
  RATE_LIMITED: input(
    429,
    'an external or tool principal went over its per-minute budget of decisions (`externalDecisionsPerMinute`, `toolDecisionsPerMinute`), writes (`externalWritesPerMinute`, `externalWriteBytesPerMinute`, `toolWritesPerMinute`, `toolWriteBytesPerMinute`) or records marked read in its sessions (`externalReadsPerMinute`, `toolReadsPerMinute`); `details.unit` says which of records, bytes or reads; retry after the `Retry-After` seconds',
  ),
  SHUTTING_DOWN: environment(503, 'the server is shutting down; retry elsewhere or later'),
  INTERNAL: environment(500, 'an unexpected error; the message is generic, the server log has the rest'),
});

/** The row of any code (a MemauthError code or an edge code), or undefined for a string that is neither. */
export function errorSpec(code: string): ErrorSpec | undefined {
  if (Object.hasOwn(ERROR_TABLE, code)) return ERROR_TABLE[code as ErrorCode];
  if (Object.hasOwn(EDGE_ERROR_TABLE, code)) return EDGE_ERROR_TABLE[code as EdgeErrorCode];
  return undefined;
}
