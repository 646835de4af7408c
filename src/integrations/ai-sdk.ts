/**
 * memauth for the Vercel AI SDK (`ai` v6): `import { gateTools, memoryTools } from 'memauth/ai-sdk'`.
 *
 * `gateTools` wraps a tool set so that every call is authorized by memauth's action gate before
 * `execute` runs; `memoryTools` gives the model a remember/recall pair. The agent loop
 * (`generateText`, `streamText`, `Agent`) is unchanged. docs/design.md § Action gate.
 */
import { type InferToolInput, type InferToolOutput, type Tool, type ToolExecutionOptions, type ToolSet, tool } from 'ai';
import { z } from 'zod';
import { MemauthError } from '../core/errors.js';
import { type DataSourceTool, type RecalledMemory, type RememberOutput, type RememberedResult, type ToolDenial, ToolGate, type ToolGateOptions, isToolDenial } from './tool-gate.js';

// the framework-neutral gate, its options and result shapes (every export of tool-gate.ts)
export * from './tool-gate.js';
// the AI SDK embedder adapter (an `EmbeddingModel` sent with `embedMany`): docs/embeddings.md
export { fromAiSdk, type AiSdkEmbedderOptions } from '../embed/ai-sdk.js';

/** Options of {@link gateTools}: the gate's options, with data tools typed per tool. */
export interface GateToolsOptions<T extends ToolSet> extends Omit<ToolGateOptions, 'toolPrincipals'> {
  /** tools whose results are data (web fetch, mail, search), with the principal they write as and the data's source. */
  readonly toolPrincipals?: { readonly [K in keyof T]?: DataSourceTool<InferToolInput<T[K]>, InferToolOutput<T[K]>> };
  /**
   * tools to leave unwrapped (e.g. client-side tools without `execute`, which the app must
   * authorize itself with `memory.authorize`). Every other tool must have an `execute`.
   */
  readonly passThrough?: readonly (keyof T & string)[];
  /** an existing gate to share (e.g. with {@link memoryTools}); default: a new one from these options. */
  readonly gate?: ToolGate;
}

/** What a gated tool returns: the denial, or the result (wrapped with its record for data tools). */
export type GatedOutput<O> = O | RememberedResult<O> | ToolDenial;

/** The tool set {@link gateTools} returns: same names and inputs; outputs may be denials. */
export type GatedToolSet<T extends ToolSet> = { [K in keyof T]: Tool<InferToolInput<T[K]>, GatedOutput<InferToolOutput<T[K]>>> };

/** The final value of a tool's `execute`: a streaming tool's last yield counts as its result. */
async function finalValue(v: unknown): Promise<unknown> {
  const x = await v;
  if (x !== null && typeof x === 'object' && Symbol.asyncIterator in x && typeof (x as { then?: unknown }).then !== 'function') {
    let last: unknown;
    for await (const part of x as AsyncIterable<unknown>) last = part;
    return last;
  }
  return x;
}

/**
 * Wrap an AI SDK tool set so that each call is authorized before `execute` runs.
 *
 * Per call: `memory.authorize({tenant, session, action: {type: <tool name>, args: <input>}, userTurn})`
 * — the risk tier comes from the policy's `actions` (a tool the policy does not list is `high`;
 * list read-only tools such as a web fetch as `read_only`), the dependencies from the session.
 * - denied: `execute` does not run; the model gets a {@link ToolDenial} (`{denied: true,
 *   decisionId, outcome, reasons: [{code, memoryIds, argument?}], howToProceed}`) as the tool
 *   result. Retrying or rephrasing changes nothing; only a user confirmation of the exact action
 *   (`memory.confirm`) or trusted sources do.
 * - allowed (or `would_deny` in observe mode): `execute` runs. For a tool in `toolPrincipals`
 *   the result is written to memory under that principal with `source(args, result)` as the
 *   source, in the session, and marked read; the model gets `{result, memory: {id, origin, authority, source, echoOf}}`.
 *
 * A tool's own `toModelOutput` still shapes what the model sees of its result; denials are sent as
 * JSON. A streaming tool (an `execute` that yields) is run to its end and its last value is the
 * result: preliminary results are not passed on, since nothing may reach the model before it is stored.
 *
 * @param tools - the agent's tool set, unchanged otherwise.
 * @param options - see {@link GateToolsOptions} and {@link ToolGateOptions}.
 * @returns a new tool set with the same names and input schemas.
 * @throws MemauthError `INVALID_ARGUMENT` when a tool has no `execute` (or is provider-executed)
 *   and is not in `passThrough`: memauth cannot stand in front of it. At call time:
 *   `UNKNOWN_PRINCIPAL` / `INVALID_ARGUMENT` for a misconfigured principal (see {@link ToolGate}).
 *
 * @example
 * ```ts
 * import { generateText, stepCountIs, tool } from 'ai';
 * import { gateTools } from 'memauth/ai-sdk';
 * const tools = gateTools({ web_fetch: webFetch, pay }, {
 *   memory, tenant: 'acme', session: 's1', principal: 'assistant', scope: 'agent',
 *   toolPrincipals: { web_fetch: { principal: 'browser', source: (args) => args.url } },
 *   userTurn: () => ({ principal: 'alice', text: lastUserMessage }),
 * });
 * await generateText({ model, tools, prompt: lastUserMessage, stopWhen: stepCountIs(5) });
 * ```
 */
