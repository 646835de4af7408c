/**
 * One error class for everything memauth refuses, with a stable string code.
 * Edges (CLI, HTTP, MCP) map codes to exit codes / status codes; messages are
 * written for a person to act on and never include stack traces on the wire.
 */
export const ERROR_CODES = [
  'TENANT_REQUIRED',
  'SCOPE_REQUIRED',
  'INVALID_ARGUMENT',
  'ARGS_TOO_LARGE',
  'UNKNOWN_PRINCIPAL',
  'PRINCIPAL_EXISTS',
  'AUTHORITY_EXCEEDS_PRINCIPAL',
  'RECORD_NOT_FOUND',
  'RECORD_DELETED',
  'RECORD_SUPERSEDED',
  'TOO_MANY_VERSIONS',
  'VERSION_CHAIN_FULL',
  'SESSION_TENANT_MISMATCH',
  'SESSION_FORBIDDEN',
  'CONFIRMATION_REQUIRES_USER',
  'CONFIRMATION_USABLE_BY_EXTERNAL',
  'CONFIRMATION_USABLE_BY_TOOL',
  'CORROBORATOR_BELOW_FLOOR',
  'CONFIRMATION_NOT_FOUND',
  'DECISION_NOT_FOUND',
  'POLICY_INVALID',
  'POLICY_NOT_FOUND',
  'AUDIT_CHAIN_BROKEN',
  'REPLAY_MISMATCH',
  'DATABASE_CORRUPT',
  'DATABASE_LOCKED',
  'DATABASE_UNAVAILABLE',
  'IMMUTABLE_FIELD',
  'SCENARIO_INVALID',
  'CLOSED',
  'EMBEDDER_UNAVAILABLE',
  'EMBEDDER_BAD_RESPONSE',
  'CLAIM_INVALID',
  'CLAIM_NOT_IN_INPUTS',
  'SEMANTIC_SEARCH_UNAVAILABLE',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * The single error type thrown by memauth's public API.
 *
 * @property code - stable machine-readable code from {@link ERROR_CODES}.
 * @property details - structured, JSON-serialisable context (ids, fields); safe to send to clients.
 */
export class MemauthError extends Error {
  readonly code: ErrorCode;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MemauthError';
    this.code = code;
    this.details = Object.freeze({ ...details });
  }

  /** JSON shape used by every edge: `{code, message, details}` (no stack). */
  toJSON(): { code: ErrorCode; message: string; details: Readonly<Record<string, unknown>> } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

/** True when `e` is a {@link MemauthError}, optionally with the given code. */
export function isMemauthError(e: unknown, code?: ErrorCode): e is MemauthError {
  return e instanceof MemauthError && (code === undefined || e.code === code);
}
