/**
 * Renders the error table (src/core/error-codes.ts) as docs/errors.md. Pure: returns the text;
 * `npm run docs:errors` writes it, and test/error-table.test.ts fails when the file is out of date.
 */
import { EDGE_ERROR_CODES, EDGE_ERROR_TABLE, ERROR_TABLE, EXIT, type ErrorSpec } from './error-codes.js';
import { ERROR_CODES } from './errors.js';

const EXIT_MEANING: Readonly<Record<number, string>> = {
  [EXIT.OK]: 'ok — the command did what was asked (also an `allow` or `would_deny` decision)',
  [EXIT.FAILED]: 'denied or a check failed — a `deny` decision, `audit verify` not ok, a replay mismatch',
  [EXIT.USAGE]: 'usage error or invalid input — fix the command; retrying it unchanged fails again',
  [EXIT.UNEXPECTED]: 'the environment failed (database unavailable, locked, corrupt or closed; I/O) or an unexpected error — retry later, or see the message (MEMAUTH_DEBUG=1 prints the stack)',
};

/** `|` and line breaks would break a Markdown table cell. */
const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function row(code: string, s: ErrorSpec): string {
  const audited = s.audited === 'partly' ? `partly: ${s.auditedWhen ?? ''}` : s.audited === 'always' ? 'yes' : 'no';
  const meaning = s.reserved === true ? `${s.meaning} *(reserved: not raised by this version)*` : s.meaning;
  return `| \`${code}\` | ${s.status} | ${s.exit} | ${cell(audited)} | ${cell(meaning)} |`;
}

const HEADER = ['| Code | HTTP | Exit | Audited | Meaning |', '|---|---|---|---|---|'];

/** The Markdown of docs/errors.md, generated from the error table. */
export function renderErrorDocs(): string {
  return [
    '<!-- Generated from src/core/error-codes.ts by `npm run docs:errors`; do not edit by hand. -->',
    '# Errors',
    '',
    'Every refusal carries a stable code. The HTTP API and the MCP tools send it as JSON',
    '`{code, message, details}`; the CLI prints `error CODE: message` on stderr (or the JSON on',
    "stdout with `--json`) and exits with the code's exit code. A code whose HTTP status is 500 is",
    'sent with a generic message naming the request id (the server log has the rest); an MCP tool',
    'reports every error as a tool result with `isError: true` and the same JSON.',
    '',
    "**Audited** says whether the refused attempt is written to the tenant's hash-chained audit log",
    '(an entry of the attempted operation with `refused: CODE`; see docs/design.md § Audit log). Logging',
    'a refusal is best effort: the refusal stands even if its entry could not be written.',
    '',
    '## CLI exit codes',
    '',
    '| Exit | Meaning |',
    '|---|---|',
    ...Object.entries(EXIT_MEANING).map(([k, v]) => `| ${k} | ${v} |`),
    '',
    '## Codes of the library (`MemauthError`)',
    '',
    ...HEADER,
    ...ERROR_CODES.map((c) => row(c, ERROR_TABLE[c])),
    '',
    '## Codes of the server edge (HTTP API and MCP)',
    '',
    'The CLI meets these from `serve`, `mcp` and `token`.',
    '',
    ...HEADER,
    ...EDGE_ERROR_CODES.map((c) => row(c, EDGE_ERROR_TABLE[c])),
    '',
  ].join('\n');
}
