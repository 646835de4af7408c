/**
 * Per-tenant limits and fair scheduling of the server's expensive endpoints (metrics, metrics
 * series, replay, audit verification): each reads a tenant's whole log or table, so one token
 * calling them in a loop must not take the process from every other tenant. A tenant may have
 * at most `maxExpensivePerTenant` of them admitted at once; one more is `TOO_MANY_REQUESTS` (429)
 * naming that tenant's limit. Each tenant has its own queue: its admitted requests run one at a
 * time, in arrival order, and a tenant's request waits only behind its own tenant's — never
 * behind another tenant's. The heads of different tenants' queues run at the same time; the work
 * itself yields to the event loop every few milliseconds (src/api/yielder.ts), so they share the
 * CPU in turn with each other and with every tenant's ordinary requests.
 */
import { HttpError } from './errors.js';

/** Counts the expensive requests admitted per tenant and runs them in one queue per tenant. */
export class TenantSlots {
  private readonly running = new Map<string, number>();
  /** per tenant, the tail of its queue of admitted expensive requests. */
  private readonly tails = new Map<string, Promise<void>>();

  constructor(private readonly max: number) {}

  /**
   * Run `fn` in one of `tenant`'s slots (a slot is held while queued and while running), after
   * the expensive requests of the same tenant admitted before it have finished. Other tenants'
   * requests do not delay it.
   *
   * @throws HttpError `TOO_MANY_REQUESTS` (429) when the tenant already has `max` expensive
   *   requests admitted; details `{tenant, operation, max, limit: 'tenant'}`.
   */
  async run<T>(tenant: string, operation: string, fn: () => Promise<T>): Promise<T> {
    const n = this.running.get(tenant) ?? 0;
    if (n >= this.max) {
      throw new HttpError(
        429,
        'TOO_MANY_REQUESTS',
        `tenant ${JSON.stringify(tenant)} already runs ${n} expensive requests (metrics, replay, audit verification); its limit is ${this.max} at once: retry when one has finished`,
        { tenant, operation, max: this.max, limit: 'tenant' },
      );
    }
    this.running.set(tenant, n + 1);
    const before = this.tails.get(tenant) ?? Promise.resolve();
    let done = (): void => undefined;
    const mine = new Promise<void>((resolve) => {
      done = resolve;
    });
    this.tails.set(tenant, mine);
    try {
      await before;
      return await fn();
    } finally {
      done();
      if (this.tails.get(tenant) === mine) this.tails.delete(tenant);
      const left = (this.running.get(tenant) ?? 1) - 1;
      if (left <= 0) this.running.delete(tenant);
      else this.running.set(tenant, left);
    }
  }
}
