/**
 * The framework-neutral part of memauth's agent integrations (`memauth/ai-sdk`,
 * `memauth/langchain`): one object that puts the action gate (docs/design.md § Action gate) in front
 * of an agent's tools, writes what data tools return into memory under the tool's principal with
 * the data's own source (docs/design.md § Principals and origin: a trusted channel is not a trusted source), and
 * gives the model a remember/recall pair whose reads taint the session.
 *
 * Framework adapters only translate shapes; every rule lives here or in the core.
 */
import type { Memory } from '../api/memory.js';
import { type Authority, minAuthority } from '../core/authority.js';
import { MemauthError } from '../core/errors.js';
import type { Decision, MemoryRecord, Principal, PrincipalKind, ReasonCode, Tier } from '../core/types.js';

/** The user's current turn: its values count as `user_confirmed` at the gate. */
export interface UserTurn {
  /** a registered `user` principal. */
  readonly principal: string;
  readonly text: string;
}

/**
 * A tool whose result is data from somewhere (a web page, a mailbox, a ticket): its result is
 * written to memory under `principal` with `source(args, result)` as the source, so an echo of
 * external data stays external.
 */
export interface DataSourceTool<Args = unknown, Result = unknown> {
  /** the registered principal the tool writes as (kind `tool`, `external` or `agent`; never `user` or `system`). */
  readonly principal: string;
  /** where the data came from (e.g. the fetched URL); the policy's source rules judge it. */
  readonly source: (args: Args, result: Result) => string;
  /** the text to remember; default: the result itself if it is a string, else its JSON. */
  readonly content?: (args: Args, result: Result) => string;
  /** when the source said it (ISO-8601), if the tool knows; default: now. */
  readonly sourceAt?: (args: Args, result: Result) => string | undefined;
}

/** Options shared by every integration (see {@link ToolGate}). */
export interface ToolGateOptions {
  readonly memory: Memory;
  readonly tenant: string;
  /**
   * the session the agent runs in: reads, tool results and decisions are bound to it. Keep one
   * session for as long as the model's context carries earlier tool results (a conversation):
   * a new session per turn would forget what the transcript still shows the model.
   */
  readonly session: string;
  /** the agent's principal (kind `agent` or `external`): what `remember` writes as. */
  readonly principal: string;
  /** the scope tool results and remembered notes are written to, and `recall` searches. */
  readonly scope: string;
  /** tools whose results are data, keyed by tool name. Others' results are returned, not written. */
  // `any`: one map holds tools of different argument and result types; the adapters type it per tool.
  readonly toolPrincipals?: Readonly<Record<string, DataSourceTool<any, any>>>;
  /** the user's current turn, asked for at each tool call (its values count as `user_confirmed`). */
  readonly userTurn?: () => UserTurn | undefined;
  /**
   * records a tool call depends on beyond the session (docs/design.md: `dependsOn`). The application's
   * choice (docs/design.md § What the model sees): never take ids from `args` — they are the model's.
   * The gate never receives a `context` from this integration: every session read counts.
   */
  readonly dependsOn?: (toolName: string, args: Readonly<Record<string, unknown>>) => readonly string[] | undefined;
  /** called with every decision, e.g. to log or to show the user what was blocked. */
  readonly onDecision?: (event: { readonly tool: string; readonly args: Readonly<Record<string, unknown>>; readonly decision: Decision }) => void;
}

/** Reason codes a confirmation cannot lift (docs/design.md § Action gate: hard failures). */
const HARD: readonly ReasonCode[] = ['deleted_source', 'expired', 'untrusted_requester'];

/** What the model gets back instead of a result when the gate denies a call. Plain JSON. */
export interface ToolDenial {
  readonly denied: true;
  readonly tool: string;
  readonly decisionId: string;
  readonly outcome: 'deny';
  readonly tier: Tier;
  /** the exact action that was denied: what a user confirmation would have to name. */
  readonly action: { readonly type: string; readonly args: Readonly<Record<string, unknown>> };
  readonly reasons: ReadonlyArray<{ readonly code: ReasonCode; readonly memoryIds: readonly string[]; readonly argument?: string; readonly detail?: string }>;
  /** whether a user confirmation of this exact action (type and arguments) would let it through. */
  readonly confirmable: boolean;
  /** a fixed instruction, not an argument: only the user can change this outcome. */
  readonly howToProceed: string;
}

