/**
 * Statistics for the benchmark: Wilson score intervals for rates, and a small seeded PRNG so a
 * run can be repeated exactly (the seed is written to results.json). The one home of the
 * project's PRNG and percentile: the perf and reliability suites import them from here.
 */

/** z for a two-sided 95% interval. */
export const Z95 = 1.959963984540054;

/**
 * Wilson score interval for a binomial proportion (Wilson 1927). Unlike the normal
 * approximation it stays inside [0, 1] and is sensible at 0/n and n/n.
 *
 * @returns `[low, high]`; `[0, 1]` when `n` is 0 (nothing is known).
 */
export function wilson(successes: number, n: number, z: number = Z95): [number, number] {
  if (!Number.isInteger(n) || n < 0 || !Number.isInteger(successes) || successes < 0 || successes > n) throw new RangeError(`wilson: need 0 <= successes <= n integers, got ${successes}/${n}`);
  if (n === 0) return [0, 1];
  const p = successes / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const center = (p + z2 / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  // clamp rounding noise at the ends (0/n has low exactly 0, n/n has high exactly 1)
  return [successes === 0 ? 0 : Math.max(0, center - half), successes === n ? 1 : Math.min(1, center + half)];
}

/** A rate with its Wilson 95% interval. */
export interface Rate {
  readonly k: number;
  readonly n: number;
  /** k/n, or null when n is 0 */
  readonly rate: number | null;
  readonly ci95: readonly [number, number];
}

export function rate(k: number, n: number): Rate {
  return { k, n, rate: n === 0 ? null : k / n, ci95: wilson(k, n) };
}

/** `12/37 (32%, 95% CI 19–49%)`. */
export function formatRate(r: Pick<Rate, 'k' | 'n'>, opts: { ci?: boolean } = {}): string {
  if (r.n === 0) return '—';
  const pct = (x: number): string => `${(100 * x).toFixed(0)}%`;
  const base = `${r.k}/${r.n} (${pct(r.k / r.n)}`;
  if (opts.ci === false) return `${base})`;
  const [lo, hi] = wilson(r.k, r.n);
  return `${base}, CI ${(100 * lo).toFixed(0)}–${pct(hi)})`;
}

/** mulberry32: a tiny 32-bit PRNG (public domain). Returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Nearest-rank percentile of ascending `sorted` samples, `q` in [0, 1] (0.5 is the median, 0.99
 * the 99th percentile). Used by the perf and reliability suites for latencies.
 * @returns the sample at rank ⌈q·n⌉ (clamped to the ends), or NaN when there are no samples.
 */
export function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i] as number;
}

/** Derive a 32-bit seed from a base seed and labels (FNV-1a over the text), stable across runs. */
export function deriveSeed(base: number, ...labels: ReadonlyArray<string | number>): number {
  let h = 0x811c9dc5 ^ (base >>> 0);
  for (const ch of labels.join('\u0000')) {
    h ^= ch.codePointAt(0) as number;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** Fisher–Yates shuffle of a copy, driven by `rand`. */
export function shuffled<T>(xs: readonly T[], rand: () => number): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j] as T, a[i] as T];
  }
  return a;
}
