/**
 * The tool table of the MCP server, like the HTTP route table (src/server/routes/*.ts): each tool
 * is one entry — name, title, description, input schema, hints and a NAMED handler — so a reader
 * goes from a tool to the `Memory` method it calls in one step. src/server/mcp.ts registers the
 * table on each connection's server. `tools/list` is read into the model's context on every
 * turn: descriptions are terse, every input property has one, and no output schema is listed
 * (results carry their text and `structuredContent`, whose shapes are in the OpenAPI document).
 *
 * No tool takes a session, principal, context, dependsOn or confirmation id: those are the
 * connection's (docs/design.md § What the model sees), fixed in the {@link ToolCall} every
 * handler gets; unknown arguments are refused by the strict input schemas.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Memory } from '../api/memory.js';
import type { StoreOptions } from '../api/options.js';
import { DEFAULT_SEARCH_LIMIT } from '../api/search.js';
import { schemas } from '../api/validation.js';
import type { AuditReport } from '../api/verify.js';
import type { Decision, Principal } from '../core/types.js';
import type { ServerConfig } from './config.js';
import { type ReplayView, assertCitesOwn, assertNotExternalReader, assertSupersedesOwn, recordFor } from './exposure.js';
import { decisionAs, supersedeAs } from './external-ids.js';
import { decisionText, evaluationText, modelJson, recordLine, result, versionsLine } from './mcp-text.js';
import { assertMayDelete, checkContent } from './routes/common.js';
import { markedByGet, markedBySearch } from './write-budget.js';

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
  /** count one decision against the connection's budget (`stores`: it will be recorded, so the byte budget must not be spent); throws `RATE_LIMITED` past it. */
  admitDecision(stores: boolean): void;
  /** take the bytes a built decision or record is about to store (besides a record's content) from the connection's write budget, before it is recorded; throws `CONTENT_TOO_LONG` or `RATE_LIMITED` to refuse it. */
  storingBytes(bytes: number, field: 'decision' | 'record'): void;
  /** count one stored record of `content` against the connection's write budget; throws `CONTENT_TOO_LONG` or `RATE_LIMITED` past it. */
  admitWrite(content: string, claims?: readonly unknown[]): void;
  /** run a read in the session within the connection's read budget (`most` records it may mark, `marked` those it did); throws `RATE_LIMITED` past it. */
  reading<T>(most: number, read: () => Promise<T>, marked: (result: T) => number): Promise<T>;
  /** the audit verification of the connection's tenant, in the server's expensive-request slots (`TOO_MANY_REQUESTS` when full). */
  verifyAudit(): Promise<AuditReport>;
}

/** One MCP tool: its registration and its handler. */
export interface ToolSpec<S extends z.ZodType> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: S;
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

/** `schema` with a description on each property named in `text` (every property of a tool's input has one). */
function described<T extends z.ZodRawShape>(schema: z.ZodObject<T>, text: { readonly [K in keyof T]: string }): z.ZodObject<T> {
  const shape: Record<string, z.ZodType> = {};
  for (const [k, v] of Object.entries(schema.shape)) shape[k] = (v as z.ZodType).describe(text[k as keyof T]);
  return schema.extend(shape) as unknown as z.ZodObject<T>;
}

const TEXT = {
  scope: 'memory scope, e.g. "vendors"',
  expiresAt: 'ISO date-time after which it is not used',
  reason: 'why (kept in the audit log)',
  id: 'record id',
  claims: 'facts it states, [{subject, field, value}], e.g. {"subject":"Acme","field":"payee_account","value":"ACME-AP"}; same authority as the memory',
  source: 'its source (URL, message id, file); omit if it is yours',
};

