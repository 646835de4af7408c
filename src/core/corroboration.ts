import { type Authority, atLeast, maxAuthority, rank } from './authority.js';
import type { Corroboration } from './types.js';

/** Why a recorded corroboration does not count. */
export type CorroborationRejection =
  | 'below_min_authority'
  | 'writer_or_lineage_principal'
  | 'writer_or_lineage_domain'
  | 'evidence_derived_from_record'
  | 'evidence_unavailable';

/** A recorded corroboration plus what the store knows of its evidence. */
export interface CorroborationFacts extends Corroboration {
  /** false when the evidence record is deleted, expired, unknown, or derived from the corroborated record. */
  readonly evidenceUsable: boolean;
  readonly evidenceDerivedFromRecord: boolean;
}

export interface CorroborationResult {
  /** the record's action authority: its lowestAuthority, or lifted by k independent corroborations. */
  readonly actionAuthority: Authority;
  /** the corroborations that count (one per independent domain, best first). */
  readonly counted: readonly Corroboration[];
  readonly rejected: ReadonlyArray<{ readonly id: string; readonly reason: CorroborationRejection }>;
  /** number of distinct independent domains counted. */
  readonly independentDomains: number;
}

/**
 * Action authority of a record (DESIGN.md § Corroboration — the only way up).
 *
 * Counts corroborations that are pairwise independent (distinct principal AND distinct domain),
 * each with authority >= `minAuthority`, none by a principal (or in a domain) that wrote the
 * record or any of its ancestors, none whose evidence derives from the record itself.
 * With at least `k` such, the action authority is the k-th best of them (never below the
 * record's own); otherwise it is the record's `lowestAuthority`. Repetition never counts:
 * corroborations are grouped by domain, so a Sybil swarm in one domain is one vote.
 *
 * @param lineage - principals and domains of the record's writer and of every ancestor's writer.
 */
export function evaluateCorroboration(params: {
  lowestAuthority: Authority;
  lineage: { readonly principals: ReadonlySet<string>; readonly domains: ReadonlySet<string> };
  corroborations: readonly CorroborationFacts[];
  k: number;
  minAuthority: Authority;
}): CorroborationResult {
  const { lowestAuthority, lineage, corroborations, k, minAuthority: floor } = params;
  const rejected: Array<{ id: string; reason: CorroborationRejection }> = [];
  const bestPerDomain = new Map<string, Corroboration>();
  for (const c of corroborations) {
    let reason: CorroborationRejection | null = null;
    if (!atLeast(c.authority, floor)) reason = 'below_min_authority';
    else if (lineage.principals.has(c.principalId)) reason = 'writer_or_lineage_principal';
    else if (lineage.domains.has(c.domain)) reason = 'writer_or_lineage_domain';
    else if (c.evidenceDerivedFromRecord) reason = 'evidence_derived_from_record';
    else if (!c.evidenceUsable) reason = 'evidence_unavailable';
    if (reason) {
      rejected.push({ id: c.id, reason });
      continue;
    }
    const prev = bestPerDomain.get(c.domain);
    if (!prev || rank(c.authority) > rank(prev.authority)) bestPerDomain.set(c.domain, c);
  }
  const counted = [...bestPerDomain.values()].sort((a, b) => rank(b.authority) - rank(a.authority) || a.id.localeCompare(b.id));
  const kth = counted[k - 1];
  const actionAuthority = counted.length >= k && kth ? maxAuthority(lowestAuthority, kth.authority) : lowestAuthority;
  return { actionAuthority, counted: counted.slice(0, Math.max(k, counted.length)), rejected, independentDomains: counted.length };
}
