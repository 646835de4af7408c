/**
 * Per-tenant limits of the server's expensive endpoints (metrics, metrics series, replay, audit
 * verification): each reads a tenant's whole log or table, so one token calling them in a loop
 * must not take the process from every other tenant. A tenant may run at most
 * `maxExpensivePerTenant` of them at once; one more is `TOO_MANY_REQUESTS` (429) naming that
 * tenant's limit. The work itself yields to the event loop between pages (src/api/replay.ts,
 * src/api/metrics.ts), so the other tenants' requests are served while it runs.
 */
import { HttpError } from './errors.js';

/** Counts the expensive requests in flight per tenant. */
export class TenantSlots {
  private readonly running = new Map<string, number>();

  constructor(private readonly max: number) {}

  /**
   * Run `fn` in one of `tenant`'s slots.
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
    try {
      return await fn();
    } finally {
      const left = (this.running.get(tenant) ?? 1) - 1;
      if (left <= 0) this.running.delete(tenant);
      else this.running.set(tenant, left);
    }
  }
}
