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
 *
 * The tools are a named table (src/server/mcp-tools.ts: tool → handler → `Memory` method); the
 * resources a small table below; the text for the model is in src/server/mcp-text.ts.
 */
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import type { Memory } from '../api/memory.js';
import { MemauthError } from '../core/errors.js';
import type { Decision, Principal } from '../core/types.js';
import type { ServerConfig } from './config.js';
import { HttpError, errorResponse } from './errors.js';
import { assertDecisionVisible, assertNotExternalReader, replayFor } from './exposure.js';
import { decisionAs, replayAs } from './external-ids.js';
import { jsonResource, modelJson, toolError } from './mcp-text.js';
import { MCP_TOOLS, type ToolCall } from './mcp-tools.js';
import type { Identity } from './tokens.js';

export { modelJson, recordLine } from './mcp-text.js';

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
  /** called before each recorded decision (authorize_action); throws to refuse (the server's decision budget, src/server/decision-budget.ts). */
  readonly admitDecision?: (stores: boolean) => void;
  /** called with the bytes a built decision or record is about to store (besides a record's content), before it is recorded; throws to refuse (the server's write budget, src/server/write-budget.ts `storing`). */
  readonly storingBytes?: (bytes: number, field: 'decision' | 'record') => void;
  /** called before each stored record (remember, derive) with its content; throws to refuse (the server's write budget, src/server/write-budget.ts). */
  readonly admitWrite?: (content: string, claims?: readonly unknown[]) => void;
  /** runs each read in the session (recall, get_memory) within the server's read budget (src/server/write-budget.ts `reading`): `most` it may mark, `marked` what it did; throws `RATE_LIMITED` to refuse. */
  readonly reading?: <T>(most: number, read: () => Promise<T>, marked: (result: T) => number) => Promise<T>;
  /** runs a whole-log operation (verify_audit, replay_decision and their resources) in the server's expensive-request slots (src/server/fairness.ts); throws `TOO_MANY_REQUESTS` to refuse. */
  readonly expensive?: <T>(operation: string, fn: () => Promise<T>) => Promise<T>;
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
    throw new HttpError(403, 'MCP_PRINCIPAL_KIND', `an MCP connection is bound to an agent, tool or external principal, not ${what}`, {
      kind: identity.kind === 'admin' ? 'admin' : identity.principal.kind,
    });
  }
  return { tenant: identity.tenant, principal: identity.principal };
}

/** One MCP resource: a fixed URI or a URI template, and a NAMED reader. */
interface ResourceSpec {
  readonly name: string;
  readonly uri: string;
  /** true when `uri` is a template with `{decisionId}`. */
  readonly template: boolean;
  readonly title: string;
  readonly description: string;
  readonly read: (call: ToolCall, vars: Readonly<Record<string, string | string[]>>) => Promise<unknown>;
}

/** `memauth://decisions/{decisionId}` → `Memory.getDecision` of a decision this connection requested. */
const readDecision = (c: ToolCall, vars: Readonly<Record<string, string | string[]>>): Promise<unknown> => c.ownDecision(String(vars.decisionId));
/** `memauth://decisions/{decisionId}/replay` → `Memory.replay` of such a decision. */
const readReplay = (c: ToolCall, vars: Readonly<Record<string, string | string[]>>): Promise<unknown> => c.replayOwn(String(vars.decisionId));
/** `memauth://audit/verify` → `Memory.verifyAudit` of the connection's tenant. */
const readAuditVerify = (c: ToolCall): Promise<unknown> => c.verifyAudit();

/** The MCP resources, in registration order (JSON documents). */
export const MCP_RESOURCES: readonly ResourceSpec[] = [
  { name: 'decision', uri: 'memauth://decisions/{decisionId}', template: true, title: 'A gate decision', description: 'A stored decision this connection requested (JSON)', read: readDecision },
  {
    name: 'decision-replay',
    uri: 'memauth://decisions/{decisionId}/replay',
    template: true,
    title: 'Replay of a decision',
    description: 'The decision rebuilt from the audit log alone and re-evaluated (JSON)',
    read: readReplay,
  },
  { name: 'audit-verify', uri: 'memauth://audit/verify', template: false, title: 'Audit verification', description: "Verification report of this tenant's audit chain (JSON)", read: readAuditVerify },
];

