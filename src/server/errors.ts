/**
 * The server's errors: HttpError (an edge refusal with its status), the status of each
 * MemauthError code (read from the error table, src/core/error-codes.ts), and the one function
 * that turns anything thrown into the wire shape — used by the HTTP routes and the MCP tools alike.
 */
import { EDGE_ERROR_CODES, ERROR_TABLE } from '../core/error-codes.js';
import { ERROR_CODES, type ErrorCode, MemauthError } from '../core/errors.js';

/**
 * Codes the HTTP and MCP edges add to {@link ErrorCode} (src/core/errors.ts); each one's status and
 * meaning is in the error table (`EDGE_ERROR_TABLE`, src/core/error-codes.ts). Every error leaves
 * the server as JSON `{code, message, details}` with the status of {@link errorResponse}.
 */
export const SERVER_ERROR_CODES = EDGE_ERROR_CODES;

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

/**
 * HTTP status of each {@link MemauthError} code whose status is not 500, read from the error table
 * (`ERROR_TABLE`, src/core/error-codes.ts); codes not listed are 500.
 */
export const MEMAUTH_STATUS: Readonly<Partial<Record<ErrorCode, number>>> = Object.freeze(
  Object.fromEntries(ERROR_CODES.filter((c) => ERROR_TABLE[c].status !== 500).map((c) => [c, ERROR_TABLE[c].status])) as Partial<Record<ErrorCode, number>>,
);

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