export function gateTools<T extends ToolSet>(tools: T, options: GateToolsOptions<T>): GatedToolSet<T> {
  const gate = options.gate ?? new ToolGate(options as ToolGateOptions);
  const passThrough = new Set<string>(options.passThrough ?? []);
  const out: Record<string, unknown> = {};
  for (const [name, t] of Object.entries(tools)) {
    if (passThrough.has(name)) {
      out[name] = t;
      continue;
    }
    const original = t as Tool<unknown, unknown>;
    if (original.type === 'provider' || typeof original.execute !== 'function') {
      throw new MemauthError(
        'INVALID_ARGUMENT',
        `gateTools: tool ${JSON.stringify(name)} has no execute function (or runs at the provider), so memauth cannot stand in front of it; authorize it yourself with memory.authorize and list it in passThrough`,
        { tool: name },
      );
    }
    const execute = original.execute;
    const toModelOutput = original.toModelOutput;
    const { outputSchema: _outputSchema, ...rest } = original as Tool<unknown, unknown> & { outputSchema?: unknown };
    out[name] = {
      ...rest,
      execute: (input: unknown, opts: ToolExecutionOptions) => gate.run(name, input, () => finalValue(execute(input, opts))),
      ...(toModelOutput
        ? {
            toModelOutput: (o: { toolCallId: string; input: unknown; output: unknown }) => {
              if (isToolDenial(o.output)) return { type: 'json', value: JSON.parse(JSON.stringify(o.output)) };
              const inner = options.toolPrincipals?.[name as keyof T] !== undefined ? (o.output as RememberedResult).result : o.output;
              return toModelOutput({ ...o, output: inner });
            },
          }
        : {}),
    };
  }
  return out as GatedToolSet<T>;
}

/** Options of {@link memoryTools}: the gate's options (tool principals are not used), or a gate to share. */
export type MemoryToolsOptions = Omit<ToolGateOptions, 'toolPrincipals'> | { readonly gate: ToolGate };

/**
 * A remember/recall tool pair for the model, bound to one tenant, session, scope and agent principal.
 *
 * - `remember({content})` writes a note as the agent principal in the session; its authority is
 *   bounded by everything the session read (a note about a web page is as untrusted as the page).
 *   Returns {@link RememberOutput}.
 * - `recall({query, limit?})` searches the scope and marks every hit read in the session, so the
 *   gate counts it as context of the session's next actions. Returns {@link RecalledMemory}[].
 *
 * These tools change memory, not the world, so they are not gated; their effect on authority is
 * what the store records.
 *
 * @example
 * ```ts
 * const tools = { ...gateTools(appTools, opts), ...memoryTools(opts) };
 * ```
 */
export function memoryTools(options: MemoryToolsOptions): {
  remember: Tool<{ content: string }, RememberOutput>;
  recall: Tool<{ query: string; limit?: number | undefined }, { memories: RecalledMemory[] }>;
} {
  const gate = 'gate' in options ? options.gate : new ToolGate(options);
  return {
    remember: tool({
      description: 'Remember a note for later sessions. Notes keep the authority of what you read: they never make untrusted text trusted.',
      inputSchema: z.object({ content: z.string().min(1).max(10_000).describe('the note, in plain words') }),
      execute: ({ content }) => gate.remember(content),
    }),
    recall: tool({
      description: 'Search long-term memory. Each result names its source and authority; what you recall becomes context of your next actions.',
      inputSchema: z.object({ query: z.string().min(1).max(1000).describe('what to look for'), limit: z.number().int().min(1).max(20).optional() }),
      execute: async ({ query, limit }) => ({ memories: await gate.recall(query, limit) }),
    }),
  };
}
