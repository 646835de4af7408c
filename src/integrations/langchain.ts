/**
 * memauth for LangChain.js (`@langchain/core` v1): `import { gateTools, memoryTools } from 'memauth/langchain'`.
 *
 * `gateTools` wraps LangChain tools (anything with `name`, `description`, `schema` and `invoke`:
 * `tool(...)`, `DynamicStructuredTool`, `StructuredTool` subclasses) in tools of the same name and
 * schema that ask memauth's action gate before the original runs; `memoryTools` gives the model a
 * remember/recall pair. Bind them to a chat model or hand them to an agent as usual.
 * docs/design.md § Action gate.
 */
import type { CallbackManagerForToolRun } from '@langchain/core/callbacks/manager';
import type { RunnableConfig } from '@langchain/core/runnables';
import { DynamicStructuredTool, type StructuredToolInterface } from '@langchain/core/tools';
import { z } from 'zod';
import { type DataSourceTool, ToolGate, type ToolGateOptions } from './tool-gate.js';

// the framework-neutral gate, its options and result shapes (every export of tool-gate.ts)
export * from './tool-gate.js';

/** Options of {@link gateTools}. */
export interface GateLangChainToolsOptions extends Omit<ToolGateOptions, 'toolPrincipals'> {
  /** tools whose results are data, keyed by tool name (see {@link DataSourceTool}). */
  // `any`: LangChain tools are heterogeneous and their parsed input types are not known here.
  readonly toolPrincipals?: Readonly<Record<string, DataSourceTool<any, any>>>;
  /** an existing gate to share (e.g. with {@link memoryTools}); default: a new one from these options. */
  readonly gate?: ToolGate;
}

/**
 * Wrap LangChain tools so that each call is authorized by memauth's gate before the tool runs.
 *
 * The wrapper has the original's name, description and schema. Per call (after LangChain has
 * parsed the input): `memory.authorize({tenant, session, action: {type: name, args: input}, userTurn})`.
 * Denied: the original does not run and the call returns a {@link ToolDenial} object (in a
 * `ToolMessage`, as JSON, when invoked with a tool call). Allowed: the original runs with the
 * same config (callbacks nested under the wrapper's run); for a tool in `toolPrincipals` its
 * result is written to memory under that principal with the data's source, in the session, and
 * the call returns `{result, memory: {id, origin, authority, source, echoOf}}`. An original's `content_and_artifact`
 * artifact is not forwarded.
 *
 * @param tools - the agent's tools.
 * @param options - see {@link ToolGateOptions}.
 * @returns new `DynamicStructuredTool`s, in the same order.
 * @throws at call time: whatever the original throws; MemauthError `UNKNOWN_PRINCIPAL` /
 *   `INVALID_ARGUMENT` for a misconfigured principal (see {@link ToolGate}).
 *
 * @example
 * ```ts
 * import { gateTools } from 'memauth/langchain';
 * const tools = gateTools([webFetch, pay], { memory, tenant: 'acme', session: 's1',
 *   principal: 'assistant', scope: 'agent',
 *   toolPrincipals: { web_fetch: { principal: 'browser', source: (args) => args.url } } });
 * const model = chatModel.bindTools(tools);
 * ```
 */
export function gateTools(tools: readonly StructuredToolInterface[], options: GateLangChainToolsOptions): DynamicStructuredTool[] {
  const gate = options.gate ?? new ToolGate(options);
  return tools.map(
    (original) =>
      new DynamicStructuredTool({
        name: original.name,
        description: original.description,
        schema: original.schema,
        returnDirect: original.returnDirect,
        func: async (input: unknown, runManager?: CallbackManagerForToolRun, config?: RunnableConfig) => {
          const { toolCall: _toolCall, ...rest } = (config ?? {}) as RunnableConfig & { toolCall?: unknown };
          const inner: RunnableConfig = { ...rest, ...(runManager ? { callbacks: runManager.getChild() } : {}) };
          // The input was parsed by the wrapper against the original's own schema.
          return gate.run(original.name, input, () => original.invoke(input as Parameters<typeof original.invoke>[0], inner));
        },
      }),
  );
}

/** Options of {@link memoryTools}: the gate's options (tool principals are not used), or a gate to share. */
export type MemoryToolsOptions = Omit<ToolGateOptions, 'toolPrincipals'> | { readonly gate: ToolGate };

/**
 * A remember/recall tool pair for the model (see `memoryTools` in `memauth/ai-sdk` for the rules):
 * `remember({content})` writes a note as the agent in the session (bounded by what the session
 * read); `recall({query, limit?})` searches the scope and marks hits read in the session.
 * @returns `[remember, recall]` as `DynamicStructuredTool`s.
 */
export function memoryTools(options: MemoryToolsOptions): [DynamicStructuredTool, DynamicStructuredTool] {
  const gate = 'gate' in options ? options.gate : new ToolGate(options);
  const remember = new DynamicStructuredTool({
    name: 'remember',
    description: 'Remember a note for later sessions. Notes keep the authority of what you read: they never make untrusted text trusted.',
    schema: z.object({ content: z.string().min(1).max(10_000).describe('the note, in plain words') }),
    func: async ({ content }: { content: string }) => gate.remember(content),
  });
  const recall = new DynamicStructuredTool({
    name: 'recall',
    description: 'Search long-term memory. Each result names its source and authority; what you recall becomes context of your next actions.',
    schema: z.object({ query: z.string().min(1).max(1000).describe('what to look for'), limit: z.number().int().min(1).max(20).optional() }),
    func: async ({ query, limit }: { query: string; limit?: number | undefined }) => ({ memories: await gate.recall(query, limit) }),
  });
  return [remember, recall];
}
