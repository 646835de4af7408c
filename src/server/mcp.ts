/**
 * The MCP server (official TypeScript SDK): the tools an agent uses — remember, recall,
 * get_memory, summarize_into_memory, check_action (dry run), authorize_action (the decision),
 * forget, replay_decision, verify_audit — and resources for decisions, their replay and the
 * audit verification.
 *
 * A connection is bound to one principal (an agent, tool or external principal, fixed by its
 * bearer token) and one memauth session: everything the agent stores gets that principal's
 * ceiling and its source's authority, everything it recalls is marked read in the session and
 * taints what it summarizes and the actions it checks. The model cannot choose another session
 * or principal, nor the trust boundary (docs/design.md § What the model sees: which context counts and
 * which dependencies are declared is the application's choice): no tool takes a session,
 * principal, context, dependsOn or confirmation id, and unknown arguments are refused. The
 * connection's principal is the requester of every call: it owns the session and only
 * confirmations that admit it are used.
 */
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Memory } from '../api/memory.js';
import type { Evaluation } from '../api/requesters.js';
import { schemas } from '../api/validation.js';
import { MemauthError } from '../core/errors.js';
import type { Decision, MemoryRecord, Principal } from '../core/types.js';
import { HttpError, errorResponse } from './errors.js';
import { assertDecisionVisible, recordFor, replayFor } from './exposure.js';
import { assertMayDelete, checkContent } from './routes/common.js';
import { responses } from './schemas.js';
import type { Identity } from './tokens.js';
import type { ServerConfig } from './config.js';

/** What an MCP connection is bound to. */
export interface McpBinding {
  readonly mem: Memory;
  readonly tenant: string;
  readonly principal: Principal;
  /** the memauth session of this connection (recall marks reads in it; derive and check_action use it). */
  readonly session: string;
  readonly config: Pick<ServerConfig, 'maxContentChars'>;
  /**
   * Which reads of the session count as dependencies of the actions it checks: `session` (the
   * default: everything read) or `declared` (only records that supply a value). The
   * application's choice, never the model's: no tool takes it.
   */
  readonly context?: 'session' | 'declared';
  /** called before every tool call and resource read; throws to refuse (e.g. the token was revoked). */
  readonly recheck?: () => Promise<void>;
  readonly version: string;
}

/** Principal kinds an MCP connection may be bound to: never a user's or the system's authority. */
export const MCP_PRINCIPAL_KINDS: ReadonlySet<Principal['kind']> = new Set(['agent', 'tool', 'external']);

/**
 * The principal an MCP connection is bound to.
 * @throws HttpError `MCP_PRINCIPAL_KIND` (403) for the admin token or a user/system principal.
 */
export function mcpPrincipal(identity: Identity): { tenant: string; principal: Principal } {
  if (identity.kind !== 'principal' || !MCP_PRINCIPAL_KINDS.has(identity.principal.kind)) {
    const what = identity.kind === 'admin' ? 'the admin token' : `a principal of kind ${identity.principal.kind}`;
    throw new HttpError(403, 'MCP_PRINCIPAL_KIND', `an MCP connection is bound to an agent, tool or external principal, not ${what}`, { kind: identity.kind === 'admin' ? 'admin' : identity.principal.kind });
  }
  return { tenant: identity.tenant, principal: identity.principal };
}

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

function decisionText(d: Decision): string {
  return [`decision ${d.id}: ${d.outcome} (${q(d.action.type)}, tier ${d.tier}, mode ${d.mode})`, ...gateLines(d), d.outcome === 'allow' ? 'you may proceed with exactly this action' : d.outcome === 'would_deny' ? 'observe mode: allowed, but it would be denied under enforcement' : 'do not perform this action; ask the user to confirm it if they want it'].join('\n');
}

function evaluationText(e: Evaluation): string {
  return [`dry run: authorize_action would ${e.outcome === 'allow' ? 'allow' : e.outcome === 'would_deny' ? 'let through (would_deny, observe mode)' : 'deny'} this ${q(e.action.type)} now (tier ${e.tier}, mode ${e.mode}); nothing was recorded and no confirmation was used`, ...gateLines(e), 'call authorize_action before performing it'].join('\n');
}

function result(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: `${text}\n\n${modelJson(structured)}` }], structuredContent: structured };
}

function toolError(e: unknown): CallToolResult {
  const { body } = errorResponse(e, 'mcp');
  return { content: [{ type: 'text', text: modelJson(body) }], isError: true };
}

const json = (uri: URL, value: unknown): ReadResourceResult => ({ contents: [{ uri: uri.href, mimeType: 'application/json', text: modelJson(value, 2) }] });

/**
 * Build an MCP server bound to one principal and session (see the module comment). Connect it to
 * a transport (stdio, or Streamable HTTP in src/server/mcp-http.ts).
 */
