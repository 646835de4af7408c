/**
 * The decision budget of external principals (pure bookkeeping, no I/O): each external principal
 * of a tenant may have at most `perMinute` decisions recorded per minute (a token bucket of that
 * size, refilled evenly over the minute). A decision is cheap to request and lands in the review
 * queue and the metrics, and a dry run costs the gate the same work: without a budget one external
 * token could flood both or keep the process busy. Agents, tools, people and the application are
 * not limited here (they are the tenant's own). Used by POST /v1/decisions and POST
 * /v1/decisions/evaluate (routes/gate.ts) and the MCP tools `authorize_action` and `check_action`
 * (mcp-tools.ts) alike.
 *
 * May import: ./errors.js, ./token-buckets.js, core types.
 */
import type { Principal } from '../core/types.js';
import { HttpError } from './errors.js';
import { TokenBuckets } from './token-buckets.js';

/** Token buckets of external principals' decisions, keyed by tenant and principal. */
export class DecisionBudget {
  private readonly buckets: TokenBuckets;

  /**
   * @param perMinute decisions an external principal may request per minute (config
   *   `externalDecisionsPerMinute`).
   * @param now the clock in milliseconds (tests pass their own).
   */
  constructor(
    private readonly perMinute: number,
    now: () => number = Date.now,
  ) {
    this.buckets = new TokenBuckets(perMinute, now);
  }

  /**
   * Count one decision requested by `principal` of `tenant`; nothing for principals that are not
   * `external` (nor for the admin token: `principal` null).
   *
   * @throws HttpError `RATE_LIMITED` (429) when the principal has used its budget; details
   *   `{tenant, principal, perMinute, retryAfterSeconds}` (the server also sends `Retry-After`).
   */
  admit(tenant: string, principal: Pick<Principal, 'id' | 'kind'> | null): void {
    if (principal === null || principal.kind !== 'external') return;
    const retryAfterSeconds = this.buckets.take(`${tenant}\u0000${principal.id}`);
    if (retryAfterSeconds === null) return;
    throw new HttpError(
      429,
      'RATE_LIMITED',
      `external principal ${JSON.stringify(principal.id)} may request ${this.perMinute} decisions per minute and has used them: retry in ${retryAfterSeconds} s`,
      { tenant, principal: principal.id, perMinute: this.perMinute, retryAfterSeconds },
    );
  }
}
