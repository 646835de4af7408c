/**
 * The HTTP schemas of the metrics (docs/design.md § Metrics; src/api/metrics.ts): a ratio, the
 * metrics of one risk tier, and one time bucket of the series. Used by the `Metrics` and
 * `MetricsSeries` responses of ./schemas.ts. Strict, like every response.
 */
import { z } from 'zod';

export const Ratio = z.strictObject({ numerator: z.number().int(), denominator: z.number().int(), value: z.number().nullable() });
export const WithRejected = z.strictObject({ ...Ratio.shape, rejected: z.record(z.string(), z.number().int()) });
const LaunderingAsr = z.strictObject({ ...Ratio.shape, byChannel: z.record(z.string(), Ratio) });
export const TierMetrics = z.strictObject({
  decisions: z.number().int(),
  records: z.number().int(),
  originCoverage: Ratio,
  taintRetention: Ratio,
  launderingAsr: LaunderingAsr,
  legitimateUtility: Ratio,
  corroborationValidity: WithRejected,
  highRiskDependencyRate: Ratio,
  decisionReplayRate: Ratio,
  external: z
    .strictObject({ decisions: z.number().int(), launderingAsr: LaunderingAsr, legitimateUtility: Ratio, highRiskDependencyRate: Ratio })
    .describe("decisions requested by external, tool or unregistered principals, apart: they never dilute the tier's headline figures"),
});
/** One time window of the metrics series: the metrics of each tier. */
export const MetricsBucket = z.strictObject({ from: z.string(), to: z.string(), tiers: z.strictObject({ read_only: TierMetrics, low: TierMetrics, high: TierMetrics }) });
