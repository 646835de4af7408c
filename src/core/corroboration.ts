/**
 * Corroboration (docs/design.md § Corroboration): which recorded corroborations of a record count
 * (independent principals and domains, usable evidence) and the action authority they lift it to.
 * Pure.
 */
import { type Authority, atLeast, maxAuthority, rank } from './authority.js';
import { normalizeDomain } from './domain.js';
import type { Corroboration } from './types.js';

/** Why a recorded corroboration does not count. */
export type CorroborationRejection =
  | 'below_min_authority'
  | 'writer_or_lineage_principal'
  | 'writer_or_lineage_domain'
  | 'evidence_derived_from_record'
  | 'evidence_in_lineage'
  | 'evidence_unavailable'
  | 'same_upstream'
  | 'lineage_unverified';

/** A recorded corroboration plus what the store knows of its evidence. */
export interface CorroborationFacts extends Corroboration {
  /** false when the evidence record is deleted, expired, unknown, or derived from the corroborated record. */
  readonly evidenceUsable: boolean;
  readonly evidenceDerivedFromRecord: boolean;
  /** the evidence is the record itself or one of its ancestors (the record's own source). */
  readonly evidenceInLineage: boolean;
  /** the upstream the evidence comes from: `domain:<writer domain>` for memory evidence, `ref:<source>` otherwise. */
  readonly evidenceKey: string;
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
 * Action authority of a record (docs/design.md § Corroboration — the only way up).
 *
 * Counts corroborations that are pairwise independent (distinct principal AND distinct domain —
 * domains compared in canonical form, see {@link normalizeDomain} —
 * and distinct evidence upstream — two principals citing one bank record are one vote),
 * each with authority >= `minAuthority`, none by a principal (or in a domain) that wrote the
 * record or any of its ancestors, none whose evidence derives from the record itself or is in
 * its lineage.
 * With at least `k` such, the action authority is the k-th best of them (never below the
 * record's own); otherwise it is the record's `lowestAuthority`. Repetition never counts:
 * corroborations are grouped by domain, so a Sybil swarm in one domain is one vote.
 *
 * @param lineage - principals and domains of the record's writer and of every ancestor's writer;
 *   `unverified` when one of those records is missing or its row does not match its audit entry
 *   (altered outside the API): its stored writer is no evidence, so no corroboration counts.
 */
export function evaluateCorroboration(params: {
  lowestAuthority: Authority;
  lineage: { readonly principals: ReadonlySet<string>; readonly domains: ReadonlySet<string>; readonly unverified?: boolean };
  corroborations: readonly CorroborationFacts[];
  k: number;
  minAuthority: Authority;
}): CorroborationResult {
  const { lowestAuthority, lineage, corroborations, k, minAuthority: floor } = params;
  const rejected: Array<{ id: string; reason: CorroborationRejection }> = [];
  const eligible: CorroborationFacts[] = [];
  // domains compare in canonical form (core/domain.ts), also those stored by an older memauth
  const lineageDomains = new Set([...lineage.domains].map(normalizeDomain));
  for (const c of corroborations) {
    let reason: CorroborationRejection | null = null;
    // a writer in the lineage is unknown (a row missing or not matching its audit entry): independence cannot be judged
    if (lineage.unverified === true) reason = 'lineage_unverified';
    else if (!atLeast(c.authority, floor)) reason = 'below_min_authority';
    else if (lineage.principals.has(c.principalId)) reason = 'writer_or_lineage_principal';
    else if (lineageDomains.has(normalizeDomain(c.domain))) reason = 'writer_or_lineage_domain';
    else if (c.evidenceDerivedFromRecord) reason = 'evidence_derived_from_record';
    else if (c.evidenceInLineage) reason = 'evidence_in_lineage';
    else if (!c.evidenceUsable) reason = 'evidence_unavailable';
    if (reason) rejected.push({ id: c.id, reason });
    else eligible.push(c);
  }
  // greedy, best authority first: one vote per corroborator domain and per evidence upstream
  eligible.sort((a, b) => rank(b.authority) - rank(a.authority) || a.at.localeCompare(b.at) || a.id.localeCompare(b.id));
  const domains = new Set<string>();
  const upstreams = new Set<string>();
  const counted: Corroboration[] = [];
  for (const c of eligible) {
    const domain = normalizeDomain(c.domain);
    if (domains.has(domain)) continue;
    if (upstreams.has(c.evidenceKey)) {
      rejected.push({ id: c.id, reason: 'same_upstream' });
      continue;
    }
    domains.add(domain);
    upstreams.add(c.evidenceKey);
    counted.push(c);
  }
  const kth = counted[k - 1];
  const actionAuthority = counted.length >= k && kth ? maxAuthority(lowestAuthority, kth.authority) : lowestAuthority;
  return { actionAuthority, counted, rejected, independentDomains: counted.length };
}