// the action alone: the trust boundary (context, dependsOn) and the confirmation are not the model's to choose
const actionInput = z.strictObject({
  action: described(schemas.authorize.shape.action, {
    type: 'action type, e.g. "pay"',
    args: 'the arguments exactly as you will perform them',
    resource: 'what it acts on, if not in args',
  }).describe('the action you are about to perform'),
});
const rememberInput = described(schemas.write.pick({ scope: true, content: true, source: true, sourceAt: true, expiresAt: true, reason: true, claims: true }), {
  scope: TEXT.scope,
  content: 'the text to store',
  source: TEXT.source,
  sourceAt: 'ISO date-time the source said it',
  expiresAt: TEXT.expiresAt,
  reason: TEXT.reason,
  claims: TEXT.claims,
});
const recallInput = described(schemas.search.pick({ scope: true, query: true, limit: true, mode: true }), {
  scope: TEXT.scope,
  query: 'words to search for (or a description, with an embedder)',
  limit: 'most hits to return',
  mode: 'lexical | semantic | hybrid (default: hybrid with an embedder, else lexical)',
});
const summarizeInput = described(
  schemas.derive.pick({ from: true, content: true, scope: true, narrowInputs: true, expiresAt: true, reason: true }).extend({ transform: schemas.derive.shape.transform.default('summarize') }),
  {
    from: 'ids of the records it is made from',
    content: 'the summary text',
    scope: TEXT.scope,
    narrowInputs: 'count only `from`, not everything read in this session',
    expiresAt: TEXT.expiresAt,
    reason: TEXT.reason,
    transform: 'summarize, extract, rewrite, merge…',
  },
);
const supersedeInput = described(schemas.supersede.pick({ id: true, content: true, reason: true, source: true, expiresAt: true, claims: true }), {
  id: 'id of a current version of the record',
  content: 'the new text',
  claims: TEXT.claims,
  reason: TEXT.reason,
  source: TEXT.source,
  expiresAt: TEXT.expiresAt,
});
const forgetInput = described(schemas.delete.pick({ id: true, reason: true }), { id: TEXT.id, reason: TEXT.reason });

/** `remember` → `Memory.write` as the connection's principal, in its session. */
async function remember(c: ToolCall, a: z.output<typeof rememberInput>): Promise<CallToolResult> {
  checkContent(c.config, a.content);
  c.admitWrite(a.content, a.claims);
  const r = await c.mem.write({ ...a, tenant: c.tenant, principal: c.principal.id, session: c.session, requester: c.principal.id }, storedBy(c));
  return result(r.created ? `stored ${recordLine(r.record)}` : `already in memory: ${recordLine(r.record)}`, { ...r });
}

/** `recall` → `Memory.search` (hits marked read in the session). */
async function recall(c: ToolCall, a: z.output<typeof recallInput>): Promise<CallToolResult> {
  assertNotExternalReader(c.principal.kind, 'memory (recall)');
  const r = await c.reading(a.limit ?? DEFAULT_SEARCH_LIMIT, () => c.mem.searchWithInfo({ ...a, tenant: c.tenant, session: c.session, requester: c.principal.id }), markedBySearch);
  const shown = r.hits.map((h) => ({ ...h, record: recordFor(true, h.record) }));
  const seen = new Set<string>();
  const line = (h: (typeof shown)[number]): string => {
    const chain = h.versions?.chain;
    const once = chain === undefined || seen.has(chain) ? '' : versionsLine(h.versions);
    if (chain !== undefined) seen.add(chain);
    return recordLine(h.record) + once;
  };
  return result(shown.length === 0 ? 'no memory matches' : shown.map(line).join('\n'), { mode: r.mode, reason: r.reason, hits: shown });
}

/** `get_memory` → `Memory.get` (marked read in the session). */
async function getMemory(c: ToolCall, a: { id: string }): Promise<CallToolResult> {
  assertNotExternalReader(c.principal.kind, 'a memory record');
  const v = recordFor(true, await c.reading(1, () => c.mem.get({ tenant: c.tenant, id: a.id, session: c.session, requester: c.principal.id }), markedByGet));
  return result(recordLine(v, `; action authority ${v.actionAuthority}`) + versionsLine(v.versions), { ...v });
}

/** `supersede_memory` → `Memory.supersede` as the connection's principal, in its session (an external or tool principal: only its own records). */
async function supersedeMemory(c: ToolCall, a: z.output<typeof supersedeInput>): Promise<CallToolResult> {
  checkContent(c.config, a.content);
  await assertSupersedesOwn(c.mem, c.tenant, c.principal, a.id);
  c.admitWrite(a.content, a.claims);
  const r = await supersedeAs(c.mem, c.principal, { ...a, tenant: c.tenant, principal: c.principal.id, session: c.session, requester: c.principal.id }, storedBy(c));
  const state = r.conflict
    ? `it COMPETES with the current versions ${r.current
        .filter((id) => id !== r.record.id)
        .map((id) => modelJson(id))
        .join(', ')} (it does not outrank them)`
    : 'it is the current version';
  return result(`stored new version ${recordLine(r.record)}\n${state}`, { ...r });
}

/** A write's `beforeRecord`: what the record stores besides its content counts against the connection's write budget. */
const storedBy = (c: ToolCall): StoreOptions => ({ beforeRecord: (bytes) => c.storingBytes(bytes, 'record') });

