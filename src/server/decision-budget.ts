/**
 * The decision budget of channel principals (pure bookkeeping, no I/O): each `external` or `tool`
 * principal of a tenant may have at most its kind's `perMinute` decisions recorded per minute (a
 * token bucket of that size, refilled evenly over the minute). A decision is cheap to request and
 * lands in the review queue and the metrics, and a dry run costs the gate the same work: without
 * a budget one token carrying others' text could flood both or keep the process busy. Agents,
 * people and the application are not limited here (they act for the user). Used by POST
 * /v1/decisions and POST /v1/decisions/evaluate (routes/gate.ts) and the MCP tools
 * `authorize_action` and `check_action` (mcp-tools.ts) alike.
 *
 * May import: ./errors.js, ./token-buckets.js, core types.
 */
import type { Principal } from '../core/types.js';
import { HttpError } from './errors.js';
import { TokenBuckets } from './token-buckets.js';

/** Token buckets of external and tool principals' decisions, keyed by tenant and principal. */
export class DecisionBudget {
  private readonly buckets: ReadonlyMap<string, TokenBuckets>;

  /**
   * @param perMinute decisions per minute an `external` principal (config
   *   `externalDecisionsPerMinute`) and a `tool` principal (`toolDecisionsPerMinute`) may request.
   * @param now the clock in milliseconds (tests pass their own).
   */
  constructor(perMinute: { readonly external: number; readonly tool: number }, now: () => number = Date.now) {
    this.buckets = new Map([
      ['external', new TokenBuckets(perMinute.external, now)],
      ['tool', new TokenBuckets(perMinute.tool, now)],
    ]);
  }

  /**
   * Count one decision requested by `principal` of `tenant`; nothing for principals of other
   * kinds (nor for the admin token: `principal` null).
   *
   * @throws HttpError `RATE_LIMITED` (429) when the principal has used its budget; details
   *   `{tenant, principal, perMinute, retryAfterSeconds}` (the server also sends `Retry-After`).
   */
  admit(tenant: string, principal: Pick<Principal, 'id' | 'kind'> | null): void {
    const b = principal === null ? undefined : this.buckets.get(principal.kind);
    if (principal === null || b === undefined) return;
    const retryAfterSeconds = b.take(`${tenant}\u0000${principal.id}`);
    if (retryAfterSeconds === null) return;
    throw new HttpError(
      429,
      'RATE_LIMITED',
      `${principal.kind} principal ${JSON.stringify(principal.id)} may request ${b.capacity} decisions per minute and has used them: retry in ${retryAfterSeconds} s`,
      { tenant, principal: principal.id, perMinute: b.capacity, retryAfterSeconds },
    );
  }
}