/** The result of a data tool as the model gets it: the result plus the record it became. */
export interface RememberedResult<Result = unknown> {
  readonly result: Result;
  readonly memory: {
    /** the record the result became: a new one, or — for the same text as a record already read in the session — that record. */
    readonly id: string;
    /** that record's origin authority, decided by the store from its writer and its source. */
    readonly origin: Authority;
    /** what that record can support at the gate without corroboration: its lowest authority (`external_untrusted` for a row that does not match its audit entry). */
    readonly authority: Authority;
    /** that record's source. */
    readonly source: string;
    /** the id of the record already read in the session whose text this result repeats exactly (nothing new was stored), else null. */
    readonly echoOf: string | null;
  };
}

/** What `remember` returns. */
export interface RememberOutput {
  readonly memoryId: string;
  /** false when the note repeats recalled memory: it resolves to that record and adds nothing. */
  readonly created: boolean;
  /** the note's authority after taint: what it read in the session bounds it. */
  readonly authority: Authority;
}

/** One recalled memory as the model sees it. */
export interface RecalledMemory {
  readonly id: string;
  readonly content: string;
  /** lowest authority in its lineage (what it can support at the gate without corroboration); `external_untrusted` for a row that does not match its audit entry. */
  readonly authority: Authority;
  readonly source: string;
}

export const HOW_TO_PROCEED_CONFIRM = 'needs user confirmation of this exact action';
export const HOW_TO_PROCEED_NEVER = 'not permitted: a source it depends on is deleted, expired or unverified; a confirmation cannot lift this';

/** Is this a denial produced by the gate? */
export function isToolDenial(x: unknown): x is ToolDenial {
  return typeof x === 'object' && x !== null && (x as { denied?: unknown }).denied === true && typeof (x as { decisionId?: unknown }).decisionId === 'string';
}

/** Turn a tool input into the JSON object the gate sees (what a confirmation must match). */
export function actionArgs(input: unknown): Record<string, unknown> {
  const json: unknown = input === undefined ? {} : JSON.parse(JSON.stringify(input));
  if (json !== null && typeof json === 'object' && !Array.isArray(json)) return json as Record<string, unknown>;
  return { input: json };
}

const DATA_KINDS: readonly PrincipalKind[] = ['tool', 'external', 'agent'];
const AGENT_KINDS: readonly PrincipalKind[] = ['agent', 'external'];

/**
 * The gate in front of an agent's tools (framework-neutral; the adapters in `memauth/ai-sdk` and
 * `memauth/langchain` call {@link ToolGate.run}).
 *
 * Before a tool runs: `memory.authorize({tenant, session, action: {type: toolName, args},
 * userTurn, dependsOn})`; the policy gives the tool's risk tier (unknown tools are `high`) and the
 * session gives the dependencies (everything read in it). A denial is returned as a
 * {@link ToolDenial} and the tool does not run. After a data tool runs, its result is written
 * under the tool's principal with the data's source, in the session, and marked read there — it
 * is in the model's context now, so it taints what the session decides next.
 *
 * The principals are checked on first use: the agent must be an `agent` (or `external`)
 * principal and every data tool's a `tool`, `external` or `agent` one — a model's or a tool's
 * output is never a user's or the system's statement.
 *
 * @throws MemauthError from the constructor: `TENANT_REQUIRED`, `SCOPE_REQUIRED`, or
 *   `INVALID_ARGUMENT` when `session` or `principal` is missing.
 */
export class ToolGate {
  readonly options: ToolGateOptions;
  private checked: Promise<void> | null = null;

