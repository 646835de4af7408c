/**
 * The metrics of docs/design.md § Metrics over time (the dashboard's series): the seven metrics
 * per risk tier for each of equal time windows, the store read and the log replayed once for all
 * windows. Definitions: api/metrics.ts. Imports from src/core and api/ metrics modules.
 */
import { METRICS_DECISION_CHARS, recentDecisions } from './decisions.js';
import { MemauthError } from '../core/errors.js';
import type { Tier } from '../core/types.js';
import type { Memory } from './memory.js';
import { inWindow, loadStore, replayAll, replayIds } from './metrics-store.js';
import { type TierMetrics, tierMetrics } from './metrics-tiers.js';
import { parseInput, schemas } from './validation.js';
import { yielder } from './yielder.js';

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
  if (replaySample !== 'all' && (!Number.isInteger(replaySample) || replaySample < 0))
    throw new MemauthError('INVALID_ARGUMENT', 'metricsSeries: replaySample must be a non-negative integer or "all"', { field: 'replaySample' });
  const nowMs = Date.now();
  const now = new Date(nowMs).toISOString();
  const all = await recentDecisions(mem.driver, tenant, 100_000, METRICS_DECISION_CHARS);
  const firstMs = all.reduce((m, d) => Math.min(m, Date.parse(d.at)), nowMs);
  const span = Math.max(1, nowMs + 1 - firstMs);
  const bucketMs = Math.ceil(span / n);
  const windows = Array.from({ length: n }, (_, i) => {
    const from = new Date(firstMs + i * bucketMs).toISOString();
    const to = new Date(firstMs + (i + 1) * bucketMs).toISOString();
    return { from, to, decisions: inWindow(all, from, to) };
  });
  const base = await loadStore(mem.driver, tenant);
  const replays = await replayAll(
    mem.driver,
    tenant,
    windows.flatMap((w) => replayIds(w.decisions, replaySample)),
  );
  const { k, minAuthority: floor } = mem.policy.document.corroboration;
  const pause = yielder();
  const buckets: MetricsBucket[] = [];
  for (const w of windows) {
    buckets.push({ from: w.from, to: w.to, tiers: tierMetrics(base, w.decisions, replaySample, replays, { k, floor, now }).tiers });
    await pause();
  }
  return { tenant, computedAt: now, policyVersion: mem.policy.version, bucketMs, buckets };
}
