/**
 * The text the MCP server shows the model: record lines, decision and dry-run summaries, tool
 * results and tool errors. Every field a principal chose is JSON-quoted (docs/design.md § What the
 * model sees); a tool error is the server's `{code, message, details}` (src/server/errors.ts,
 * whose statuses come from the error table) with `isError: true`.
 */
import type { CallToolResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import type { Evaluation } from '../api/requesters.js';
import type { Decision, MemoryRecord } from '../core/types.js';
import { errorResponse } from './errors.js';

/**
 * JSON text for the model with the characters JSON leaves raw but readers take as line breaks or
 * reordering (NEL, LINE/PARAGRAPH SEPARATOR, bidi controls) written as `\uXXXX` escapes: a
 * quoted field cannot start a line of its own or reorder what follows. Valid JSON (they only occur
 * inside strings).
 */
const MODEL_UNSAFE = /[\u0085\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
export const modelJson = (v: unknown, space?: number): string => JSON.stringify(v, null, space).replace(MODEL_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

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

/** The reasons and dependencies of a decision or dry run, every principal-chosen field JSON-quoted. */
function gateLines(d: Pick<Decision, 'reasons' | 'dependencies'>): string[] {
  const reasons = d.reasons.map((r) => `${r.code}${r.argument !== undefined ? `(${q(r.argument)})` : ''}${r.memoryIds.length ? ` [${r.memoryIds.map(q).join(', ')}]` : ''}`);
  const deps = d.dependencies.map((x) => `${q(x.memoryId)}: ${x.actionAuthority} (${x.why.join('+')})`);
  return [...(reasons.length ? [`reasons: ${reasons.join('; ')}`] : []), ...(deps.length ? [`dependencies: ${deps.join('; ')}`] : [])];
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
