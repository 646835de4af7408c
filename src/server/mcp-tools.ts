/**
 * The tool table of the MCP server, like the HTTP route table (src/server/routes/*.ts): each tool
 * is one entry — name, title, description, input and output schemas, hints and a NAMED handler —
 * so a reader goes from a tool to the `Memory` method it calls in one step. src/server/mcp.ts
 * registers the table on each connection's server.
 *
 * No tool takes a session, principal, context, dependsOn or confirmation id: those are the
 * connection's (docs/design.md § What the model sees), fixed in the {@link ToolCall} every
 * handler gets; unknown arguments are refused by the strict input schemas.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Memory } from '../api/memory.js';
import { schemas } from '../api/validation.js';
import type { Decision, Principal } from '../core/types.js';
import type { ServerConfig } from './config.js';
import { type ReplayView, recordFor } from './exposure.js';
import { decisionText, evaluationText, recordLine, result } from './mcp-text.js';
import { assertMayDelete, checkContent } from './routes/common.js';
import { responses } from './schemas.js';

/** What every tool handler gets: the connection's binding, never the model's choice. */
export interface ToolCall {
  readonly mem: Memory;
  readonly tenant: string;
  /** the connection's principal: the writer of what it stores and the requester of every call. */
  readonly principal: Principal;
  /** the memauth session of the connection. */
  readonly session: string;
  /** which session reads count as dependencies (the application's choice). */
  readonly context: 'session' | 'declared';
  readonly config: Pick<ServerConfig, 'maxContentChars'>;
  /** a decision this connection's principal requested (`DECISION_NOT_FOUND` for another's). */
  ownDecision(decisionId: string): Promise<Decision>;
  /** the replay of such a decision. */
  replayOwn(decisionId: string): Promise<ReplayView>;
  /** count one recorded decision against the connection's budget; throws `RATE_LIMITED` past it. */
  admitDecision(): void;
}

/** One MCP tool: its registration and its handler. */
export interface ToolSpec<S extends z.ZodType> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: S;
  readonly output: z.ZodType;
  /** MCP hints: reads only (`readOnlyHint`); erases data (`destructiveHint`). */
  readonly readOnly: boolean;
  readonly destructive?: boolean;
  readonly handler: (call: ToolCall, args: z.output<S>) => Promise<CallToolResult>;
}

/** A tool with its input type erased, as the table holds it. */
export type AnyTool = ToolSpec<z.ZodType<unknown>>;

/** Declare a tool (keeps the handler's argument type tied to its input schema). */
function tool<S extends z.ZodType>(spec: ToolSpec<S>): AnyTool {
  return spec as unknown as AnyTool;
}

// the action alone: the trust boundary (context, dependsOn) and the confirmation are not the model's to choose
const actionInput = z.strictObject({ action: schemas.authorize.shape.action });
const rememberInput = schemas.write.pick({ scope: true, content: true, source: true, sourceAt: true, expiresAt: true, reason: true });
const recallInput = schemas.search.pick({ scope: true, query: true, limit: true });
const summarizeInput = schemas.derive
  .pick({ from: true, content: true, scope: true, narrowInputs: true, expiresAt: true, reason: true })
  .extend({ transform: schemas.derive.shape.transform.default('summarize') });
const forgetInput = schemas.delete.pick({ id: true, reason: true });

/** `remember` → `Memory.write` as the connection's principal, in its session. */
async function remember(c: ToolCall, a: z.output<typeof rememberInput>): Promise<CallToolResult> {
  checkContent(c.config, a.content);
  const r = await c.mem.write({ ...a, tenant: c.tenant, principal: c.principal.id, session: c.session, requester: c.principal.id });
  return result(r.created ? `stored ${recordLine(r.record)}` : `already in memory: ${recordLine(r.record)}`, { ...r });
}

/** `recall` → `Memory.search` (hits marked read in the session). */
async function recall(c: ToolCall, a: z.output<typeof recallInput>): Promise<CallToolResult> {
  const hits = await c.mem.search({ ...a, tenant: c.tenant, session: c.session, requester: c.principal.id });
  const shown = hits.map((h) => ({ ...h, record: recordFor(true, h.record) }));
  return result(shown.length === 0 ? 'no memory matches' : shown.map((h) => recordLine(h.record)).join('\n'), { hits: shown });
}

/** `get_memory` → `Memory.get` (marked read in the session). */
async function getMemory(c: ToolCall, a: { id: string }): Promise<CallToolResult> {
  const v = recordFor(true, await c.mem.get({ tenant: c.tenant, id: a.id, session: c.session, requester: c.principal.id }));
  return result(recordLine(v, `; action authority ${v.actionAuthority}`), { ...v });
}

/** `summarize_into_memory` → `Memory.derive` (every session read is an input). */
async function summarizeIntoMemory(c: ToolCall, a: z.output<typeof summarizeInput>): Promise<CallToolResult> {
  checkContent(c.config, a.content);
  const r = await c.mem.derive({ ...a, tenant: c.tenant, principal: c.principal.id, session: c.session, requester: c.principal.id });
  return result(`stored ${recordLine(r)}`, { ...r });
}

/** `check_action` → `Memory.evaluate` (dry run: records and consumes nothing). */
async function checkAction(c: ToolCall, a: z.output<typeof actionInput>): Promise<CallToolResult> {
  const e = await c.mem.evaluate({ action: a.action, tenant: c.tenant, session: c.session, requester: c.principal.id, context: c.context });
  return result(evaluationText(e), { ...e });
}

