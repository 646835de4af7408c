/**
 * Defense class `lineage` of the bench: a lineage store that follows the derivation edges it was told
 * about back to untrusted root writes, with its view. Pure.
 */
import { ALLOW, type GateRequest, type Verdict, memoryBorneValues } from './types.js';

/** One item as a lineage store records it. */
export interface LineageNode {
  /** parents named by a recorded derivation edge (the edges the writer declared: summarize(x) → y) */
  readonly parents: readonly string[];
  /**
   * Class of the write that created the item: `untrusted` when it came from an untrusted source
   * (an external writer: an ingested web page, mail, a forum post), `trusted` otherwise (a user,
   * a system, a trusted tool, or the agent writing its own note).
   */
  readonly writer: 'trusted' | 'untrusted';
}

/**
 * What a lineage store records and this class may read: the derivation edges it was told about
 * and the class of each root write. It does not record what an agent had read when it wrote a
 * note without declaring a source, nor what a trusted tool fetched.
 */
export interface LineageView {
  readonly nodes: ReadonlyMap<string, LineageNode>;
}

/** The untrusted items in `id`'s lineage (itself included), following recorded edges to the roots. */
export function untrustedLineage(id: string, view: LineageView): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const stack = [id];
  while (stack.length > 0) {
    const x = stack.pop() as string;
    if (seen.has(x)) continue;
    seen.add(x);
    const n = view.nodes.get(x);
    if (!n) continue;
    if (n.writer === 'untrusted') out.push(x);
    stack.push(...n.parents);
  }
  return out.sort();
}

/**
 * Defense class `lineage` — provenance tracking over memory, in the style of MemLineage (the
 * lineage class of the MEM-INV-Bench paper): every memory item keeps derivation edges to what
 * it was made from, and roots are labelled by the kind of write that created them.
 *
 * For a `high` action, an argument value from memory is denied when an item supplying it is
 * untrusted or keeps a derivation edge (any depth) to an untrusted ancestor. When no edge
 * survives — the agent wrote its own note without naming a source, or a trusted tool wrote what
 * it fetched — the item is a trusted root and the action is allowed: the class's documented
 * fallback. It has no elevation path (no corroboration, no confirmation).
 */
export function lineageGate(req: GateRequest, view: LineageView): Verdict {
  if (req.tier !== 'high') return ALLOW;
  const reasons: string[] = [];
  for (const v of memoryBorneValues(req.values)) {
    const bad = [...new Set(v.supportIds.flatMap((id) => untrustedLineage(id, view)))];
    if (bad.length > 0) reasons.push(`untrusted_ancestor(${v.argument})`);
  }
  return reasons.length === 0 ? ALLOW : { allowed: false, reasons };
}
