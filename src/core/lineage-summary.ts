/**
 * Lineage summaries (docs/design.md § Corroboration: a corroboration counts only from outside the
 * record's lineage): the principals that wrote a record or any of its ancestors, built from the
 * parents' summaries so that a deep chain is walked once. The facade memoises them
 * (api/provenance.ts); this file only computes them. Pure: no I/O; imports only from src/core.
 */
import type { MemoryRecord } from './types.js';

/** Lineage summary memoised per record object: writers of the record and its ancestors; their domains once all are known. */
export interface LineageMemo {
  readonly principals: ReadonlySet<string>;
  domains?: ReadonlySet<string>;
  /** the record or an ancestor is missing or does not match its audit entry (see `LineageSets`, core/facts.ts). */
  readonly unverified: boolean;
}

/**
 * Summarise `root` and its not yet summarised ancestors in `byId` (post-order, no recursion:
 * chains can be deep), appending them to `made` (and seeing them through `known` from then
 * on). A cycle — possible only among rows forged outside the API — is not memoised: its
 * summary is returned for this decision only, and nothing from this walk is kept.
 *
 * @param byId - the records the walk may visit (the root's ancestors that were read).
 * @param known - the summaries memoised before this walk.
 * @param verified - ids of the rows that match their audit entries.
 * @returns the root's summary, or null when `known` already has it.
 */
export function summarizeLineage(
  root: MemoryRecord,
  byId: ReadonlyMap<string, MemoryRecord>,
  known: (r: MemoryRecord) => LineageMemo | undefined,
  made: Array<[MemoryRecord, LineageMemo]>,
  verified: ReadonlySet<string>,
): LineageMemo | null {
  if (known(root) !== undefined) return null;
  const local = new Map<string, LineageMemo>();
  const have = (r: MemoryRecord): LineageMemo | undefined => local.get(r.id) ?? known(r);
  const stack: Array<{ r: MemoryRecord; next: number }> = [{ r: root, next: 0 }];
  const onPath = new Set<string>([root.id]);
  let cyclic = false;
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as { r: MemoryRecord; next: number };
    const edge = top.r.derivedFrom[top.next];
    if (edge !== undefined) {
      top.next += 1;
      const parent = byId.get(edge.from);
      if (parent === undefined || have(parent) !== undefined) continue;
      if (onPath.has(parent.id)) {
        cyclic = true;
        continue;
      }
      onPath.add(parent.id);
      stack.push({ r: parent, next: 0 });
      continue;
    }
    stack.pop();
    onPath.delete(top.r.id);
    if (have(top.r) !== undefined) continue;
    local.set(top.r.id, fromParents(top.r, byId, have, verified));
  }
  if (!cyclic) {
    for (const [id, m] of local) made.push([byId.get(id) ?? root, m]);
    return local.get(root.id) ?? null;
  }
  return cyclicSummary(root, byId, known);
}

/** The summary of `r` from its parents' summaries (all of them already made). */
function fromParents(r: MemoryRecord, byId: ReadonlyMap<string, MemoryRecord>, have: (r: MemoryRecord) => LineageMemo | undefined, verified: ReadonlySet<string>): LineageMemo {
  const principals = new Set<string>([r.origin.principalId]);
  // a row that does not match its audit entry, or a parent that is missing: a writer is unknown
  let unverified = !verified.has(r.id);
  for (const e of r.derivedFrom) {
    const parent = byId.get(e.from);
    const pm = parent !== undefined ? have(parent) : undefined;
    if (pm) {
      for (const x of pm.principals) principals.add(x);
      if (pm.unverified) unverified = true;
    } else unverified = true;
  }
  return { principals, unverified };
}

/** The summary of a root whose lineage has a cycle: every writer reachable, always unverified. */
function cyclicSummary(root: MemoryRecord, byId: ReadonlyMap<string, MemoryRecord>, known: (r: MemoryRecord) => LineageMemo | undefined): LineageMemo {
  const principals = new Set<string>();
  const seen = new Set<string>();
  const todo = [root];
  while (todo.length > 0) {
    const r = todo.pop() as MemoryRecord;
    if (seen.has(r.id)) continue;
    seen.add(r.id);
    const m = known(r);
    if (m) {
      for (const x of m.principals) principals.add(x);
      continue;
    }
    principals.add(r.origin.principalId);
    for (const e of r.derivedFrom) {
      const parent = byId.get(e.from);
      if (parent) todo.push(parent);
    }
  }
  // only rows forged outside the API form a cycle
  return { principals, unverified: true };
}