  constructor(options: ToolGateOptions) {
    for (const f of ['tenant', 'session', 'principal', 'scope'] as const) {
      if (typeof options[f] !== 'string' || options[f] === '') {
        throw new MemauthError(f === 'tenant' ? 'TENANT_REQUIRED' : f === 'scope' ? 'SCOPE_REQUIRED' : 'INVALID_ARGUMENT', `memauth tool gate: option ${f} is required`, { field: f });
      }
    }
    this.options = options;
  }

  /** Check once that the agent and every tool principal exist and are of a kind that may write what they will write. */
  private ready(): Promise<void> {
    this.checked ??= (async () => {
      const { memory, tenant, principal } = this.options;
      const byId = new Map<string, Principal>((await memory.listPrincipals({ tenant })).map((p) => [p.id, p]));
      const need = (id: string, kinds: readonly PrincipalKind[], role: string): void => {
        const p = byId.get(id);
        if (!p)
          throw new MemauthError('UNKNOWN_PRINCIPAL', `memauth tool gate: ${role} principal ${JSON.stringify(id)} is not registered in tenant ${JSON.stringify(tenant)}`, { tenant, principal: id });
        if (!kinds.includes(p.kind)) {
          throw new MemauthError(
            'INVALID_ARGUMENT',
            `memauth tool gate: ${role} principal ${id} is of kind ${p.kind}; it must be one of ${kinds.join(', ')} (a model's or a tool's output is never the statement of a principal of kind ${p.kind})`,
            { principal: id, kind: p.kind, allowed: kinds },
          );
        }
      };
      need(principal, AGENT_KINDS, 'agent');
      for (const [tool, d] of Object.entries(this.options.toolPrincipals ?? {})) need(d.principal, DATA_KINDS, `tool ${tool}'s`);
    })();
    this.checked.catch(() => {
      this.checked = null;
    });
    return this.checked;
  }

  /**
   * Ask the gate about one tool call without running anything.
   * @returns the stored decision, and the denial the model would get (null when allowed or `would_deny`).
   * @throws MemauthError `UNKNOWN_PRINCIPAL` / `INVALID_ARGUMENT` for a misconfigured gate or user turn.
   */
  async check(toolName: string, input: unknown): Promise<{ decision: Decision; denial: ToolDenial | null }> {
    await this.ready();
    const { memory, tenant, session } = this.options;
    const args = actionArgs(input);
    const userTurn = this.options.userTurn?.();
    const dependsOn = this.options.dependsOn?.(toolName, args);
    const decision = await memory.authorize({
      tenant,
      session,
      action: { type: toolName, args },
      ...(userTurn !== undefined ? { userTurn: { principal: userTurn.principal, text: userTurn.text } } : {}),
      ...(dependsOn !== undefined && dependsOn.length > 0 ? { dependsOn: [...dependsOn] } : {}),
    });
    this.options.onDecision?.({ tool: toolName, args, decision });
    if (decision.outcome !== 'deny') return { decision, denial: null };
    const confirmable = !decision.reasons.some((r) => HARD.includes(r.code) || (r.code === 'metadata_missing' && r.argument === undefined));
    const denial: ToolDenial = {
      denied: true,
      tool: toolName,
      decisionId: decision.id,
      outcome: 'deny',
      tier: decision.tier,
      action: { type: toolName, args },
      reasons: decision.reasons.map((r) => ({
        code: r.code,
        memoryIds: [...r.memoryIds],
        ...(r.argument !== undefined ? { argument: r.argument } : {}),
        ...(r.detail !== undefined ? { detail: r.detail } : {}),
      })),
      confirmable,
      howToProceed: confirmable ? HOW_TO_PROCEED_CONFIRM : HOW_TO_PROCEED_NEVER,
    };
    return { decision, denial };
  }

