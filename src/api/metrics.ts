/**
 * The seven metrics of docs/design.md § Metrics, computed from the store itself (records, their
 * audit entries, corroborations, decisions, and replays of decisions from the audit log), per
 * risk tier — never as one site-wide average.
 *
 * Buckets. Decision metrics are bucketed by the decision's recorded `tier`. Record metrics are
 * bucketed by the tiers of the decisions that depended on the record: a record is in tier T when
 * it is a dependency of a tier-T decision or an ancestor (derivation lineage, down to the roots)
 * of one; a record can be in several tiers. Records no decision depended on form the `unused`
 * bucket. A ratio with a zero denominator has `value: null` (nothing to measure), never 0 or 1.
 *
 * "Untrusted" below means an authority below {@link TRUSTED_THRESHOLD} (`trusted_tool_verified`),
 * the gate's bar for `high` actions. "Proceeded" means the action was not stopped: outcome
 * `allow`, or `would_deny` (observe mode logs the denial and lets the action through).
 */
import { principals as verifiedPrincipals } from './principals.js';
import type { AuditEntry } from '../core/audit.js';
import { TRUSTED_THRESHOLD, atLeast, isAuthority, rank } from '../core/authority.js';
import { corroborationOf, type FactsBundle, type RecordFacts } from '../core/facts.js';
import { CHANNELS, TIERS, type Channel, type Corroboration, type Decision, type MemoryRecord, type Tier } from '../core/types.js';
import { MemauthError } from '../core/errors.js';
import { type Memory, corroborationMatchesEntry, recordMatchesEntry } from './memory.js';
import { replayDecisions } from './replay.js';
import { yielder } from './yielder.js';
import { parseInput, schemas } from './validation.js';

/** `numerator / denominator`; `value` is null when the denominator is 0. */
export interface Ratio {
  readonly numerator: number;
  readonly denominator: number;
  readonly value: number | null;
}

/** A channel of {@link CHANNELS}, or `direct` for an untrusted dependency that carries none. */
export type ExposureChannel = Channel | 'direct';

/** Metrics of one risk tier. */
export interface TierMetrics {
  /** decisions recorded in this tier. */
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
  /** replayed decisions whose re-evaluation from the log matches; `denominator` = how many were replayed. */
  readonly decisionReplayRate: Ratio;
}

/** Record metrics of the records no decision depended on. */
export interface UnusedRecordMetrics {
  readonly records: number;
  readonly originCoverage: Ratio;
  readonly taintRetention: Ratio;
  readonly corroborationValidity: Ratio & { readonly rejected: Readonly<Record<string, number>> };
}

/** What {@link computeMetrics} returns. */
export interface MetricsReport {
  readonly tenant: string;
  readonly computedAt: string;
  readonly policyVersion: string;
  /** the authority below which a dependency counts as untrusted. */
  readonly threshold: typeof TRUSTED_THRESHOLD;
  readonly totals: { readonly records: number; readonly decisions: number; readonly corroborations: number };
  /** decisions replayed per tier at most (`all` = every decision). */
  readonly replaySample: number | 'all';
  readonly tiers: Readonly<Record<Tier, TierMetrics>>;
  readonly unused: UnusedRecordMetrics;
}

/** Options of {@link computeMetrics}. */
export interface MetricsOptions {
  readonly tenant: string;
  /** decisions replayed per tier: a number (evenly spaced over the tier's decisions in log order) or `all`. Default 100. */
  readonly replaySample?: number | 'all';
  /** newest decisions considered at most (default 100 000). */
  readonly maxDecisions?: number;
  /** only decisions taken at or after this ISO time (records are bucketed by the decisions kept). */
  readonly since?: string;
  /** only decisions taken before this ISO time. */
  readonly until?: string;
}

const ratio = (numerator: number, denominator: number): Ratio => ({ numerator, denominator, value: denominator === 0 ? null : numerator / denominator });

const untrusted = (a: string): boolean => !isAuthority(a) || !atLeast(a, TRUSTED_THRESHOLD);

const proceeded = (d: Decision): boolean => d.outcome === 'allow' || d.outcome === 'would_deny';

