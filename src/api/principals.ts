/**
 * Principal rows checked against the audit chain (docs/design.md § Audit log: every row that can grant
 * authority or identity is checked against the chain). A principal row is trusted only when it
 * matches its `principal` registration entry (core/identity.ts): a row inserted or altered outside
 * the API — a forged `user`, a raised `maxAuthority`, a changed `domain` — is no principal at all.
 */
import type { AuditEntry } from '../core/audit.js';
import type { Principal } from '../core/types.js';
import { linksTo, principalEntry } from '../core/identity.js';
import type { StorageReader } from '../store/driver.js';
import { auditEntriesAt } from './audit-entries.js';

/**
 * Verifies principal rows, memoised per row object the way the facade memoises records: the read
 * cache hands out the same frozen object while the row is known unchanged and a new one after
 * anything changed behind its back; a driver without a cache returns new objects (checked again).
 */
export class PrincipalVerifier {
  private readonly memo = new WeakMap<Principal, boolean>();

  /**
   * The principal `id` of `tenant` when its row matches its registration entry, else null (not
   * registered, or registered differently: the caller reports `UNKNOWN_PRINCIPAL`).
   */
  async get(src: StorageReader, tenant: string, id: string): Promise<Principal | null> {
    const p = await src.getPrincipal(tenant, id);
    if (!p) return null;
    let ok = this.memo.get(p);
    if (ok === undefined) {
      ok = await verifiedEntry(src, principalEntry(p, await src.auditEntriesNaming(tenant, ['principal'], { field: 'principalId', value: id })));
      this.memo.set(p, ok);
    }
    return ok ? p : null;
  }

  /** The tenant's principals whose rows match their registration entries (one look-up of all registrations). */
  async list(src: StorageReader, tenant: string): Promise<Principal[]> {
    const rows = await src.listPrincipals(tenant);
    const todo = rows.filter((p) => !this.memo.has(p));
    if (todo.length > 0) {
      const byId = new Map<string, AuditEntry[]>();
      for (const e of await src.auditEntriesNaming(tenant, ['principal'], null)) {
        const pid = (e.payload as Record<string, unknown>).principalId;
        if (typeof pid !== 'string') continue;
        const l = byId.get(pid) ?? [];
        l.push(e);
        byId.set(pid, l);
      }
      // each registration entry still linked to its successor: the successors read in one batch
      const entries = todo.map((p) => principalEntry(p, byId.get(p.id) ?? []));
      const next = await auditEntriesAt(
        src,
        tenant,
        entries.filter((e): e is AuditEntry => !!e),
        (e) => e.seq + 1,
      );
      todo.forEach((p, i) => {
        const e = entries[i];
        this.memo.set(p, !!e && linksTo(e, next.get(e.seq + 1)));
      });
    }
    return rows.filter((p) => this.memo.get(p) === true);
  }
}

/** `e` is an entry (not null) still linked to its successor in the chain (core/identity.ts `linksTo`). */
export async function verifiedEntry(src: StorageReader, e: AuditEntry | null | undefined): Promise<boolean> {
  if (!e) return false;
  const [next] = await src.auditRange(e.tenant, e.seq + 1, e.seq + 1);
  return linksTo(e, next);
}

/** A process-wide verifier for callers without their own (token authentication, metrics). */
export const principals = new PrincipalVerifier();
