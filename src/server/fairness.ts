/**
 * Per-tenant limits of the server's expensive endpoints (metrics, metrics series, replay, audit
 * verification): each reads a tenant's whole log or table, so one token calling them in a loop
 * must not take the process from every other tenant. A tenant may run at most
 * `maxExpensivePerTenant` of them at once; one more is `TOO_MANY_REQUESTS` (429) naming that
 * tenant's limit. Admitted requests run one at a time in the process, in arrival order, and
 * the work itself yields to the event loop every few milliseconds (src/api/yielder.ts), so the
 * ordinary requests of every tenant are served while it runs and share the CPU with at most one
 * expensive computation.
 */
import { HttpError } from './errors.js';

/** Counts the expensive requests in flight per tenant. */
export class TenantSlots {
  private readonly running = new Map<string, number>();
  /** the tail of the process-wide queue of admitted expensive requests. */
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly max: number) {}

  /**
   * Run `fn` in one of `tenant`'s slots (a slot is held while queued and while running), after
   * the expensive requests admitted before it have finished.
   *
   * @throws HttpError `TOO_MANY_REQUESTS` (429) when the tenant already runs `max` expensive
   *   requests; details `{tenant, max, limit: 'tenant'}`.
   */
  async run<T>(tenant: string, operation: string, fn: () => Promise<T>): Promise<T> {
    const n = this.running.get(tenant) ?? 0;
    if (n >= this.max) {
      throw new HttpError(429, 'TOO_MANY_REQUESTS', `tenant ${JSON.stringify(tenant)} already runs ${n} expensive requests (metrics, replay, audit verification); its limit is ${this.max} at once: retry when one has finished`, { tenant, operation, max: this.max, limit: 'tenant' });
    }
    this.running.set(tenant, n + 1);
    const before = this.tail;
    let done = (): void => undefined;
    this.tail = new Promise<void>((resolve) => {
      done = resolve;
    });
    try {
      await before;
      return await fn();
    } finally {
      done();
      const left = (this.running.get(tenant) ?? 1) - 1;
      if (left <= 0) this.running.delete(tenant);
      else this.running.set(tenant, left);
    }
  }
}
