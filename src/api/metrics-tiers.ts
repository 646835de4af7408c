/**
 * The seven metrics of one bucket of records and decisions (docs/design.md § Metrics; definitions
 * in api/metrics.ts `computeMetrics`): the record metrics (origin coverage, taint retention,
 * corroboration validity) over a set of record ids, the decision metrics of one risk tier, and
 * the per-tier report. Pure computations over a loaded {@link StoreView} (api/metrics-store.ts).
 */
import { TRUSTED_THRESHOLD, type Authority, atLeast, isAuthority, rank } from '../core/authority.js';
import { actsForUser } from '../core/confirmation.js';
import { corroborationOf } from '../core/facts.js';
import { sourcesCover } from '../core/taint-sources.js';
import { CHANNELS, TIERS, type Channel, type Corroboration, type Decision, type MemoryRecord, type Tier } from '../core/types.js';
import { type StoreView, sample } from './metrics-store.js';

/** `numerator / denominator`; `value` is null when the denominator is 0. */
export interface Ratio {
  readonly numerator: number;
  readonly denominator: number;
  readonly value: number | null;
}

/** A channel of {@link CHANNELS}, or `direct` for an untrusted dependency that carries none. */
export type ExposureChannel = Channel | 'direct';

/**
 * The decision metrics of a tier's decisions requested by external principals (or principals not
 * registered): reported apart, so that an external token requesting many denied actions cannot
 * dilute the headline figures, which count the application's, agents', tools' and people's.
 */
export interface ExternalDecisionMetrics {
  readonly decisions: number;
  readonly launderingAsr: TierMetrics['launderingAsr'];
  readonly legitimateUtility: Ratio;
  readonly highRiskDependencyRate: Ratio;
}

/** Metrics of one risk tier. */
export interface TierMetrics {
  /** decisions recorded in this tier requested by the application, agents or people (not external principals or tools: see `external`). */
  readonly decisions: number;
  /** records in this tier's dependency closure (dependencies and their ancestors). */
  readonly records: number;
  readonly originCoverage: Ratio;
  readonly taintRetention: Ratio;
  /** overall, and per channel of the untrusted dependencies (a decision can count under several). */
  readonly launderingAsr: Ratio & { readonly byChannel: Readonly<Record<ExposureChannel, Ratio>> };
  readonly legitimateUtility: Ratio;
  readonly corroborationValidity: Ratio & { readonly rejected: Readonly<Record<string, number>> };
  readonly highRiskDependencyRate: Ratio;
  /** replayed decisions whose re-evaluation from the log matches (both requester sides); `denominator` = how many were replayed. */
  readonly decisionReplayRate: Ratio;
  /** the decision metrics of this tier's decisions requested by external or unregistered principals. */
  readonly external: ExternalDecisionMetrics;
}

/** Record metrics of the records no decision depended on. */
export interface UnusedRecordMetrics {
  readonly records: number;
  readonly originCoverage: Ratio;
  readonly taintRetention: Ratio;
  readonly corroborationValidity: Ratio & { readonly rejected: Readonly<Record<string, number>> };
}

/** The corroboration rule's parameters and the time the metrics are computed at. */
export interface CorroborationRule {
  readonly k: number;
  readonly floor: Authority;
  readonly now: string;
}

const ratio = (numerator: number, denominator: number): Ratio => ({ numerator, denominator, value: denominator === 0 ? null : numerator / denominator });

const untrusted = (a: string): boolean => !isAuthority(a) || !atLeast(a, TRUSTED_THRESHOLD);

const proceeded = (d: Decision): boolean => d.outcome === 'allow' || d.outcome === 'would_deny';

