import { type ErrorCode, MemauthError } from '../core/errors.js';

/**
 * Codes the HTTP and MCP edges add to {@link ErrorCode} (src/core/errors.ts). Every error leaves
 * the server as JSON `{code, message, details}` with the status of {@link statusFor}.
 */
export const SERVER_ERROR_CODES = [
  /** no, malformed, unknown or revoked bearer token (401). */
  'UNAUTHENTICATED',
  /** the endpoint needs the admin token (403). */
  'ADMIN_REQUIRED',
  /** the endpoint needs a principal's token: writes are bound to the authenticated principal (403). */
  'PRINCIPAL_TOKEN_REQUIRED',
  /** the body or query names a tenant other than the token's (403). */
  'TENANT_MISMATCH',
  /** the body names a principal other than the token's (403). */
  'PRINCIPAL_MISMATCH',
  /** a user's turn can only be given by that user principal or the admin (403). */
  'USER_TURN_NOT_CALLER',
  /** the principal may not do this (e.g. delete a record another principal wrote) (403). */
  'FORBIDDEN',
  /** an MCP connection must be bound to an agent, tool or external principal (403). */
  'MCP_PRINCIPAL_KIND',
  'TOKEN_NOT_FOUND',
  /** the token is already revoked (409). */
  'TOKEN_REVOKED',
  /** the token has no entry in the audit chain (issued before tokens were audited): adopt it first (409). */
  'TOKEN_NOT_IN_AUDIT',
  /** review queue: an allowed decision cannot be rejected (409). */
  'NOT_IN_REVIEW',
  /** the decision cannot be approved into a confirmation: not a soft denial, or requested by an external or unregistered principal (409). */
  'NOT_APPROVABLE',
  /** review queue: the decision was already rejected (409). */
  'REVIEW_ALREADY_REJECTED',
  /** no such route (404) or method (405). */
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  /** the body is not valid JSON (400). */
  'INVALID_JSON',
  'UNSUPPORTED_MEDIA_TYPE',
  /** the body exceeds the configured body limit (413). */
  'BODY_TOO_LARGE',
  /** a memory's content exceeds the configured maximum length (413). */
  'CONTENT_TOO_LONG',
  /** too many open MCP-over-HTTP sessions of this principal, this tenant, or (last resort) the server (429); details name the limit. */
  'TOO_MANY_SESSIONS',
  /** this tenant already runs its limit of expensive requests (metrics, replay, audit verification) (429). */
  'TOO_MANY_REQUESTS',
  /** the server is shutting down; retry elsewhere or later (503). */
  'SHUTTING_DOWN',
  /** an unexpected error; the message is generic, the log has the rest (500). */
  'INTERNAL',
] as const;

export type ServerErrorCode = (typeof SERVER_ERROR_CODES)[number];

/** An error raised by the server edge, with its HTTP status. */
export class HttpError extends Error {
  readonly status: number;
  readonly code: ServerErrorCode | ErrorCode;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(status: number, code: ServerErrorCode | ErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
    this.code = code;
    this.details = Object.freeze({ ...details });
  }
}

/** HTTP status of each {@link MemauthError} code (one table; codes not listed are 500). */
export const MEMAUTH_STATUS: Readonly<Partial<Record<ErrorCode, number>>> = Object.freeze({
  TENANT_REQUIRED: 400,
  SCOPE_REQUIRED: 400,
  INVALID_ARGUMENT: 400,
  POLICY_INVALID: 400,
  SCENARIO_INVALID: 400,
  AUTHORITY_EXCEEDS_PRINCIPAL: 403,
  CONFIRMATION_REQUIRES_USER: 403,
  SESSION_TENANT_MISMATCH: 403,
  SESSION_FORBIDDEN: 403,
  CONFIRMATION_USABLE_BY_EXTERNAL: 403,
  UNKNOWN_PRINCIPAL: 404,
  RECORD_NOT_FOUND: 404,
  CONFIRMATION_NOT_FOUND: 404,
  DECISION_NOT_FOUND: 404,
  POLICY_NOT_FOUND: 404,
  PRINCIPAL_EXISTS: 409,
  RECORD_DELETED: 409,
  DATABASE_LOCKED: 503,
  CLOSED: 503,
});

/** The wire shape of every error. */
export interface ErrorBody {
  readonly code: string;
  readonly message: string;
  readonly details: Readonly<Record<string, unknown>>;
}

/**
 * Map anything thrown by a handler to `{status, body}`. MemauthError and HttpError keep their
 * code, message and details (they are written for clients); a MemauthError code without a 4xx
 * or 503 mapping, and anything else, becomes a 500 with a generic message naming the request id
 * — never a stack trace, a path or an SQL message.
 */
export function errorResponse(e: unknown, requestId: string): { status: number; body: ErrorBody; internal: boolean } {
  if (e instanceof HttpError) return { status: e.status, body: { code: e.code, message: e.message, details: e.details }, internal: false };
  if (e instanceof MemauthError) {
    const status = MEMAUTH_STATUS[e.code];
    if (status !== undefined) return { status, body: e.toJSON(), internal: false };
    return { status: 500, body: { code: e.code, message: `internal error (request ${requestId}); the server log has the details`, details: { requestId } }, internal: true };
  }
  return { status: 500, body: { code: 'INTERNAL', message: `internal error (request ${requestId}); the server log has the details`, details: { requestId } }, internal: true };
}
