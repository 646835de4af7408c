/**
 * Token buckets keyed by string (pure bookkeeping, no I/O): each key holds at most `capacity`
 * tokens, refilled evenly over one minute. The per-minute budgets of external and tool
 * principals (decision-budget.ts, write-budget.ts) are built on it.
 *
 * May import: nothing.
 */

/** Buckets kept at most; past it, full buckets (keys idle for a minute) are dropped first. */
const MAX_BUCKETS = 10_000;

/** Token buckets refilled at `capacity` per minute, one per key. */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  /**
   * @param capacity tokens per minute (also the most a bucket holds).
   * @param now the clock in milliseconds (tests pass their own).
   */
  constructor(
    readonly capacity: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Take `cost` tokens from `key`'s bucket if it holds them.
   *
   * @returns null when taken; otherwise the whole seconds (at least 1) until the bucket holds
   *   `cost` (nothing is taken).
   */
  take(key: string, cost = 1): number | null {
    const { b, t, rate } = this.refilled(key);
    if (b.tokens < cost) return Math.max(1, Math.ceil((cost - b.tokens) / rate / 1000));
    b.tokens -= cost;
    if (this.buckets.size > MAX_BUCKETS) this.prune(t, rate);
    return null;
  }

  /**
   * Take `cost` tokens from `key`'s bucket even past empty: a request admitted for less than it
   * turned out to use. The bucket owes the rest; later takes wait until it has refilled past it.
   */
  charge(key: string, cost: number): void {
    const { b, t, rate } = this.refilled(key);
    b.tokens -= cost;
    if (this.buckets.size > MAX_BUCKETS) this.prune(t, rate);
  }

  /** `key`'s bucket refilled up to now, as the most recently used. */
  private refilled(key: string): { b: { tokens: number; at: number }; t: number; rate: number } {
    const t = this.now();
    const rate = this.capacity / 60_000;
    const b = this.buckets.get(key) ?? { tokens: this.capacity, at: t };
    b.tokens = Math.min(this.capacity, b.tokens + (t - b.at) * rate);
    b.at = t;
    this.buckets.delete(key);
    this.buckets.set(key, b);
    return { b, t, rate };
  }

  /** Give back `cost` tokens taken from `key` (a request refused by a later check). */
  refund(key: string, cost = 1): void {
    const b = this.buckets.get(key);
    if (b) b.tokens = Math.min(this.capacity, b.tokens + cost);
  }

  /** Drop buckets that have refilled (idle keys), then the least recently used ones, down to {@link MAX_BUCKETS}. */
  private prune(t: number, rate: number): void {
    for (const [k, b] of this.buckets) if (b.tokens + (t - b.at) * rate >= this.capacity) this.buckets.delete(k);
    for (const k of this.buckets.keys()) {
      if (this.buckets.size <= MAX_BUCKETS) break;
      this.buckets.delete(k);
    }
  }
}
