/**
 * Versions for the facade (docs/design.md § Memory record, § Action gate): the chains of records
 * as the store holds them, their current versions judged now (core/versions.ts) from each
 * version's action authority, status and audit match, the version conflicts among a decision's
 * dependencies, and the `versions` view reads attach to a record. Imports from src/core, src/store's
 * port, and api/ modules below the facade.
 */
import type { Authority } from '../core/authority.js';
import type { MemoryRecord, RecordStatus } from '../core/types.js';
import { type ChainState, type VersionFacts, currentVersions, versionConflicts } from '../core/versions.js';
import type { StorageDriver, StorageTx } from '../store/driver.js';
import type { OpContext } from './context.js';
import type { VersionEntry, VersionsView } from './views.js';

type Source = StorageTx | StorageDriver;

/** What a version is judged on now: its action authority, status and whether its row matches its audit entry. */
export interface Judged {
  readonly actionAuthority: Authority;
  readonly status: RecordStatus;
  readonly verified: boolean;
}

/** Judges records now (the view path or the gate path; both give the same authorities). */
export type Judge = (recs: MemoryRecord[]) => Promise<ReadonlyMap<string, Judged>>;

/** The chain a record belongs to: its first record's id (a record never superseded is its own chain). */
export const chainIdOf = (r: MemoryRecord): string => r.version?.of ?? r.id;

/** One chain of several versions: its versions in write order with their judged facts, and which are current. */
export interface Chain {
  readonly id: string;
  readonly versions: readonly MemoryRecord[];
  readonly judged: ReadonlyMap<string, Judged>;
  readonly state: ChainState;
}

/**
 * The chains of `recs` that hold more than one version, by chain id. A version whose row does not
 * match its audit entry is no part of its chain (it can neither hide nor compete).
 * Two batched reads (the chains' version ids, their records) plus the judge's.
 */
export async function loadChains(src: Source, tenant: string, recs: readonly MemoryRecord[], judge: Judge): Promise<Map<string, Chain>> {
  const out = new Map<string, Chain>();
  const roots = [...new Set(recs.map(chainIdOf))];
  const ids = roots.length === 0 ? [] : await src.versionIds(tenant, roots);
  if (ids.length === 0) return out;
  const members = await src.getRecords(tenant, [...new Set([...roots, ...ids])]);
  const judged = await judge(members);
  const byChain = new Map<string, MemoryRecord[]>();
  for (const r of members) {
    if (judged.get(r.id)?.verified !== true) continue;
    const list = byChain.get(chainIdOf(r)) ?? [];
    list.push(r);
    byChain.set(chainIdOf(r), list);
  }
  for (const [id, list] of byChain) {
    if (list.length < 2) continue;
    const versions = list.sort((a, b) => a.audit.seq - b.audit.seq);
    const facts = versions.map((r): VersionFacts => {
      const j = judged.get(r.id) as Judged;
      return { id: r.id, seq: r.audit.seq, actionAuthority: j.actionAuthority, status: j.status };
    });
    out.set(id, { id, versions, judged, state: currentVersions(facts) });
  }
  return out;
}

/** The judge of the gate: the very dependency facts a decision takes (api/provenance.ts). */
export function gateJudge(ctx: OpContext, tx: StorageTx, tenant: string, now: string): Judge {
  const { k, minAuthority: floor } = ctx.policy.document.corroboration;
  return async (recs) => ctx.provenance.dependencyVerdicts(tx, tenant, recs, k, floor, now);
}

/**
 * The version conflicts among a decision's dependencies (core/versions.ts `versionConflicts`):
 * `deps` are the dependency records the store holds.
 */
export async function gateConflicts(ctx: OpContext, tx: StorageTx, tenant: string, deps: readonly MemoryRecord[], now: string): Promise<string[][]> {
  const chains = await loadChains(tx, tenant, deps, gateJudge(ctx, tx, tenant, now));
  if (chains.size === 0) return [];
  const chainOf = new Map(deps.map((r) => [r.id, chainIdOf(r)]));
  return versionConflicts(
    deps.map((r) => r.id),
    chainOf,
    new Map([...chains].map(([id, c]) => [id, c.state])),
  );
}

/** The current versions of a chain, highest authority first (the order the rule keeps them in). */
export const currentOf = (c: Chain): string[] => [...c.state.current];

/** The `versions` view of a chain. */
export function versionsView(c: Chain): VersionsView {
  const current = new Set(c.state.current);
  const history = c.versions.map((r): VersionEntry => {
    const j = c.judged.get(r.id) as Judged;
    const isCurrent = current.has(r.id);
    return {
      id: r.id,
      supersedes: r.version?.supersedes ?? null,
      principalId: r.origin.principalId,
      actionAuthority: j.actionAuthority,
      status: j.status,
      createdAt: r.createdAt,
      current: isCurrent,
      content: isCurrent ? r.content : null,
    };
  });
  return { chain: c.id, current: currentOf(c), conflict: c.state.conflict, history };
}

/**
 * The record a default `get` of `rec` returns: itself when it is current or not part of a chain
 * of several versions; else its chain's current version of highest authority (the conflict, if
 * any, is in the view's `versions`), or itself when no version is current (all deleted or expired).
 */
export function currentFor(rec: MemoryRecord, chains: ReadonlyMap<string, Chain>): string {
  const c = chains.get(chainIdOf(rec));
  if (c === undefined || c.state.current.includes(rec.id)) return rec.id;
  return c.state.current[0] ?? rec.id;
}

/** A search hit as `search` returns it: with its chain's `versions` when it has several. */
export interface VersionedHit {
  readonly record: MemoryRecord;
  readonly score: number;
  readonly versions?: VersionsView;
}

/**
 * Search hits with versions resolved (docs/design.md § Search and tenant isolation): a hit on a
 * version that is not current stands for its chain's current versions; a chain in conflict brings
 * every current version of it, together, with the hit's score — even past `limit` — so that no
 * version can push a competing one out of the results. Each chain appears once.
 *
 * @returns at most `limit` entries (a plain hit, or one chain's current versions), in rank order, and how many entries that is.
 */
export function resolveHits<H extends { readonly record: MemoryRecord; readonly score: number }>(
  hits: readonly H[],
  chains: ReadonlyMap<string, Chain>,
  limit: number,
): { hits: (H & { versions?: VersionsView })[]; entries: number } {
  const out: (H & { versions?: VersionsView })[] = [];
  const seenChains = new Set<string>();
  let entries = 0;
  for (const h of hits) {
    if (entries >= limit) break;
    const c = chains.get(chainIdOf(h.record));
    if (c !== undefined && seenChains.has(c.id)) continue;
    entries++;
    if (c === undefined) {
      out.push(h);
      continue;
    }
    seenChains.add(c.id);
    const view = versionsView(c);
    const recs = new Map(c.versions.map((r) => [r.id, r]));
    for (const id of c.state.current) out.push({ ...h, record: recs.get(id) as MemoryRecord, versions: view });
  }
  return { hits: out, entries };
}

/** `recs` without the versions that are no longer current (a record in no chain of several versions stays). */
export function onlyCurrent(recs: readonly MemoryRecord[], chains: ReadonlyMap<string, Chain>): MemoryRecord[] {
  return recs.filter((r) => {
    const c = chains.get(chainIdOf(r));
    return c === undefined || c.state.current.includes(r.id) || r.status !== 'active';
  });
}
