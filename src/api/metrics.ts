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
 *
 * Requesters. The decision metrics (laundering ASR, legitimate utility, high-risk dependency
 * rate, and `decisions`) of a tier count the decisions requested by the application, agents and
 * people; those requested by external principals, tool channels (or principals not registered)
 * are reported apart, in the tier's `external` field. Such a token can request any number of
 * denied actions: counted together, they would dilute the headline attack success rate.
 *
 * This file: the report of one tenant. The store is read by metrics-store.ts, the metrics of a
 * bucket computed by metrics-tiers.ts, the series over time is metrics-series.ts.
 */
import { METRICS_DECISION_CHARS, recentDecisions } from './decisions.js';
import { TRUSTED_THRESHOLD } from '../core/authority.js';
import { MemauthError } from '../core/errors.js';
import type { Tier } from '../core/types.js';
import type { Memory } from './memory.js';
import { inWindow, loadStore, replayAll, replayIds } from './metrics-store.js';
import { type TierMetrics, type UnusedRecordMetrics, tierMetrics } from './metrics-tiers.js';
import { parseInput, schemas } from './validation.js';

export type { ExposureChannel, ExternalDecisionMetrics, Ratio, TierMetrics, UnusedRecordMetrics } from './metrics-tiers.js';

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
 *    `sources` cover each input's (core/taint-sources.ts `sourcesCover`), `oldestSourceAt` ≤ each input's, and every input still has a row.
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
  if (replaySample !== 'all' && (!Number.isInteger(replaySample) || replaySample < 0))
    throw new MemauthError('INVALID_ARGUMENT', 'metrics: replaySample must be a non-negative integer or "all"', { field: 'replaySample' });
  const maxDecisions = opts.maxDecisions ?? 100_000;
  if (!Number.isInteger(maxDecisions) || maxDecisions < 1) throw new MemauthError('INVALID_ARGUMENT', 'metrics: maxDecisions must be a positive integer', { field: 'maxDecisions' });
  const now = new Date().toISOString();
  const base = await loadStore(mem.driver, tenant);
  const decisions = inWindow(await recentDecisions(mem.driver, tenant, maxDecisions, METRICS_DECISION_CHARS), opts.since, opts.until);
  const toReplay = replayIds(decisions, replaySample);
  const replays = await replayAll(mem.driver, tenant, toReplay);
  const { k, minAuthority: floor } = mem.policy.document.corroboration;
  const { tiers, unused } = tierMetrics(base, decisions, replaySample, replays, { k, floor, now });
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