/** Evenly spaced sample of `n` items (all when `n` is `all` or ≥ length), order kept. */
function sample<T>(items: readonly T[], n: number | 'all'): T[] {
  if (n === 'all' || n >= items.length) return [...items];
  if (n <= 0) return [];
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push(items[Math.floor((i * items.length) / n)] as T);
  return out;
}

/**
 * Compute the seven metrics of docs/design.md § Metrics for one tenant, per risk tier.
 *
 * 1. **origin coverage** — records in the bucket whose origin is complete and bound: authority is
 *    a lattice value, the writing principal is registered in the tenant, `sourceRef` and
 *    `writtenAt` are set, and the row matches the write/derive audit entry that created it
 *    (origin, taint and derivation hashed in the chain). A dependency id with no record at all
 *    counts as uncovered. `numerator` = covered, `denominator` = records in the bucket.
 * 2. **taint retention** — derived records (at least one derivation edge) in the bucket whose
 *    taint kept everything of every input: `lowestAuthority` ≤ each input's, `channels` ⊇ and
 *    `sources` ⊇ each input's, `oldestSourceAt` ≤ each input's, and every input still has a row.
 * 3. **laundering ASR** — attack success rate over *exposed* decisions of the tier: a decision is
 *    exposed when at least one of its dependencies had, at decision time, an action authority
 *    below `trusted_tool_verified` (untrusted taint that corroboration did not lift). An exposed
 *    decision is a success for the attacker when it proceeded (`allow` or `would_deny`) without
 *    consuming a scoped confirmation. `byChannel` restricts the same ratio to exposed decisions
 *    with an untrusted dependency carrying that laundering channel (`direct`: carrying none).
 *    For `high` this is the attack success rate; for `low` and `read_only` the policy accepts
 *    untrusted dependencies by design, so there it measures exposure, not a failure.
 * 4. **legitimate utility** — decisions of the tier that are not exposed and proceeded (with or
 *    without a confirmation) over decisions that are not exposed.
 * 5. **corroboration validity** — corroborations recorded on records in the bucket that count
 *    under docs/design.md § Corroboration (pairwise independent principal and domain, ≥
 *    `trusted_tool_verified`, outside the record's lineage, evidence not derived from it, row
 *    matching its audit entry) over all recorded. `rejected` counts the rest by reason
 *    (`not_in_audit`, `same_domain_duplicate`, or the core rejection reason).
 * 6. **high-risk dependency rate** — over all dependencies of the tier's decisions, the share
 *    whose action authority at decision time was below `trusted_tool_verified`.
 * 7. **decision replay rate** — decisions of the tier (an evenly spaced sample of `replaySample`
 *    in log order, or all) rebuilt from the audit log alone and re-evaluated, every sampled
 *    decision of every tier in one pass over the log ({@link replayDecisions}, the same result
 *    as {@link Memory.replay} of each); `numerator` = replays that match the recorded outcome, reasons and
 *    confirmation. A replay that throws counts as a mismatch.
 *
 * @throws MemauthError `TENANT_REQUIRED`, `INVALID_ARGUMENT` (bad replaySample / maxDecisions).
 */
export async function computeMetrics(mem: Memory, opts: MetricsOptions): Promise<MetricsReport> {
  const { tenant } = parseInput(schemas.tenant, { tenant: opts.tenant }, 'metrics');
  const replaySample = opts.replaySample ?? 100;
  if (replaySample !== 'all' && (!Number.isInteger(replaySample) || replaySample < 0)) throw new MemauthError('INVALID_ARGUMENT', 'metrics: replaySample must be a non-negative integer or "all"', { field: 'replaySample' });
  const maxDecisions = opts.maxDecisions ?? 100_000;
  if (!Number.isInteger(maxDecisions) || maxDecisions < 1) throw new MemauthError('INVALID_ARGUMENT', 'metrics: maxDecisions must be a positive integer', { field: 'maxDecisions' });
  const now = new Date().toISOString();
  const base = await loadStore(mem, tenant);
  const decisions = inWindow(await mem.driver.listDecisions(tenant, maxDecisions), opts.since, opts.until);
  const toReplay = replayIds(decisions, replaySample);
  const replays = await replayAll(mem, tenant, toReplay);
  const { tiers, unused } = tierMetrics(mem, base, decisions, replaySample, replays, now);
  return {
    tenant,
    computedAt: now,
    policyVersion: mem.policy.version,
    threshold: TRUSTED_THRESHOLD,
    totals: { records: base.records.size, decisions: decisions.length, corroborations: base.allCorroborations.length },
    replaySample,
    tiers,
    unused: unused(),
  };
}