/** `authorize_action` → `Memory.authorize` (the recorded, audited decision). */
async function authorizeAction(c: ToolCall, a: z.output<typeof actionInput>): Promise<CallToolResult> {
  c.admitDecision();
  const d = await c.mem.authorize({ action: a.action, tenant: c.tenant, session: c.session, requester: c.principal.id, context: c.context });
  return result(decisionText(d), { ...d });
}

/** `forget` → `Memory.delete` of a record the principal may delete (its own). */
async function forget(c: ToolCall, a: z.output<typeof forgetInput>): Promise<CallToolResult> {
  await assertMayDelete(c.mem, c.tenant, c.principal, a.id);
  const r = recordFor(true, await c.mem.delete({ tenant: c.tenant, id: a.id, principal: c.principal.id, reason: a.reason }));
  return result(`deleted ${r.id} (content erased; hash and provenance kept)`, { ...r });
}

/** `replay_decision` → `Memory.replay` of a decision the principal requested. */
async function replayDecision(c: ToolCall, a: { decisionId: string }): Promise<CallToolResult> {
  const r = await c.replayOwn(a.decisionId);
  return result(`decision ${r.decisionId}: recorded ${r.recorded.outcome}, replayed ${r.replayed.outcome}: ${r.matches ? 'matches' : 'MISMATCH'}`, { ...r });
}

/** `verify_audit` → `Memory.verifyAudit` of the connection's tenant. */
async function verifyAudit(c: ToolCall): Promise<CallToolResult> {
  const r = await c.mem.verifyAudit({ tenant: c.tenant });
  return result(r.tenants.map((t) => t.message).join('\n') || `tenant ${c.tenant}: no audit entries yet`, { ...r });
}

/** The MCP tools, in registration order. */
export const MCP_TOOLS: readonly AnyTool[] = [
  tool({
    name: 'remember',
    title: 'Remember',
    description:
      "Store a memory. Its origin authority is decided by memauth, not by you: at most your principal's ceiling and the authority of `source` (a URL, message id or file path the text came from; omit it for your own statement). Text recalled from memory and repeated here resolves to the original record.",
    input: rememberInput,
    output: responses.WriteResult,
    readOnly: false,
    handler: remember,
  }),
  tool({
    name: 'recall',
    title: 'Recall',
    description:
      'Search memory in one scope (full text, best first). Each hit shows its origin authority and taint. Recalled records are marked read in this session: they taint what you summarize and the actions you check.',
    input: recallInput,
    output: responses.SearchResult,
    readOnly: false,
    handler: recall,
  }),
  tool({
    name: 'get_memory',
    title: 'Get a memory',
    description: 'One record by id, with its origin, taint, action authority (lifted only by independent corroboration) and deleted sources. Marked read in this session.',
    input: schemas.get.pick({ id: true }),
    output: responses.RecordView,
    readOnly: false,
    handler: getMemory,
  }),
  tool({
    name: 'summarize_into_memory',
    title: 'Summarize into memory',
    description:
      'Store a summary (or extract, rewrite, merge…) of records as a new record. Its taint is the lowest authority of its inputs: the `from` records plus everything read in this session — a summary of untrusted text stays untrusted however clean it reads.',
    input: summarizeInput,
    output: responses.MemoryRecord,
    readOnly: false,
    handler: summarizeIntoMemory,
  }),
  tool({
    name: 'check_action',
    title: 'Check an action (dry run)',
    description:
      "Dry run of memauth's action gate: what authorize_action would decide for this action now. Records nothing and consumes nothing: no decision, no audit entry, no confirmation used up, no read marked. Returns outcome allow | deny | would_deny, reasons naming the memory ids, and the dependencies with their authority. It does not authorize anything: call authorize_action before performing the action.",
    input: actionInput,
    output: responses.Evaluation,
    readOnly: true,
    handler: checkAction,
  }),
  tool({
    name: 'authorize_action',
    title: 'Authorize an action',
    description:
      "Ask memauth's action gate to authorize an action, right before performing it; the decision is recorded and audited. Returns outcome allow | deny | would_deny, reasons (untrusted_origin, missing_corroboration, needs_confirmation, metadata_missing, deleted_source, expired) naming the memory ids, and the dependencies with their authority. Everything read in this session counts. An allow that rests on a user's single-use confirmation CONSUMES it: call this once, for the action you are about to perform.",
    input: actionInput,
    output: responses.Decision,
    readOnly: false,
    handler: authorizeAction,
  }),
  tool({
    name: 'forget',
    title: 'Forget',
    description: 'Delete a record you wrote: its content and index entries are erased; its hash, provenance and audit trail stay, and records derived from it keep their taint.',
    input: forgetInput,
    output: responses.MemoryRecord,
    readOnly: false,
    destructive: true,
    handler: forget,
  }),
  tool({
    name: 'replay_decision',
    title: 'Replay a decision',
    description:
      'Rebuild a decision you requested from the audit log alone (dependencies, lineage, origins, corroborations, confirmations, policy) and re-evaluate it; `matches` says whether it agrees with the recorded outcome.',
    input: schemas.replay.pick({ decisionId: true }),
    output: responses.ReplayResult,
    readOnly: true,
    handler: replayDecision,
  }),
  tool({
    name: 'verify_audit',
    title: 'Verify the audit chain',
    description: "Verify this tenant's hash-chained audit log, its newest signed checkpoint and every row against the chain.",
    input: z.strictObject({}),
    output: responses.AuditReport,
    readOnly: true,
    handler: verifyAudit,
  }),
];
