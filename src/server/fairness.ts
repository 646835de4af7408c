/**
 * Per-tenant limits and fair scheduling of the server's expensive endpoints and MCP tools
 * (metrics, metrics series, replay, audit verification): each reads a tenant's whole log or
 * table, so one token calling them in a loop must not take the process from every other tenant,
 * nor from the other principals of its own tenant. Each tenant has two sides with separate slots
 * and queues: its own principals (agents, people, the application, the admin token) and its
 * channels (external principals — which may only replay their own decisions — and tools). Each
 * side may have at most `maxExpensivePerTenant` requests admitted at once; one more is
 * `TOO_MANY_REQUESTS` (429) naming that side's limit (`external`). So a tool or external token
 * looping these requests takes only that side's slots, never those of the tenant's own
 * principals. Each side's admitted requests run one at a time, in arrival order, and wait only
 * behind the same side of the same tenant. The heads of different tenants' queues run at the same time; the work
 * itself yields to the event loop every few milliseconds (src/api/yielder.ts), so they share the
 * CPU in turn with each other and with every tenant's ordinary requests.
 */
import type { Principal } from '../core/types.js';
import { HttpError } from './errors.js';

/** Which slots of a tenant a caller uses: its own principals', or its channels' (external and tool principals). */
export type SlotSide = 'tenant' | 'external';

/** The side of a caller: `external` for an external or tool principal, `tenant` for everyone else (null: the admin token). */
export function sideOf(principal: Pick<Principal, 'kind'> | null): SlotSide {
  return principal?.kind === 'external' || principal?.kind === 'tool' ? 'external' : 'tenant';
}

/** The state every view of one {@link TenantSlots} shares. */
interface SlotState {
  readonly running: Map<string, number>;
  /** per tenant and side, the tail of its queue of admitted expensive requests. */
  readonly tails: Map<string, Promise<void>>;
}

/**
 * Counts the expensive requests admitted per tenant and side and runs them in one queue each.
 * A caller uses the view of its side ({@link TenantSlots.for}); the root object is the
 * `tenant` side.
 */
export class TenantSlots {
  constructor(
    private readonly max: number,
    private readonly side: SlotSide = 'tenant',
    private readonly state: SlotState = { running: new Map(), tails: new Map() },
  ) {}

  /** The view of these slots used by `principal` (null: the admin token): same counts and queues, its side. */
  for(principal: Pick<Principal, 'kind'> | null): TenantSlots {
    const side = sideOf(principal);
    return side === this.side ? this : new TenantSlots(this.max, side, this.state);
  }

  /**
   * Run `fn` in one of the slots of `tenant` on this view's side (a slot is held while queued
   * and while running), after the expensive requests of the same tenant and side admitted
   * before it have finished. Other tenants' and the other side's requests do not delay it.
   *
   * @throws HttpError `TOO_MANY_REQUESTS` (429) when that side of the tenant already has `max`
   *   expensive requests admitted; details `{tenant, operation, max, limit: 'tenant' | 'external'}`.
   */
  async run<T>(tenant: string, operation: string, fn: () => Promise<T>): Promise<T> {
    const { running, tails } = this.state;
    const key = `${this.side}\u0000${tenant}`;
    const n = running.get(key) ?? 0;
    if (n >= this.max) {
      const who = this.side === 'external' ? `the external principals of tenant ${JSON.stringify(tenant)}` : `tenant ${JSON.stringify(tenant)}`;
      throw new HttpError(429, 'TOO_MANY_REQUESTS', `${who} already run ${n} expensive requests (metrics, replay, audit verification); the limit is ${this.max} at once: retry when one has finished`, {
        tenant,
        operation,
        max: this.max,
        limit: this.side,
      });
    }
    running.set(key, n + 1);
    const before = tails.get(key) ?? Promise.resolve();
    let done = (): void => undefined;
    const mine = new Promise<void>((resolve) => {
      done = resolve;
    });
    tails.set(key, mine);
    try {
      await before;
      return await fn();
    } finally {
      done();
      if (tails.get(key) === mine) tails.delete(key);
      const left = (running.get(key) ?? 1) - 1;
      if (left <= 0) running.delete(key);
      else running.set(key, left);
    }
  }
}