/** What the metrics read of a tenant's store besides its decisions (verified against the log). */
interface StoreView {
  readonly records: Map<string, MemoryRecord>;
  readonly verified: Set<string>;
  readonly domains: Map<string, string>;
  readonly allCorroborations: readonly Corroboration[];
  readonly corroborationVerified: Set<string>;
  readonly facts: Map<string, RecordFacts>;
  readonly bundle: FactsBundle;
}

/** The decisions taken in [since, until) (either bound optional), in log order. */
function inWindow(all: readonly Decision[], since: string | undefined, until: string | undefined): Decision[] {
  return all.filter((d) => (since === undefined || d.at >= since) && (until === undefined || d.at < until)).sort((a, b) => a.auditSeq - b.auditSeq);
}

/** The ids of the decisions replayed: an evenly spaced sample of `replaySample` per tier. */
function replayIds(decisions: readonly Decision[], replaySample: number | 'all'): string[] {
  return TIERS.flatMap((tier) => sample(decisions.filter((d) => d.tier === tier), replaySample)).map((d) => d.id);
}

/** Replay `ids` in one pass over the audit log; a replay that throws maps to null (a mismatch). */
async function replayAll(mem: Memory, tenant: string, ids: readonly string[]): Promise<Map<string, { matches: boolean } | null>> {
  return new Map([...(await replayDecisions(mem.driver, tenant, ids))].map(([id, r]) => [id, r instanceof MemauthError ? null : r]));
}

/** Load the tenant's records, principals and corroborations, each checked against its audit entry. */
async function loadStore(mem: Memory, tenant: string): Promise<StoreView> {
  const driver = mem.driver;

  // ---- load the tenant's records, principals, corroborations and decisions
  const records = new Map<string, MemoryRecord>();
  for (let offset = 0; ; offset += 1000) {
    const page = await driver.listRecords(tenant, { limit: 1000, offset, includeDeleted: true });
    for (const r of page) records.set(r.id, r);
    if (page.length < 1000) break;
  }
  // only principal rows that match their registration entry (as at the gate)
  const principals = await verifiedPrincipals.list(driver, tenant);
  const domains = new Map(principals.map((p) => [p.id, p.domain]));
  const entryAt = async (seq: number): Promise<AuditEntry | undefined> => (await driver.auditRange(tenant, seq, seq))[0];
  const verified = new Set<string>();
  const contentKey = await driver.tenantContentKey(tenant);
  const pause = yielder();
  for (const r of records.values()) {
    const e = await entryAt(r.audit.seq);
    if (e && recordMatchesEntry(r, e, contentKey)) verified.add(r.id);
    await pause();
  }
  const allCorroborations = await driver.corroborationsFor(tenant, [...records.keys()]);
  const corroborationVerified = new Set<string>();
  for (const c of allCorroborations) {
    const e = c.auditSeq === undefined ? undefined : await entryAt(c.auditSeq);
    if (e && corroborationMatchesEntry(c, e)) corroborationVerified.add(c.id);
    await pause();
  }

  // ---- the provenance bundle the gate would see (verified rows only)
  const facts = new Map<string, RecordFacts>();
  for (const r of records.values()) {
    facts.set(r.id, { id: r.id, lowestAuthority: r.taint.lowestAuthority, originPrincipal: r.origin.principalId, status: r.status === 'deleted' ? 'deleted' : 'active', expiresAt: r.expiresAt, derivedFrom: r.derivedFrom, verified: verified.has(r.id) });
  }
  const byRecord = new Map<string, Corroboration[]>();
  for (const c of allCorroborations) {
    if (!corroborationVerified.has(c.id)) continue;
    byRecord.set(c.recordId, [...(byRecord.get(c.recordId) ?? []), c]);
  }
  const bundle: FactsBundle = { records: facts, domains, corroborations: byRecord };
  return { records, verified, domains, allCorroborations, corroborationVerified, facts, bundle };
}

