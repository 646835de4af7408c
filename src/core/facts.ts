import type { Authority } from './authority.js';
import { type CorroborationFacts, type CorroborationResult, evaluateCorroboration } from './corroboration.js';
import type { DependencyFacts } from './gate.js';
import type { Corroboration, DependencyWhy, DerivationEdge, RecordStatus } from './types.js';

/** What the gate needs of a record: provenance only, never content. */
export interface RecordFacts {
  readonly id: string;
  readonly lowestAuthority: Authority;
  readonly originPrincipal: string;
  /** stored status: `active` or `deleted` (expiry is computed against `now`). */
  readonly status: 'active' | 'deleted';
  readonly expiresAt: string | null;
  readonly derivedFrom: readonly DerivationEdge[];
  /** matches its write/derive audit entry. */
  readonly verified: boolean;
}

/**
 * A closed set of provenance facts: the dependencies, every ancestor, every corroboration of
 * them, their evidence records and those records' ancestors, and the principals' domains.
 * The live gate fetches it from the store; replay rebuilds it from the audit log alone.
 */
export interface FactsBundle {
  readonly records: ReadonlyMap<string, RecordFacts>;
  readonly domains: ReadonlyMap<string, string>;
  readonly corroborations: ReadonlyMap<string, readonly Corroboration[]>;
}

export const MEMORY_REF_PREFIX = 'memory:';

/** `memory:<id>` → `<id>`, else null. */
export function memoryRefId(ref: string): string | null {
  return ref.startsWith(MEMORY_REF_PREFIX) ? ref.slice(MEMORY_REF_PREFIX.length) : null;
}

/** All ancestor ids of `id` (not including itself) within the bundle. */
export function ancestorsOf(id: string, records: ReadonlyMap<string, RecordFacts>): Set<string> {
  const seen = new Set<string>();
  const stack = [...(records.get(id)?.derivedFrom ?? []).map((e) => e.from)];
  while (stack.length > 0) {
    const x = stack.pop() as string;
    if (seen.has(x)) continue;
    seen.add(x);
    for (const e of records.get(x)?.derivedFrom ?? []) stack.push(e.from);
  }
  return seen;
}

export function effectiveStatus(r: Pick<RecordFacts, 'status' | 'expiresAt'>, now: string): RecordStatus {
  if (r.status === 'deleted') return 'deleted';
  return r.expiresAt !== null && r.expiresAt <= now ? 'expired' : 'active';
}

/** Action authority of one record: its taint, or lifted by independent corroboration. */
export function corroborationOf(id: string, bundle: FactsBundle, k: number, minAuthority: Authority, now: string): CorroborationResult {
  const rec = bundle.records.get(id);
  if (!rec) throw new Error(`facts bundle is missing record ${id}`);
  const lineageIds = [id, ...ancestorsOf(id, bundle.records)];
  const principals = new Set<string>();
  const domains = new Set<string>();
  for (const rid of lineageIds) {
    const r = bundle.records.get(rid);
    if (!r) continue;
    principals.add(r.originPrincipal);
    const d = bundle.domains.get(r.originPrincipal);
    if (d !== undefined) domains.add(d);
  }
  const ownLineage = new Set(lineageIds);
  const corroborations: CorroborationFacts[] = (bundle.corroborations.get(id) ?? []).map((c) => {
    const evId = memoryRefId(c.evidenceRef);
    if (evId === null) return { ...c, evidenceUsable: true, evidenceDerivedFromRecord: false, evidenceInLineage: false, evidenceKey: `ref:${c.evidenceRef}` };
    const ev = bundle.records.get(evId);
    const derived = evId === id || (ev !== undefined && ancestorsOf(evId, bundle.records).has(id));
    const evidenceKey = ev ? `domain:${bundle.domains.get(ev.originPrincipal) ?? `principal:${ev.originPrincipal}`}` : `memory:${evId}`;
    return { ...c, evidenceUsable: ev !== undefined && ev.verified && effectiveStatus(ev, now) === 'active', evidenceDerivedFromRecord: derived, evidenceInLineage: ownLineage.has(evId), evidenceKey };
  });
  return evaluateCorroboration({ lowestAuthority: rec.lowestAuthority, lineage: { principals, domains }, corroborations, k, minAuthority });
}

/** Gate facts of one dependency. A record unknown to the bundle is unverified (`metadata_missing`). */
export function dependencyFacts(id: string, why: readonly DependencyWhy[], bundle: FactsBundle, k: number, minAuthority: Authority, now: string): DependencyFacts {
  const rec = bundle.records.get(id);
  if (!rec) {
    return { memoryId: id, why, lowestAuthority: 'external_untrusted', actionAuthority: 'external_untrusted', status: 'active', corroborationAttempted: false, verified: false };
  }
  const c = corroborationOf(id, bundle, k, minAuthority, now);
  return {
    memoryId: id,
    why,
    lowestAuthority: rec.lowestAuthority,
    actionAuthority: c.actionAuthority,
    status: effectiveStatus(rec, now),
    corroborationAttempted: (bundle.corroborations.get(id) ?? []).length > 0,
    verified: rec.verified,
  };
}