/** The {@link ToolCall} of a connection: its binding, and the decisions its principal may see. */
function toolCall(b: McpBinding): ToolCall {
  const { mem, tenant, principal } = b;
  // decisions are not records: the connection sees only those its principal requested, another's answers like a missing one
  const ownDecision = async (decisionId: string): Promise<Decision> => decisionAs(mem, principal, assertDecisionVisible(principal.id, tenant, await mem.getDecision({ tenant, decisionId })));
  const replayOwn = async (decisionId: string) => {
    await ownDecision(decisionId);
    return replayFor(null, mem, await replayAs(mem, tenant, principal, await expensive('replayDecision', () => mem.replay({ tenant, decisionId }))));
  };
  const expensive = b.expensive ?? (<T>(_operation: string, fn: () => Promise<T>): Promise<T> => fn());
  const verifyAudit = () => {
    assertNotExternalReader(principal.kind, 'the audit verification');
    return expensive('verifyAudit', () => mem.verifyAudit({ tenant }));
  };
  const admitDecision = b.admitDecision ?? ((): void => undefined);
  const admitWrite = b.admitWrite ?? ((): void => undefined);
  const storingBytes = b.storingBytes ?? ((): void => undefined);
  const reading = b.reading ?? (<T>(_most: number, read: () => Promise<T>): Promise<T> => read());
  return { mem, tenant, principal, session: b.session, context: b.context ?? 'session', config: b.config, ownDecision, replayOwn, verifyAudit, admitDecision, storingBytes, admitWrite, reading };
}

/**
 * Build an MCP server bound to one principal and session (see the module comment): the tools of
 * {@link MCP_TOOLS} and the resources of {@link MCP_RESOURCES}, each call rechecked first (a
 * revoked token is refused at once). Connect it to a transport (stdio, or Streamable HTTP in
 * src/server/mcp-http.ts).
 */
export function createMcpServer(b: McpBinding): McpServer {
  const { tenant, principal } = b;
  const call = toolCall(b);
  const server = new McpServer(
    { name: 'memauth', version: b.version },
    {
      instructions: `memauth memory for principal ${modelJson(principal.id)} (${principal.kind}, ceiling ${principal.maxAuthority}) in tenant ${modelJson(tenant)}. Every record shows its origin authority: what you store gets at most your ceiling and its source's authority. Call authorize_action before any consequential action (payment, email, permission change, deploy, data export) and follow the decision; check_action is a dry run that records and consumes nothing.`,
    },
  );
  const guard = async <T>(fn: () => Promise<T>): Promise<T> => {
    if (b.recheck) await b.recheck();
    return fn();
  };
  for (const t of MCP_TOOLS) {
    server.registerTool(
      t.name,
      {
        title: t.title,
        description: t.description,
        inputSchema: t.input,
        annotations: { readOnlyHint: t.readOnly, destructiveHint: t.destructive === true, openWorldHint: false },
      },
      // The SDK types the callback from the schema generically; the args are validated by it against `input`.
      (async (args: unknown) => {
        try {
          return await guard(() => t.handler(call, args));
        } catch (e) {
          return toolError(e);
        }
      }) as never,
    );
  }
  // a resource error is thrown to the client as `CODE: message` (the server's mapping: src/server/errors.ts)
  const resource = (fn: () => Promise<ReadResourceResult>): Promise<ReadResourceResult> =>
    guard(fn).catch((e: unknown) => {
      const { body } = errorResponse(e, 'mcp');
      throw new MemauthError('INVALID_ARGUMENT', `${body.code}: ${body.message}`, { ...body.details });
    });
  for (const r of MCP_RESOURCES) {
    const meta = { title: r.title, description: r.description, mimeType: 'application/json' };
    if (r.template) server.registerResource(r.name, new ResourceTemplate(r.uri, { list: undefined }), meta, (uri, vars) => resource(async () => jsonResource(uri, await r.read(call, vars))));
    else server.registerResource(r.name, r.uri, meta, (uri) => resource(async () => jsonResource(uri, await r.read(call, {}))));
  }
  return server;
}
