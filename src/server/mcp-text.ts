/**
 * The text the MCP server shows the model: record lines, decision and dry-run summaries, tool
 * results and tool errors. Every field a principal chose is JSON-quoted (docs/design.md § What the
 * model sees); a tool error is the server's `{code, message, details}` (src/server/errors.ts,
 * whose statuses come from the error table) with `isError: true`.
 */
import type { CallToolResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import type { Evaluation } from '../api/requesters.js';
import type { VersionsView } from '../api/views.js';
import type { Decision, MemoryRecord } from '../core/types.js';
import { errorResponse } from './errors.js';

/**
 * Characters a reader does not see but a model reads, or that reorder or break what follows:
 * NEL, LINE/PARAGRAPH SEPARATOR, bidi controls and marks, zero-width and other invisible format
 * characters (U+200B–U+200D, U+2060–U+206F, U+FEFF, soft hyphen, combining grapheme joiner,
 * Hangul fillers, Mongolian vowel separators), variation selectors, interlinear annotation
 * controls, and the Unicode tag characters (U+E0000–U+E0FFF) that can spell hidden instructions.
 */
const MODEL_UNSAFE =
  /[\u0085\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\u{1d173}-\u{1d17a}\u{e0000}-\u{e0fff}]/gu;

/** `c` as JSON `\uXXXX` escapes (a surrogate pair for a character outside the BMP): visible, and still valid JSON inside a string. */
const escapeChar = (c: string): string => {
  let out = '';
  for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`;
  return out;
};

/**
 * `text` with every invisible, bidi or line-breaking character (see MODEL_UNSAFE) written as a
 * visible `\uXXXX` escape, so attacker text cannot hide an instruction, reorder what follows, or
 * start a line of its own in what the model sees (docs/design.md § What the model sees).
 */
export const markInvisible = (text: string): string => text.replace(MODEL_UNSAFE, escapeChar);

/**
 * JSON text for the model with the characters JSON leaves raw but readers do not see, take as
 * line breaks, or use to reorder text written as `\uXXXX` escapes ({@link markInvisible}): a quoted
 * field cannot hide text, start a line of its own or reorder what follows. Valid JSON (they only
 * occur inside strings).
 */
export const modelJson = (v: unknown, space?: number): string => markInvisible(JSON.stringify(v, null, space));

const clip = (s: string | null, n = 160): string => (s === null ? '(deleted)' : s.length > n ? `${modelJson(s.slice(0, n))}…` : modelJson(s));

/** A field of a record shown to the model: always a JSON string, so no text can forge structure. */
const q = (s: string): string => modelJson(s);

/**
 * One line naming a record's origin authority and taint, for the model and the user to see. Every
 * field a principal chose (writer id, source, content) is JSON-quoted: a source holding `]` or a
 * line break cannot forge another origin (docs/design.md § What the model sees).
 */
export function recordLine(r: MemoryRecord, extra = ''): string {
  const ch = r.taint.channels.length > 0 ? `; channels ${r.taint.channels.join(',')}` : '';
  return `${q(r.id)} [origin ${r.origin.authority} by ${q(r.origin.principalId)} from ${q(r.origin.sourceRef)}; taint ${r.taint.lowestAuthority}${ch}${extra}] ${r.status === 'active' ? '' : `(${r.status}) `}${clip(r.content)}`;
}

/**
 * The line a record with several versions adds (docs/design.md § Memory record): when its current
 * versions compete, each with its action authority, writer and content, so the model sees the
 * dispute rather than one side of it; else the chain's size. Every principal-chosen field JSON-quoted.
 */
export function versionsLine(v: VersionsView | undefined): string {
  if (v === undefined) return '';
  const current = v.history.filter((h) => h.current);
  if (!v.conflict) return `\n  versions: ${v.history.length} in chain ${q(v.chain)}; current ${current.map((h) => q(h.id)).join(', ')}`;
  const each = current.map((h) => `${q(h.id)} (action authority ${h.actionAuthority}, by ${q(h.principalId)}) ${clip(h.content)}`);
  return `\n  versions CONFLICT in chain ${q(v.chain)}: ${current.length} competing current versions: ${each.join('; ')}`;
}

/** The reasons and dependencies of a decision or dry run, every principal-chosen field JSON-quoted. */
function gateLines(d: Pick<Decision, 'reasons' | 'dependencies' | 'notice'>): string[] {
  const reasons = d.reasons.map((r) => `${r.code}${r.argument !== undefined ? `(${q(r.argument)})` : ''}${r.memoryIds.length ? ` [${r.memoryIds.map(q).join(', ')}]` : ''}`);
  const deps = d.dependencies.map((x) => `${q(x.memoryId)}: ${x.actionAuthority} (${x.why.join('+')})`);
  return [
    ...(d.notice !== undefined ? [`notice: ${markInvisible(d.notice)}`] : []),
    ...(reasons.length ? [`reasons: ${reasons.join('; ')}`] : []),
    ...(deps.length ? [`dependencies: ${deps.join('; ')}`] : []),
  ];
}

export function decisionText(d: Decision): string {
  return [
    `decision ${d.id}: ${d.outcome} (${q(d.action.type)}, tier ${d.tier}, mode ${d.mode})`,
    ...gateLines(d),
    d.outcome === 'allow'
      ? 'you may proceed with exactly this action'
      : d.outcome === 'would_deny'
        ? 'observe mode: allowed, but it would be denied under enforcement'
        : 'do not perform this action; ask the user to confirm it if they want it',
  ].join('\n');
}

export function evaluationText(e: Evaluation): string {
  return [
    `dry run: authorize_action would ${e.outcome === 'allow' ? 'allow' : e.outcome === 'would_deny' ? 'let through (would_deny, observe mode)' : 'deny'} this ${q(e.action.type)} now (tier ${e.tier}, mode ${e.mode}); nothing was recorded and no confirmation was used`,
    ...gateLines(e),
    'call authorize_action before performing it',
  ].join('\n');
}

export function result(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: `${text}\n\n${modelJson(structured)}` }], structuredContent: structured };
}

export function toolError(e: unknown): CallToolResult {
  const { body } = errorResponse(e, 'mcp');
  return { content: [{ type: 'text', text: modelJson(body) }], isError: true };
}

export const jsonResource = (uri: URL, value: unknown): ReadResourceResult => ({ contents: [{ uri: uri.href, mimeType: 'application/json', text: modelJson(value, 2) }] });