/** The per-tier metrics of `decisions` and (on demand) the unused bucket's (see {@link computeMetrics}). */
function tierMetrics(mem: Memory, base: StoreView, decisions: readonly Decision[], replaySample: number | 'all', replays: ReadonlyMap<string, { matches: boolean } | null>, now: string): { tiers: Record<Tier, TierMetrics>; unused: () => UnusedRecordMetrics } {
  const { records, verified, domains, allCorroborations, corroborationVerified, facts, bundle } = base;
  const { k, minAuthority: floor } = mem.policy.document.corroboration;
  // ---- buckets
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
  const used = new Set<string>([...closure.values()].flatMap((s) => [...s]));

  // ---- record metrics over a set of ids
  const originCoverage = (ids: readonly string[]): Ratio => {
    let covered = 0;
    for (const id of ids) {
      const r = records.get(id);
      if (!r) continue;
      const o = r.origin;
      if (isAuthority(o.authority) && domains.has(o.principalId) && o.sourceRef !== '' && !Number.isNaN(Date.parse(o.writtenAt)) && verified.has(id)) covered++;
    }
    return ratio(covered, ids.length);
  };
  const taintRetention = (ids: readonly string[]): Ratio => {
    let derived = 0;
    let kept = 0;
    for (const id of ids) {
      const r = records.get(id);
      if (!r || r.derivedFrom.length === 0) continue;
      derived++;
      const ok = r.derivedFrom.every((e) => {
        const input = records.get(e.from);
        if (!input) return false;
        const t = r.taint;
        const u = input.taint;
        return rank(t.lowestAuthority) <= rank(u.lowestAuthority) && u.channels.every((c) => t.channels.includes(c)) && u.sources.every((s) => t.sources.includes(s)) && t.oldestSourceAt <= u.oldestSourceAt;
      });
      if (ok) kept++;
    }
    return ratio(kept, derived);
  };
  const corroborationValidity = (ids: readonly string[]): Ratio & { rejected: Record<string, number> } => {
    const idSet = new Set(ids);
    const rejected: Record<string, number> = {};
    const bump = (reason: string): void => {
      rejected[reason] = (rejected[reason] ?? 0) + 1;
    };
    let recorded = 0;
    let counted = 0;
    const byRec = new Map<string, Corroboration[]>();
    for (const c of allCorroborations) if (idSet.has(c.recordId)) byRec.set(c.recordId, [...(byRec.get(c.recordId) ?? []), c]);
    for (const [recordId, list] of byRec) {
      recorded += list.length;
      const result = facts.has(recordId) ? corroborationOf(recordId, bundle, k, floor, now) : null;
      const countedIds = new Set(result?.counted.map((c) => c.id) ?? []);
      const why = new Map(result?.rejected.map((x) => [x.id, x.reason]) ?? []);
      for (const c of list) {
        if (!corroborationVerified.has(c.id)) bump('not_in_audit');
        else if (countedIds.has(c.id)) counted++;
        else bump(why.get(c.id) ?? 'same_domain_duplicate');
      }
    }
    return { ...ratio(counted, recorded), rejected };
  };

  // ---- decision metrics per tier
  const exposureChannels = (d: Decision): Set<ExposureChannel> => {
    const out = new Set<ExposureChannel>();
    for (const dep of d.dependencies) {
      if (!untrusted(dep.actionAuthority)) continue;
      const channels = records.get(dep.memoryId)?.taint.channels ?? [];
      if (channels.length === 0) out.add('direct');
      for (const c of channels) out.add(c);
    }
    return out;
  };
  const tiers = {} as Record<Tier, TierMetrics>;
  for (const tier of TIERS) {
    const ds = decisions.filter((d) => d.tier === tier);
    const ids = [...(closure.get(tier) as Set<string>)];
    let exposed = 0;
    let succeeded = 0;
    let clean = 0;
    let cleanProceeded = 0;
    let deps = 0;
    let riskyDeps = 0;
    const perChannel = new Map<ExposureChannel, { n: number; s: number }>([...CHANNELS, 'direct' as const].map((c) => [c, { n: 0, s: 0 }]));
    for (const d of ds) {
      const channels = exposureChannels(d);
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
    const replayed = sample(ds, replaySample);
    // a decision that cannot be rebuilt from the log (an error) is a mismatch
    const matches = replayed.filter((d) => replays.get(d.id)?.matches === true).length;
    tiers[tier] = {
      decisions: ds.length,
      records: ids.length,
      originCoverage: originCoverage(ids),
      taintRetention: taintRetention(ids),
      launderingAsr: { ...ratio(succeeded, exposed), byChannel: Object.fromEntries([...perChannel].map(([c, v]) => [c, ratio(v.s, v.n)])) as Record<ExposureChannel, Ratio> },
      legitimateUtility: ratio(cleanProceeded, clean),
      corroborationValidity: corroborationValidity(ids),
      highRiskDependencyRate: ratio(riskyDeps, deps),
      decisionReplayRate: ratio(matches, replayed.length),
    };
  }

  // computed on demand: the series reports tiers only
  const unused = (): UnusedRecordMetrics => {
    const unusedIds = [...records.keys()].filter((id) => !used.has(id));
    return { records: unusedIds.length, originCoverage: originCoverage(unusedIds), taintRetention: taintRetention(unusedIds), corroborationValidity: corroborationValidity(unusedIds) };
  };
  return { tiers, unused };
}

/** One time bucket of {@link computeMetricsSeries}. */
export interface MetricsBucket {
  /** ISO start (inclusive) and end (exclusive) of the bucket. */
  readonly from: string;
  readonly to: string;
  readonly tiers: Readonly<Record<Tier, TierMetrics>>;
}

/** What {@link computeMetricsSeries} returns. */
export interface MetricsSeries {
  readonly tenant: string;
  readonly computedAt: string;
  readonly policyVersion: string;
  readonly bucketMs: number;
  readonly buckets: readonly MetricsBucket[];
}

/**
 * The seven metrics per risk tier over time: the tenant's decisions are split into `buckets`
 * equal time windows from the first decision to now, and the metrics of {@link computeMetrics}
 * are computed for the decisions of each window (record metrics over the records those decisions
 * depended on). Each bucket replays at most `replaySample` decisions per tier (default 20).
 * The store is read and the audit log replayed once for all windows (the sampled decisions of
 * every window in one pass), not once per window: the result equals {@link computeMetrics} with
 * `since`/`until` per window.
 *
 * @throws MemauthError `TENANT_REQUIRED`, `INVALID_ARGUMENT` (buckets not an integer from 1 to
 *   200, bad replaySample).
 */
export async function computeMetricsSeries(mem: Memory, opts: { tenant: string; buckets?: number; replaySample?: number | 'all' }): Promise<MetricsSeries> {
  const { tenant } = parseInput(schemas.tenant, { tenant: opts.tenant }, 'metricsSeries');
  const n = opts.buckets ?? 12;
  if (!Number.isInteger(n) || n < 1 || n > 200) throw new MemauthError('INVALID_ARGUMENT', 'metricsSeries: buckets must be an integer from 1 to 200', { field: 'buckets' });
  const replaySample = opts.replaySample ?? 20;
  if (replaySample !== 'all' && (!Number.isInteger(replaySample) || replaySample < 0)) throw new MemauthError('INVALID_ARGUMENT', 'metricsSeries: replaySample must be a non-negative integer or "all"', { field: 'replaySample' });
  const nowMs = Date.now();
  const now = new Date(nowMs).toISOString();
  const all = await mem.driver.listDecisions(tenant, 100_000);
  const firstMs = all.reduce((m, d) => Math.min(m, Date.parse(d.at)), nowMs);
  const span = Math.max(1, nowMs + 1 - firstMs);
  const bucketMs = Math.ceil(span / n);
  const windows = Array.from({ length: n }, (_, i) => {
    const from = new Date(firstMs + i * bucketMs).toISOString();
    const to = new Date(firstMs + (i + 1) * bucketMs).toISOString();
    return { from, to, decisions: inWindow(all, from, to) };
  });
  const base = await loadStore(mem, tenant);
  const replays = await replayAll(mem, tenant, windows.flatMap((w) => replayIds(w.decisions, replaySample)));
  const pause = yielder();
  const buckets: MetricsBucket[] = [];
  for (const w of windows) {
    buckets.push({ from: w.from, to: w.to, tiers: tierMetrics(mem, base, w.decisions, replaySample, replays, now).tiers });
    await pause();
  }
  return { tenant, computedAt: now, policyVersion: mem.policy.version, bucketMs, buckets };
}