  /**
   * Gate one tool call: authorize, run `execute` only when allowed (or `would_deny` in observe
   * mode), and for a data tool write its result to memory.
   *
   * @returns the denial, the plain result (tools that are not data sources), or
   *   `{result, memory: {id, origin, authority, source, echoOf}}` for a data tool: the record the
   *   result became. Only the same text as a record read in the session (up to NFC, line endings
   *   and trailing white space) resolves to that record (`echoOf`); any other text — other case,
   *   punctuation, symbols, invisible characters — is a new record of the tool's principal and source.
   * @throws whatever `execute` throws; MemauthError `INVALID_ARGUMENT` when a data tool's result
   *   cannot be stored (empty, over 1 MB, bad source) — the result is then not handed to the model.
   */
  async run<R>(toolName: string, input: unknown, execute: () => Promise<R>): Promise<R | RememberedResult<R> | ToolDenial> {
    const { denial } = await this.check(toolName, input);
    if (denial) return denial;
    const result = await execute();
    const data = this.options.toolPrincipals?.[toolName];
    if (!data) return result;
    return { result, memory: await this.record(toolName, data, input, result) };
  }

  private async record(toolName: string, data: DataSourceTool<unknown, unknown>, input: unknown, result: unknown): Promise<RememberedResult['memory']> {
    const { memory, tenant, session, scope } = this.options;
    const content = data.content ? data.content(input, result) : typeof result === 'string' ? result : JSON.stringify(result);
    if (typeof content !== 'string' || content.trim() === '') {
      throw new MemauthError('INVALID_ARGUMENT', `memauth tool gate: tool ${toolName} returned nothing to remember; a data tool's result must be stored before the model sees it`, { tool: toolName });
    }
    const source = data.source(input, result);
    const sourceAt = data.sourceAt?.(input, result);
    const { record, echoOf } = await memory.write({
      tenant,
      scope,
      session,
      principal: data.principal,
      content,
      source,
      ...(sourceAt !== undefined ? { sourceAt } : {}),
      reason: `tool result: ${toolName}`.slice(0, 1000),
    });
    // The result is in the model's context from now on: it is a read of this session.
    const view = await memory.get({ tenant, id: record.id, session });
    // what the model is told is what was stored (or, for an exact echo, the record it resolved to) and read
    return { id: record.id, origin: record.origin.authority, authority: minAuthority(record.taint.lowestAuthority, view.actionAuthority), source: record.origin.sourceRef, echoOf };
  }

  /**
   * The model's `remember`: a note written by the agent principal in the session. Its taint is
   * the minimum over everything the session read (docs/design.md § Derivation and taint); a note that
   * repeats recalled memory resolves to that record.
   * @throws MemauthError `INVALID_ARGUMENT` for empty or over-long content.
   */
  async remember(content: string): Promise<RememberOutput> {
    await this.ready();
    const { memory, tenant, session, scope, principal } = this.options;
    const r = await memory.write({ tenant, scope, session, principal, content, reason: 'remember' });
    // a note that echoes a record resolves to it: say what that record can support
    return { memoryId: r.record.id, created: r.created, authority: r.created ? r.record.taint.lowestAuthority : await this.verifiedAuthority(r.record) };
  }

  /**
   * What a stored record can support without corroboration, as the gate sees it: its lowest
   * authority, or `external_untrusted` when its row does not match its audit entry (forged or
   * altered outside the API — the row's own claim is never shown to the model).
   */
  private async verifiedAuthority(record: MemoryRecord): Promise<Authority> {
    const view = await this.options.memory.get({ tenant: this.options.tenant, id: record.id });
    return minAuthority(record.taint.lowestAuthority, view.actionAuthority);
  }

  /**
   * The model's `recall`: full-text search in the gate's scope. Every hit is marked read in the
   * session, so the gate counts it as context for the session's next actions.
   */
  async recall(query: string, limit = 5): Promise<RecalledMemory[]> {
    await this.ready();
    const { memory, tenant, session, scope } = this.options;
    const hits = await memory.search({ tenant, scope, query, session, limit });
    const out: RecalledMemory[] = [];
    for (const h of hits) out.push({ id: h.record.id, content: h.record.content ?? '', authority: await this.verifiedAuthority(h.record), source: h.record.origin.sourceRef });
    return out;
  }
}