/** Each tier's dependency closure: the dependencies of its decisions and their ancestors. */
function closures(records: ReadonlyMap<string, MemoryRecord>, decisions: readonly Decision[]): Map<Tier, Set<string>> {
  const ancestors = (id: string, into: Set<string>): void => {
    const stack = [id];
    while (stack.length > 0) {
      const x = stack.pop() as string;
      if (into.has(x)) continue;
      into.add(x);
      for (const e of records.get(x)?.derivedFrom ?? []) stack.push(e.from);
    }
  };
  const closure = new Map<Tier, Set<string>>(TIERS.map((t) => [t, new Set<string>()]));
  for (const d of decisions) for (const dep of d.dependencies) ancestors(dep.memoryId, closure.get(d.tier) as Set<string>);
  return closure;
}

/** Origin coverage of the records `ids` (see `computeMetrics`). */
function originCoverage(base: StoreView, ids: readonly string[]): Ratio {
  let covered = 0;
  for (const id of ids) {
    const r = base.records.get(id);
    if (!r) continue;
    const o = r.origin;
    if (isAuthority(o.authority) && base.domains.has(o.principalId) && o.sourceRef !== '' && !Number.isNaN(Date.parse(o.writtenAt)) && base.verified.has(id)) covered++;
  }
  return ratio(covered, ids.length);
}

/** Taint retention of the derived records among `ids` (see `computeMetrics`). */
function taintRetention(base: StoreView, ids: readonly string[]): Ratio {
  let derived = 0;
  let kept = 0;
  for (const id of ids) {
    const r = base.records.get(id);
    if (!r || r.derivedFrom.length === 0) continue;
    derived++;
    const ok = r.derivedFrom.every((e) => {
      const input = base.records.get(e.from);
      if (!input) return false;
      const t = r.taint;
      const u = input.taint;
      return (
        rank(t.lowestAuthority) <= rank(u.lowestAuthority) &&
        u.channels.every((c) => t.channels.includes(c)) &&
        u.sources.every((s) => sourcesCover(t.sources, s)) &&
        t.oldestSourceAt <= u.oldestSourceAt
      );
    });
    if (ok) kept++;
  }
  return ratio(kept, derived);
}

/** Corroboration validity of the corroborations recorded on `ids`, the rest counted by rejection reason. */
function corroborationValidity(base: StoreView, ids: readonly string[], rule: CorroborationRule): Ratio & { rejected: Record<string, number> } {
  const idSet = new Set(ids);
  const rejected: Record<string, number> = {};
  const bump = (reason: string): void => {
    rejected[reason] = (rejected[reason] ?? 0) + 1;
  };
  let recorded = 0;
  let counted = 0;
  const byRec = new Map<string, Corroboration[]>();
  for (const c of base.allCorroborations) if (idSet.has(c.recordId)) byRec.set(c.recordId, [...(byRec.get(c.recordId) ?? []), c]);
  for (const [recordId, list] of byRec) {
    recorded += list.length;
    const result = base.facts.has(recordId) ? corroborationOf(recordId, base.bundle, rule.k, rule.floor, rule.now) : null;
    const countedIds = new Set(result?.counted.map((c) => c.id) ?? []);
    const why = new Map(result?.rejected.map((x) => [x.id, x.reason]) ?? []);
    for (const c of list) {
      if (!base.corroborationVerified.has(c.id)) bump('not_in_audit');
      else if (countedIds.has(c.id)) counted++;
      else bump(why.get(c.id) ?? 'same_domain_duplicate');
    }
  }
  return { ...ratio(counted, recorded), rejected };
}

/** The laundering channels of a decision's untrusted dependencies (`direct`: one carrying none); empty when not exposed. */
function exposureChannels(base: StoreView, d: Decision): Set<ExposureChannel> {
  const out = new Set<ExposureChannel>();
  for (const dep of d.dependencies) {
    if (!untrusted(dep.actionAuthority)) continue;
    const channels = base.records.get(dep.memoryId)?.taint.channels ?? [];
    if (channels.length === 0) out.add('direct');
    for (const c of channels) out.add(c);
  }
  return out;
}