export function createMcpServer(b: McpBinding): McpServer {
  const { mem, tenant, principal, session } = b;
  const requester = principal.id;
  const context = b.context ?? 'session';
  // the action alone: the trust boundary (context, dependsOn) and the confirmation are not the model's to choose
  const actionInput = z.strictObject({ action: schemas.authorize.shape.action });
  const server = new McpServer(
    { name: 'memauth', version: b.version },
    {
      instructions: `memauth memory for principal ${q(principal.id)} (${principal.kind}, ceiling ${principal.maxAuthority}) in tenant ${q(tenant)}. Every record shows its origin authority: what you store gets at most your ceiling and its source's authority. Call authorize_action before any consequential action (payment, email, permission change, deploy, data export) and follow the decision; check_action is a dry run that records and consumes nothing.`,
    },
  );
  // decisions are not records: the connection sees only those its principal requested, another's answers like a missing one
  const ownDecision = async (decisionId: string): Promise<Decision> => assertDecisionVisible(requester, tenant, await mem.getDecision({ tenant, decisionId }));
  const replayOwn = async (decisionId: string) => {
    await ownDecision(decisionId);
    return replayFor(null, mem, await mem.replay({ tenant, decisionId }));
  };
  const guard = async <T>(fn: () => Promise<T>): Promise<T> => {
    if (b.recheck) await b.recheck();
    return fn();
  };
  const tool = <S extends z.ZodType>(name: string, config: { title: string; description: string; input: S; output: z.ZodType; readOnly: boolean }, run: (args: z.output<S>) => Promise<CallToolResult>): void => {
    server.registerTool(
      name,
      { title: config.title, description: config.description, inputSchema: config.input, outputSchema: config.output, annotations: { readOnlyHint: config.readOnly, destructiveHint: name === 'forget', openWorldHint: false } },
      // The SDK types the callback from the schema generically; the args are validated by it against `input`.
      (async (args: unknown) => {
        try {
          return await guard(() => run(args as z.output<S>));
        } catch (e) {
          return toolError(e);
        }
      }) as never,
    );
  };

  tool(
    'remember',
    {
      title: 'Remember',
      description:
        'Store a memory. Its origin authority is decided by memauth, not by you: at most your principal\'s ceiling and the authority of `source` (a URL, message id or file path the text came from; omit it for your own statement). Text recalled from memory and repeated here resolves to the original record.',
      input: schemas.write.pick({ scope: true, content: true, source: true, sourceAt: true, expiresAt: true, reason: true }),
      output: responses.WriteResult,
      readOnly: false,
    },
    async (a) => {
      checkContent(b.config, a.content);
      const r = await mem.write({ ...a, tenant, principal: principal.id, session, requester });
      return result(r.created ? `stored ${recordLine(r.record)}` : `already in memory: ${recordLine(r.record)}`, { ...r });
    },
  );
  tool(
    'recall',
    {
      title: 'Recall',
      description: 'Search memory in one scope (full text, best first). Each hit shows its origin authority and taint. Recalled records are marked read in this session: they taint what you summarize and the actions you check.',
      input: schemas.search.pick({ scope: true, query: true, limit: true }),
      output: responses.SearchResult,
      readOnly: false,
    },
    async (a) => {
      const hits = await mem.search({ ...a, tenant, session, requester });
      const shown = hits.map((h) => ({ ...h, record: recordFor(true, h.record) }));
      return result(shown.length === 0 ? 'no memory matches' : shown.map((h) => recordLine(h.record)).join('\n'), { hits: shown });
    },
  );
  tool(
    'get_memory',
    {
      title: 'Get a memory',
      description: 'One record by id, with its origin, taint, action authority (lifted only by independent corroboration) and deleted sources. Marked read in this session.',
      input: schemas.get.pick({ id: true }),
      output: responses.RecordView,
      readOnly: false,
    },
    async (a) => {
      const v = recordFor(true, await mem.get({ tenant, id: a.id, session, requester }));
      return result(recordLine(v, `; action authority ${v.actionAuthority}`), { ...v });
    },
  );
  tool(
    'summarize_into_memory',
    {
      title: 'Summarize into memory',
      description:
        'Store a summary (or extract, rewrite, merge…) of records as a new record. Its taint is the lowest authority of its inputs: the `from` records plus everything read in this session — a summary of untrusted text stays untrusted however clean it reads.',
      input: schemas.derive.pick({ from: true, content: true, scope: true, narrowInputs: true, expiresAt: true, reason: true }).extend({ transform: schemas.derive.shape.transform.default('summarize') }),
      output: responses.MemoryRecord,
      readOnly: false,
    },
    async (a) => {
      checkContent(b.config, a.content);
      const r = await mem.derive({ ...a, tenant, principal: principal.id, session, requester });
      return result(`stored ${recordLine(r)}`, { ...r });
    },
  );
  tool(
    'check_action',
    {
      title: 'Check an action (dry run)',
      description:
        "Dry run of memauth's action gate: what authorize_action would decide for this action now. Records nothing and consumes nothing: no decision, no audit entry, no confirmation used up, no read marked. Returns outcome allow | deny | would_deny, reasons naming the memory ids, and the dependencies with their authority. It does not authorize anything: call authorize_action before performing the action.",
      input: actionInput,
      output: responses.Evaluation,
      readOnly: true,
    },
    async (a) => {
      const e = await mem.evaluate({ action: a.action, tenant, session, requester, context });
      return result(evaluationText(e), { ...e });
    },
  );
  tool(
    'authorize_action',
    {
      title: 'Authorize an action',
      description:
        "Ask memauth's action gate to authorize an action, right before performing it; the decision is recorded and audited. Returns outcome allow | deny | would_deny, reasons (untrusted_origin, missing_corroboration, needs_confirmation, metadata_missing, deleted_source, expired) naming the memory ids, and the dependencies with their authority. Everything read in this session counts. An allow that rests on a user's single-use confirmation CONSUMES it: call this once, for the action you are about to perform.",
      input: actionInput,
      output: responses.Decision,
      readOnly: false,
    },
    async (a) => {
      const d = await mem.authorize({ action: a.action, tenant, session, requester, context });
      return result(decisionText(d), { ...d });
    },
  );
  tool(
    'forget',
    {
      title: 'Forget',
      description: 'Delete a record you wrote: its content and index entries are erased; its hash, provenance and audit trail stay, and records derived from it keep their taint.',
      input: schemas.delete.pick({ id: true, reason: true }),
      output: responses.MemoryRecord,
      readOnly: false,
    },
    async (a) => {
      await assertMayDelete(mem, tenant, principal, a.id);
      const r = recordFor(true, await mem.delete({ tenant, id: a.id, principal: principal.id, reason: a.reason }));
      return result(`deleted ${r.id} (content erased; hash and provenance kept)`, { ...r });
    },
  );
  tool(
    'replay_decision',
    {
      title: 'Replay a decision',
      description: 'Rebuild a decision you requested from the audit log alone (dependencies, lineage, origins, corroborations, confirmations, policy) and re-evaluate it; `matches` says whether it agrees with the recorded outcome.',
      input: schemas.replay.pick({ decisionId: true }),
      output: responses.ReplayResult,
      readOnly: true,
    },
    async (a) => {
      const r = await replayOwn(a.decisionId);
      return result(`decision ${r.decisionId}: recorded ${r.recorded.outcome}, replayed ${r.replayed.outcome}: ${r.matches ? 'matches' : 'MISMATCH'}`, { ...r });
    },
  );
  tool(
    'verify_audit',
    {
      title: 'Verify the audit chain',
      description: "Verify this tenant's hash-chained audit log, its newest signed checkpoint and every row against the chain.",
      input: z.strictObject({}),
      output: responses.AuditReport,
      readOnly: true,
    },
    async () => {
      const r = await mem.verifyAudit({ tenant });
      return result(r.tenants.map((t) => t.message).join('\n') || `tenant ${tenant}: no audit entries yet`, { ...r });
    },
  );

  const resource = (fn: () => Promise<ReadResourceResult>): Promise<ReadResourceResult> =>
    guard(fn).catch((e: unknown) => {
      const { body } = errorResponse(e, 'mcp');
      throw new MemauthError('INVALID_ARGUMENT', `${body.code}: ${body.message}`, { ...body.details });
    });
  server.registerResource(
    'decision',
    new ResourceTemplate('memauth://decisions/{decisionId}', { list: undefined }),
    { title: 'A gate decision', description: 'A stored decision this connection requested (JSON)', mimeType: 'application/json' },
    (uri, vars) => resource(async () => json(uri, await ownDecision(String(vars.decisionId)))),
  );
  server.registerResource(
    'decision-replay',
    new ResourceTemplate('memauth://decisions/{decisionId}/replay', { list: undefined }),
    { title: 'Replay of a decision', description: 'The decision rebuilt from the audit log alone and re-evaluated (JSON)', mimeType: 'application/json' },
    (uri, vars) => resource(async () => json(uri, await replayOwn(String(vars.decisionId)))),
  );
  server.registerResource(
    'audit-verify',
    'memauth://audit/verify',
    { title: 'Audit verification', description: "Verification report of this tenant's audit chain (JSON)", mimeType: 'application/json' },
    (uri) => resource(async () => json(uri, await mem.verifyAudit({ tenant }))),
  );
  return server;
}