/** `summarize_into_memory` → `Memory.derive` (every session read is an input). */
async function summarizeIntoMemory(c: ToolCall, a: z.output<typeof summarizeInput>): Promise<CallToolResult> {
  checkContent(c.config, a.content);
  c.admitWrite(a.content);
  await assertCitesOwn(c.mem, c.tenant, c.principal, a.from, 'from');
  const r = await c.mem.derive({ ...a, tenant: c.tenant, principal: c.principal.id, session: c.session, requester: c.principal.id }, storedBy(c));
  return result(`stored ${recordLine(r)}`, { ...r });
}

/** `check_action` → `Memory.evaluate` (dry run: records and consumes nothing). */
async function checkAction(c: ToolCall, a: z.output<typeof actionInput>): Promise<CallToolResult> {
  c.admitDecision(false);
  const e = await decisionAs(c.mem, c.principal, await c.mem.evaluate({ action: a.action, tenant: c.tenant, session: c.session, requester: c.principal.id, context: c.context }));
  return result(evaluationText(e), { ...e });
}

/** `authorize_action` → `Memory.authorize` (the recorded, audited decision). */
async function authorizeAction(c: ToolCall, a: z.output<typeof actionInput>): Promise<CallToolResult> {
  c.admitDecision(true);
  const recorded = await c.mem.authorize(
    { action: a.action, tenant: c.tenant, session: c.session, requester: c.principal.id, context: c.context },
    { beforeRecord: (bytes) => c.storingBytes(bytes, 'decision') },
  );
  const d = await decisionAs(c.mem, c.principal, recorded);
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
  const r = await c.verifyAudit();
  return result(r.tenants.map((t) => t.message).join('\n') || `tenant ${c.tenant}: no audit entries yet`, { ...r });
}

/** The MCP tools, in registration order. */
export const MCP_TOOLS: readonly AnyTool[] = [
  tool({
    name: 'remember',
    title: 'Remember',
    description: "Store a memory. memauth decides its authority: at most your ceiling and its source's. Recalled text repeated here resolves to its original record.",
    input: rememberInput,
    readOnly: false,
    handler: remember,
  }),
  tool({
    name: 'recall',
    title: 'Recall',
    description: 'Search one scope (by words, or by meaning when the server has an embedder), best first; each hit shows its authority and taint. Hits count as read in this session.',
    input: recallInput,
    readOnly: false,
    handler: recall,
  }),
  tool({
    name: 'get_memory',
    title: 'Get a memory',
    description: 'One record with its origin, taint and action authority. Counts as read in this session.',
    input: described(schemas.get.pick({ id: true }), { id: TEXT.id }),
    readOnly: false,
    handler: getMemory,
  }),
  tool({
    name: 'supersede_memory',
    title: 'Update a memory',
    description:
      'Store a new version of a record; the old one stays in its history. Its authority is decided as for remember; below a current version it does not replace it but competes with it, and both are shown.',
    input: supersedeInput,
    readOnly: false,
    handler: supersedeMemory,
  }),
  tool({
    name: 'summarize_into_memory',
    title: 'Summarize into memory',
    description: 'Store a summary of records. It keeps the lowest authority of its inputs (`from` and everything read in this session).',
    input: summarizeInput,
    readOnly: false,
    handler: summarizeIntoMemory,
  }),
  tool({
    name: 'check_action',
    title: 'Check an action (dry run)',
    description: 'Dry run of authorize_action. Records nothing and consumes nothing; authorizes nothing.',
    input: actionInput,
    readOnly: true,
    handler: checkAction,
  }),
  tool({
    name: 'authorize_action',
    title: 'Authorize an action',
    description:
      "Call right before a consequential action; follow the outcome (allow, deny, would_deny) and its reasons. Recorded and audited. An allow resting on a user's single-use confirmation CONSUMES it: call once per action.",
    input: actionInput,
    readOnly: false,
    handler: authorizeAction,
  }),
  tool({
    name: 'forget',
    title: 'Forget',
    description: 'Erase the content of a record you wrote; its provenance and audit trail stay.',
    input: forgetInput,
    readOnly: false,
    destructive: true,
    handler: forget,
  }),
  tool({
    name: 'replay_decision',
    title: 'Replay a decision',
    description: 'Re-evaluate a decision you requested from the audit log; `matches` says if it agrees.',
    input: described(schemas.replay.pick({ decisionId: true }), { decisionId: 'id of a decision you requested' }),
    readOnly: true,
    handler: replayDecision,
  }),
  tool({
    name: 'verify_audit',
    title: 'Verify the audit chain',
    description: "Verify this tenant's audit chain and checkpoint.",
    input: z.strictObject({}),
    readOnly: true,
    handler: verifyAudit,
  }),
];
