/**
 * Derivation and taint (docs/design.md § Derivation and taint): the taint of a derived record from its
 * inputs and its writer — it can only go down. Pure.
 */
import { type Authority, minAuthority } from './authority.js';
import type { Channel, DerivationEdge, Origin, Principal, Taint, Transform } from './types.js';
import { recordTokens } from './echo.js';
import { capSources } from './taint-sources.js';
import { significantTokens } from './values.js';

/** What derivation needs to know of an input record. */
export interface DerivationInputFacts {
  readonly id: string;
  readonly taint: Taint;
  readonly origin: Origin;
  readonly content: string | null;
}

const REWRITING: ReadonlySet<Transform> = new Set(['summarize', 'extract', 'rewrite']);

/**
 * Taint of a derived record (docs/design.md § Derivation and taint): non-malleable propagation.
 *
 * - `lowestAuthority = min(writer origin authority, every input's lowestAuthority)`;
 * - with no inputs at all (undetermined), at most `model_inferred`;
 * - channels: the union of the inputs' plus what this step adds; sources: the same union, capped
 *   to its first `MAX_TAINT_SOURCES` in sort order (core/taint-sources.ts);
 * - `oldestSourceAt`: the oldest of the inputs' and this write's source date.
 *
 * Pure; the store decides which inputs there are (declared ∪ session reads ∪ echoes). The
 * session's reads come as `context`: the running summary of the session's read log at the
 * write (core/session.ts, the minimum over every record read — the same as one edge to each), and
 * whether any of them is not also a declared or echo edge (then the record has an undeclared input).
 */
export function derivedTaint(params: {
  writer: Principal;
  writerAuthority: Authority;
  sourceRef: string;
  sourceAt: string;
  transform: Transform;
  edges: readonly DerivationEdge[];
  inputs: ReadonlyMap<string, DerivationInputFacts>;
  context?: { readonly summary: Taint; readonly undeclared: boolean } | null;
}): Taint {
  const { writer, writerAuthority, sourceRef, sourceAt, transform, edges, inputs } = params;
  const context = params.context ?? null;
  const authorities: Authority[] = [writerAuthority];
  const channels = new Set<Channel>();
  const sources = new Set<string>([sourceRef]);
  let oldest = sourceAt;
  const hasInputs = edges.length > 0 || context !== null;
  if (!hasInputs) authorities.push('model_inferred');
  if (context !== null) {
    authorities.push(context.summary.lowestAuthority);
    for (const c of context.summary.channels) channels.add(c);
    for (const s of context.summary.sources) sources.add(s);
    if (context.summary.oldestSourceAt < oldest) oldest = context.summary.oldestSourceAt;
    if (context.undeclared) channels.add('undeclared_input');
  }
  for (const e of edges) {
    const input = inputs.get(e.from);
    if (!input) throw new Error(`derivation input ${e.from} not provided`);
    authorities.push(input.taint.lowestAuthority);
    for (const c of input.taint.channels) channels.add(c);
    for (const s of input.taint.sources) sources.add(s);
    if (input.taint.oldestSourceAt < oldest) oldest = input.taint.oldestSourceAt;
    if (e.kind === 'session') channels.add('undeclared_input');
    if (e.kind === 'echo') channels.add('recall_echo');
  }
  if (hasInputs && writer.kind === 'agent' && REWRITING.has(transform)) channels.add('self_summarization');
  if (transform === 'merge' || transform === 'dedup') channels.add('merge');
  return {
    lowestAuthority: minAuthority(...authorities),
    channels: [...channels].sort(),
    sources: capSources(sources),
    oldestSourceAt: oldest,
  };
}

/**
 * Taint of a fresh write: its own origin, plus the trusted-tool-echo channel when a tool
 * (a trusted channel) wrote data whose source is below the tool's ceiling.
 */
export function writeTaint(params: { writer: Principal; origin: Origin; sourceAt: string }): Taint {
  const { writer, origin, sourceAt } = params;
  const channels: Channel[] = writer.kind === 'tool' && origin.authority !== writer.maxAuthority ? ['trusted_tool_echo'] : [];
  return { lowestAuthority: origin.authority, channels, sources: capSources([origin.sourceRef]), oldestSourceAt: sourceAt };
}

/**
 * Proof that a derivation used only its declared inputs (docs/design.md: "unless the caller proves
 * a narrower set"): accepted only for verbatim extraction — every significant token of the
 * derived content occurs in the declared inputs. A paraphrase cannot prove it and keeps the
 * session's taint. The inputs' words are tokenised once per record object (memoised).
 */
export function provesNarrowInputs(content: string, declared: readonly DerivationInputFacts[]): boolean {
  const available = new Set<string>();
  for (const d of declared) {
    if (d.content === null) return false;
    for (const t of recordTokens(d as DerivationInputFacts & { content: string })) available.add(t);
  }
  for (const t of significantTokens(content)) if (!available.has(t)) return false;
  return true;
}
