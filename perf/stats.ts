/**
 * Sampling helpers for the performance suite: nanosecond timers, percentiles, formatting.
 * Latencies are taken with `process.hrtime.bigint()` and kept as numbers of nanoseconds.
 * The percentile itself is the bench's (src/bench/stats.ts), re-exported here.
 */
import { percentile } from '../src/bench/stats.js';

export { percentile };

/** Nanoseconds since an arbitrary origin (monotonic). */
export function nowNs(): bigint {
  return process.hrtime.bigint();
}

/** Summary of a list of samples (nanoseconds). */
export interface Summary {
  readonly n: number;
  readonly p50: number;
  readonly p99: number;
  readonly mean: number;
  readonly min: number;
  readonly max: number;
}

/** p50, p99, mean, min, max of `samples` (not modified). */
export function summarize(samples: readonly number[]): Summary {
  const s = [...samples].sort((a, b) => a - b);
  const mean = s.length === 0 ? Number.NaN : s.reduce((a, b) => a + b, 0) / s.length;
  return { n: s.length, p50: percentile(s, 0.5), p99: percentile(s, 0.99), mean, min: s[0] ?? Number.NaN, max: s[s.length - 1] ?? Number.NaN };
}

/** A duration in ns as a short human string: `850 ns`, `4.2 µs`, `3.10 ms`, `1.24 s`. */
export function fmtNs(ns: number): string {
  if (!Number.isFinite(ns)) return 'n/a';
  if (ns < 1_000) return `${ns.toFixed(0)} ns`;
  if (ns < 1_000_000) return `${(ns / 1_000).toFixed(ns < 10_000 ? 2 : 1)} µs`;
  if (ns < 1_000_000_000) return `${(ns / 1_000_000).toFixed(ns < 10_000_000 ? 2 : 1)} ms`;
  return `${(ns / 1_000_000_000).toFixed(2)} s`;
}

/** A rate as a short human string: `12.3k/s`. */
export function fmtRate(perSecond: number): string {
  if (!Number.isFinite(perSecond)) return 'n/a';
  if (perSecond >= 1_000_000) return `${(perSecond / 1_000_000).toFixed(2)}M/s`;
  if (perSecond >= 10_000) return `${(perSecond / 1_000).toFixed(1)}k/s`;
  if (perSecond >= 1_000) return `${(perSecond / 1_000).toFixed(2)}k/s`;
  return `${perSecond.toFixed(0)}/s`;
}

/** Bytes as MiB with one decimal. */
export function fmtBytes(b: number): string {
  if (!Number.isFinite(b)) return 'n/a';
  return `${(b / (1024 * 1024)).toFixed(1)} MiB`;
}

/** `1.07×`; `n/a` when either side is missing. */
export function fmtRatio(r: number | null): string {
  return r === null || !Number.isFinite(r) ? 'n/a' : `${r.toFixed(2)}×`;
}

/** Time `fn` once, in ns. */
export async function timeAsync(fn: () => Promise<unknown>): Promise<number> {
  const t0 = nowNs();
  await fn();
  return Number(nowNs() - t0);
}
