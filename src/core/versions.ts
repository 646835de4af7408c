/**
 * Versions of a record (docs/design.md § Memory record, § Action gate): which versions of a chain
 * are current, and whether they compete. A version written by `supersede` hides the current
 * versions whose action authority is at most its own; a version below one of them hides nothing
 * of it and competes with it instead, so a lower principal can never suppress a record it cannot
 * outrank. Computed at every read and decision from the versions' current facts (a corroboration,
 * a deletion or an expiry changes the result), the same way by the live store and by replay.
 * Pure: imports only src/core.
 */
import { type Authority, atLeast } from './authority.js';

/** What the version rule needs of one version of a chain. */
export interface VersionFacts {
  readonly id: string;
  /** the seq of the audit entry that wrote it: versions are applied in this order. */
  readonly seq: number;
  /** its action authority now (a row that does not match its audit entry is left out of the chain). */
  readonly actionAuthority: Authority;
  /** `active`, or `deleted`/`expired` now: such a version hides nothing and is never current. */
  readonly status: 'active' | 'deleted' | 'expired';
}

/** The result of {@link currentVersions}: the ids of the current versions, oldest first. */
export interface ChainState {
  readonly current: readonly string[];
  /** more than one current version: they compete (reads show all of them, the gate reports `conflict`). */
  readonly conflict: boolean;
}

/**
 * The current versions of one chain. In write order, each active version hides every current
 * version whose action authority is at most its own, then becomes current itself; a version of
 * higher authority than the newcomer stays current beside it. So the current versions always
 * have strictly decreasing authorities from oldest to newest: at most one per authority level.
 *
 * @param versions - every version of the chain, in any order (the root included).
 * @returns the current ids, oldest first, and whether they conflict.
 */
export function currentVersions(versions: readonly VersionFacts[]): ChainState {
  const current: VersionFacts[] = [];
  for (const v of [...versions].sort((a, b) => a.seq - b.seq)) {
    if (v.status !== 'active') continue;
    for (let i = current.length - 1; i >= 0; i--) if (atLeast(v.actionAuthority, (current[i] as VersionFacts).actionAuthority)) current.splice(i, 1);
    current.push(v);
  }
  return { current: current.map((v) => v.id), conflict: current.length > 1 };
}

/**
 * The version conflicts among an action's dependencies (docs/design.md § Action gate § Reasons):
 * for each chain that holds a dependency and is in conflict, or holds a dependency that is no
 * longer current (a replaced version: its value was updated, so it must not drive an action
 * unseen), the dependencies in it and its current versions, sorted — one `conflict` reason each.
 *
 * @param chainOf - the chain id of each dependency that is part of a chain of several versions.
 * @param chains - the state of each such chain.
 */
export function versionConflicts(dependencyIds: readonly string[], chainOf: ReadonlyMap<string, string>, chains: ReadonlyMap<string, ChainState>): string[][] {
  const groups = new Map<string, Set<string>>();
  for (const id of dependencyIds) {
    const chain = chainOf.get(id);
    const state = chain === undefined ? undefined : chains.get(chain);
    if (chain === undefined || state === undefined || (!state.conflict && state.current.includes(id))) continue;
    const g = groups.get(chain) ?? new Set(state.current);
    g.add(id);
    groups.set(chain, g);
  }
  return [...groups.keys()].sort().map((k) => [...(groups.get(k) as Set<string>)].sort());
}
