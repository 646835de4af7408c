/**
 * Exit codes and error reports of the `memauth` CLI. The exit code of every error code comes from
 * the error table (src/core/error-codes.ts, documented in docs/errors.md); this file only applies it.
 */
import { CommanderError } from 'commander';
import { EXIT, type ExitCode, errorSpec } from '../core/error-codes.js';
import { MemauthError } from '../core/errors.js';
import { HttpError } from '../server/errors.js';

export { EXIT, type ExitCode };

/**
 * The exit code for an error thrown while running a command.
 *
 * MemauthError and the server's HttpError: the code's `exit` in the error table — 1 for a failed
 * check (`AUDIT_CHAIN_BROKEN`, `REPLAY_MISMATCH`), 3 when the environment failed
 * (`DATABASE_UNAVAILABLE`, `DATABASE_LOCKED`, `DATABASE_CORRUPT`, `IMMUTABLE_FIELD`, `CLOSED`, and
 * any 5xx edge code), 2 for every other refusal (TENANT_REQUIRED, INVALID_ARGUMENT,
 * UNKNOWN_PRINCIPAL, RECORD_NOT_FOUND, POLICY_INVALID, …). Commander usage errors → 2 (0 for
 * help/version). Anything else → 3.
 */
export function exitCodeFor(err: unknown): ExitCode {
  if (err instanceof MemauthError || err instanceof HttpError) return errorSpec(err.code)?.exit ?? EXIT.UNEXPECTED;
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
  return EXIT.UNEXPECTED;
}

/**
 * Errors a command has already reported itself (`memauth mcp` prints its startup error before it
 * answers the MCP client, which may end the process): {@link reportError} only returns their code.
 */
export const REPORTED = new WeakSet<Error>();

/** Where error reports go; the real process streams in production, buffers in tests. */
export interface ErrorSink {
  readonly stdout: (s: string) => void;
  readonly stderr: (s: string) => void;
}

/**
 * Report an error and return its exit code. A MemauthError (or the server's HttpError) prints `error CODE: message` on stderr,
 * or with `json` its `{code, message, details}` on stdout. A commander usage error has already
 * been printed by commander; with `json` it is also reported as `INVALID_ARGUMENT` on stdout.
 * An unexpected error prints one line (its stack only when MEMAUTH_DEBUG=1).
 */
export function reportError(err: unknown, json: boolean, sink: ErrorSink, debug: boolean): ExitCode {
  const code = exitCodeFor(err);
  if (err instanceof Error && REPORTED.has(err)) return code;
  if (err instanceof MemauthError || err instanceof HttpError) {
    if (json) sink.stdout(`${JSON.stringify({ code: err.code, message: err.message, details: err.details })}\n`);
    else sink.stderr(`error ${err.code}: ${err.message}\n`);
  } else if (err instanceof CommanderError) {
    if (json && code !== EXIT.OK) {
      const message = err.message.replace(/^error:\s*/i, '');
      sink.stdout(`${JSON.stringify({ code: 'INVALID_ARGUMENT', message, details: { usage: err.code } })}\n`);
    }
  } else {
    const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    if (json) sink.stdout(`${JSON.stringify({ code: 'UNEXPECTED', message, details: {} })}\n`);
    sink.stderr(`memauth: unexpected error: ${message.split('\n')[0] ?? ''}\n`);
  }
  if (debug && err instanceof Error && err.stack) sink.stderr(`${err.stack}\n`);
  return code;
}
