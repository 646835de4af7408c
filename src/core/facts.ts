/**
 * Provenance facts the gate decides on: a record's facts, the closed bundle of them (dependencies,
 * ancestors, corroborations, evidence, domains), lineage and the per-dependency facts computed from
 * it. The live gate and replay build the same bundle. Pure.
 */
import type { Authority } from './authority.js';
import { normalizeDomain } from './domain.js';
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
  /**
   * Optional: for some records, the principals (and their domains) of the record's writer and
   * of every ancestor's writer, precomputed — exactly what {@link lineageOf} derives from a
   * bundle holding the whole lineage. The live gate passes it so that a decision does not walk
   * a deep derivation chain. A record given here needs only itself in `records`, unless one of
   * its corroborations cites `memory:` evidence: then the bundle must still hold its lineage.
   */
  readonly lineage?: ReadonlyMap<string, LineageSets>;
}

/** Principals that wrote a record or any of its ancestors, and their independence domains. */
export interface LineageSets {
  readonly principals: ReadonlySet<string>;
  readonly domains: ReadonlySet<string>;
  /** the record or an ancestor is missing or does not match its audit entry: its writer is unknown. */
  readonly unverified?: boolean;
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
/** Writers of `id` and of its ancestors within the bundle (those it holds), and their domains. */
export function lineageOf(id: string, bundle: Pick<FactsBundle, 'records' | 'domains'>): LineageSets {
  const principals = new Set<string>();
  const domains = new Set<string>();
  let unverified = false;
  for (const rid of [id, ...ancestorsOf(id, bundle.records)]) {
    const r = bundle.records.get(rid);
    if (!r || !r.verified) unverified = true;
    if (!r) continue;
    principals.add(r.originPrincipal);
    const d = bundle.domains.get(r.originPrincipal);
    // a writer whose principal is unknown (its row forged or altered): its domain is unknown too
    if (d !== undefined) domains.add(d);
    else unverified = true;
  }
  return { principals, domains, unverified };
}

export function corroborationOf(id: string, bundle: FactsBundle, k: number, minAuthority: Authority, now: string): CorroborationResult {
  const rec = bundle.records.get(id);
  if (!rec) throw new Error(`facts bundle is missing record ${id}`);
  const { principals, domains, unverified } = bundle.lineage?.get(id) ?? lineageOf(id, bundle);
  // only evidence cited as `memory:<id>` is checked against the record's own lineage (then the bundle holds it)
  let own: Set<string> | null = null;
  const ownLineage = (): Set<string> => (own ??= new Set([id, ...ancestorsOf(id, bundle.records)]));
  const corroborations: CorroborationFacts[] = (bundle.corroborations.get(id) ?? []).map((c) => {
    const evId = memoryRefId(c.evidenceRef);
    if (evId === null) return { ...c, evidenceUsable: true, evidenceDerivedFromRecord: false, evidenceInLineage: false, evidenceKey: `ref:${c.evidenceRef}` };
    const ev = bundle.records.get(evId);
    const derived = evId === id || (ev !== undefined && ancestorsOf(evId, bundle.records).has(id));
    const evDomain = ev ? bundle.domains.get(ev.originPrincipal) : undefined;
    const evidenceKey = ev ? `domain:${evDomain !== undefined ? normalizeDomain(evDomain) : `principal:${ev.originPrincipal}`}` : `memory:${evId}`;
    return {
      ...c,
      evidenceUsable: ev !== undefined && ev.verified && effectiveStatus(ev, now) === 'active',
      evidenceDerivedFromRecord: derived,
      evidenceInLineage: ownLineage().has(evId),
      evidenceKey,
    };
  });
  return evaluateCorroboration({ lowestAuthority: rec.lowestAuthority, lineage: { principals, domains, unverified }, corroborations, k, minAuthority });
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
    // attempted = at least one corroboration that counts (an eligible, independent one), too few for k;
    // one that can never count (below the floor, the writer's own, in its lineage) is no attempt
    corroborationAttempted: c.counted.length > 0,
    verified: rec.verified,
  };
}
