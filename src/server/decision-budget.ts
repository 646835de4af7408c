/**
 * The decision budget of external principals (pure bookkeeping, no I/O): each external principal
 * of a tenant may have at most `perMinute` decisions recorded per minute (a token bucket of that
 * size, refilled evenly over the minute). A decision is cheap to request and lands in the review
 * queue and the metrics: without a budget one external token could flood both. Agents, tools,
 * people and the application are not limited here (they are the tenant's own). Used by POST
 * /v1/decisions (routes/gate.ts) and the MCP tool `authorize_action` (mcp.ts) alike.
 *
 * May import: ./errors.js, core types.
 */
import type { Principal } from '../core/types.js';
import { HttpError } from './errors.js';

/** Buckets kept at most; past it, full buckets (principals idle for a minute) are dropped first. */
const MAX_BUCKETS = 10_000;

/** Token buckets of external principals' decisions, keyed by tenant and principal. */
export class DecisionBudget {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  /**
   * @param perMinute decisions an external principal may request per minute (config
   *   `externalDecisionsPerMinute`).
   * @param now the clock in milliseconds (tests pass their own).
   */
  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Count one decision requested by `principal` of `tenant`; nothing for principals that are not
   * `external` (nor for the admin token: `principal` null).
   *
   * @throws HttpError `RATE_LIMITED` (429) when the principal has used its budget; details
   *   `{tenant, principal, perMinute, retryAfterSeconds}` (the server also sends `Retry-After`).
   */
  admit(tenant: string, principal: Pick<Principal, 'id' | 'kind'> | null): void {
    if (principal === null || principal.kind !== 'external') return;
    const key = `${tenant}\u0000${principal.id}`;
    const t = this.now();
    const rate = this.perMinute / 60_000;
    const b = this.buckets.get(key) ?? { tokens: this.perMinute, at: t };
    b.tokens = Math.min(this.perMinute, b.tokens + (t - b.at) * rate);
    b.at = t;
    if (b.tokens < 1) {
      const retryAfterSeconds = Math.max(1, Math.ceil((1 - b.tokens) / rate / 1000));
      throw new HttpError(
        429,
        'RATE_LIMITED',
        `external principal ${JSON.stringify(principal.id)} may request ${this.perMinute} decisions per minute and has used them: retry in ${retryAfterSeconds} s`,
        { tenant, principal: principal.id, perMinute: this.perMinute, retryAfterSeconds },
      );
    }
    b.tokens -= 1;
    this.buckets.delete(key);
    this.buckets.set(key, b);
    if (this.buckets.size > MAX_BUCKETS) this.prune(t, rate);
  }

  /** Drop buckets that have refilled (idle principals), then the least recently used ones, down to {@link MAX_BUCKETS}. */
  private prune(t: number, rate: number): void {
    for (const [k, b] of this.buckets) if (b.tokens + (t - b.at) * rate >= this.perMinute) this.buckets.delete(k);
    for (const k of this.buckets.keys()) {
      if (this.buckets.size <= MAX_BUCKETS) break;
      this.buckets.delete(k);
    }
  }
}