/** Whether `d` was requested apart from the tenant's own side: by an external principal, a tool channel or a principal not registered (null requester: the application). */
const requestedExternally = (base: StoreView, d: Decision): boolean => !actsForUser(d.requester, d.requester == null ? null : base.kinds.get(d.requester));

/** Laundering ASR (overall and per channel), legitimate utility and high-risk dependency rate of decisions `ds`. */
function decisionMetrics(base: StoreView, ds: readonly Decision[]): Pick<TierMetrics, 'launderingAsr' | 'legitimateUtility' | 'highRiskDependencyRate'> {
  let exposed = 0;
  let succeeded = 0;
  let clean = 0;
  let cleanProceeded = 0;
  let deps = 0;
  let riskyDeps = 0;
  const perChannel = new Map<ExposureChannel, { n: number; s: number }>([...CHANNELS, 'direct' as const].map((c) => [c, { n: 0, s: 0 }]));
  for (const d of ds) {
    const channels = exposureChannels(base, d);
    const success = proceeded(d) && d.confirmationId === null;
    if (channels.size > 0) {
      exposed++;
      if (success) succeeded++;
      for (const c of channels) {
        const pc = perChannel.get(c) as { n: number; s: number };
        pc.n++;
        if (success) pc.s++;
      }
    } else {
      clean++;
      if (proceeded(d)) cleanProceeded++;
    }
    deps += d.dependencies.length;
    riskyDeps += d.dependencies.filter((x) => untrusted(x.actionAuthority)).length;
  }
  return {
    launderingAsr: { ...ratio(succeeded, exposed), byChannel: Object.fromEntries([...perChannel].map(([c, v]) => [c, ratio(v.s, v.n)])) as Record<ExposureChannel, Ratio> },
    legitimateUtility: ratio(cleanProceeded, clean),
    highRiskDependencyRate: ratio(riskyDeps, deps),
  };
}

/** The per-tier metrics of `decisions` and (on demand) the unused bucket's (see `computeMetrics`). */
export function tierMetrics(
  base: StoreView,
  decisions: readonly Decision[],
  replaySample: number | 'all',
  replays: ReadonlyMap<string, { matches: boolean } | null>,
  rule: CorroborationRule,
): { tiers: Record<Tier, TierMetrics>; unused: () => UnusedRecordMetrics } {
  const closure = closures(base.records, decisions);
  const used = new Set<string>([...closure.values()].flatMap((s) => [...s]));
  const tiers = {} as Record<Tier, TierMetrics>;
  for (const tier of TIERS) {
    const ds = decisions.filter((d) => d.tier === tier);
    const ids = [...(closure.get(tier) as Set<string>)];
    const outside = ds.filter((d) => requestedExternally(base, d));
    const inside = ds.filter((d) => !requestedExternally(base, d));
    const { launderingAsr, legitimateUtility, highRiskDependencyRate } = decisionMetrics(base, inside);
    const replayed = sample(ds, replaySample);
    // a decision that cannot be rebuilt from the log (an error) is a mismatch
    const matches = replayed.filter((d) => replays.get(d.id)?.matches === true).length;
    tiers[tier] = {
      decisions: inside.length,
      records: ids.length,
      originCoverage: originCoverage(base, ids),
      taintRetention: taintRetention(base, ids),
      launderingAsr,
      legitimateUtility,
      corroborationValidity: corroborationValidity(base, ids, rule),
      highRiskDependencyRate,
      decisionReplayRate: ratio(matches, replayed.length),
      external: { decisions: outside.length, ...decisionMetrics(base, outside) },
    };
  }
  // computed on demand: the series reports tiers only
  const unused = (): UnusedRecordMetrics => {
    const unusedIds = [...base.records.keys()].filter((id) => !used.has(id));
    return {
      records: unusedIds.length,
      originCoverage: originCoverage(base, unusedIds),
      taintRetention: taintRetention(base, unusedIds),
      corroborationValidity: corroborationValidity(base, unusedIds, rule),
    };
  };
  return { tiers, unused };
}
