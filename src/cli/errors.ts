import { CommanderError } from 'commander';
import { type ErrorCode, MemauthError } from '../core/errors.js';
import { HttpError } from '../server/errors.js';

/** Process exit codes of the `memauth` CLI. */
export const EXIT = {
  /** the command did what was asked (including an `allow` or `would_deny` decision). */
  OK: 0,
  /** a decision was `deny`, or a check failed (audit verify not ok, replay mismatch). */
  FAILED: 1,
  /** usage error or invalid input (bad flags, missing tenant, unknown principal/record, bad policy…). */
  USAGE: 2,
  /** anything unexpected (I/O, a locked or corrupt database, a bug). */
  UNEXPECTED: 3,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** MemauthError codes that are a failed check rather than bad input. */
const FAILED_CHECK: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['AUDIT_CHAIN_BROKEN', 'REPLAY_MISMATCH']);
/** MemauthError codes that describe the environment, not the caller's input. */
const OPERATIONAL: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['DATABASE_CORRUPT', 'DATABASE_LOCKED', 'CLOSED']);

/**
 * The exit code for an error thrown while running a command.
 *
 * MemauthError: `AUDIT_CHAIN_BROKEN`/`REPLAY_MISMATCH` → 1, `DATABASE_CORRUPT`/`DATABASE_LOCKED`/`CLOSED` → 3,
 * every other code (TENANT_REQUIRED, SCOPE_REQUIRED, INVALID_ARGUMENT, UNKNOWN_PRINCIPAL, RECORD_NOT_FOUND,
 * POLICY_INVALID, …) → 2. Commander usage errors → 2 (0 for help/version). Anything else → 3.
 */
export function exitCodeFor(err: unknown): ExitCode {
  if (err instanceof MemauthError) {
    if (FAILED_CHECK.has(err.code)) return EXIT.FAILED;
    if (OPERATIONAL.has(err.code)) return EXIT.UNEXPECTED;
    return EXIT.USAGE;
  }
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
  // the server's edge errors (serve, mcp, token): a refusal is a usage error, a 5xx is operational
  if (err instanceof HttpError) return err.status >= 500 ? EXIT.UNEXPECTED : EXIT.USAGE;
  return EXIT.UNEXPECTED;
}

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
