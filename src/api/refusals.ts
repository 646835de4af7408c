/**
 * Refusals written to the audit chain (docs/design.md § Audit log: a refused attempt is logged in
 * the tenant's chain): the error is thrown, and an entry naming it is appended in a transaction of
 * its own — after the refused operation's transaction rolled back. Also the principal look-ups
 * whose failure is such a refusal (`UNKNOWN_PRINCIPAL`). Imports from src/core, src/store's port,
 * and api/context.ts.
 */
import type { AuditOp } from '../core/audit.js';
import { MemauthError } from '../core/errors.js';
import type { Principal } from '../core/types.js';
import type { StorageDriver, StorageTx } from '../store/driver.js';
import { type OpContext, appendAudit, nowOf } from './context.js';

/** A refusal found inside a transaction: logged in the chain (by {@link refuse}) after it rolled back. */
export class Refusal {
  constructor(
    readonly payload: Record<string, unknown>,
    readonly error: MemauthError,
  ) {}
}

/** The error for a principal that is not registered (or whose row does not match its registration). */
export function unknownPrincipal(tenant: string, id: string): MemauthError {
  return new MemauthError(
    'UNKNOWN_PRINCIPAL',
    `principal ${JSON.stringify(id)} is not registered in tenant ${JSON.stringify(tenant)} (or its row does not match its registration in the audit chain: run memauth audit verify); register it first (memauth principal add)`,
    { tenant, principal: id },
  );
}

/** Log a refused attempt in the tenant's chain, then throw the error. */
export async function refuse(ctx: Pick<OpContext, 'store' | 'policy' | 'clock'>, tenant: string, op: AuditOp, payload: Record<string, unknown>, err: MemauthError): Promise<never> {
  try {
    await ctx.store.transaction(tenant, (tx) => appendAudit(ctx, tx, tenant, op, { refused: err.code, message: err.message, ...payload, at: nowOf(ctx) }));
  } catch {
    // the refusal stands even if it could not be logged
  }
  throw err;
}

/** Run `run`; a {@link Refusal} it throws is logged in the tenant's chain (unless `op` is null: nothing is recorded) and its error thrown. */
export async function refusing<T>(ctx: Pick<OpContext, 'store' | 'policy' | 'clock'>, tenant: string, op: AuditOp | null, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof Refusal) return op === null ? Promise.reject(e.error) : refuse(ctx, tenant, op, e.payload, e.error);
    throw e;
  }
}

/** Inside a transaction: the principal, or a {@link Refusal} to log once the transaction is over. */
export async function principalIn(ctx: Pick<OpContext, 'provenance'>, tx: StorageTx, tenant: string, id: string): Promise<Principal> {
  const p = await ctx.provenance.principals.get(tx, tenant, id);
  if (!p) throw new Refusal({ principalId: id }, unknownPrincipal(tenant, id));
  return p;
}

/** The principal, or the refusal `UNKNOWN_PRINCIPAL` logged under `op` and thrown. */
export async function principalOrThrow(ctx: Pick<OpContext, 'store' | 'policy' | 'clock' | 'provenance'>, src: StorageTx | StorageDriver, tenant: string, id: string, op: AuditOp): Promise<Principal> {
  const p = await ctx.provenance.principals.get(src, tenant, id);
  if (!p) {
    return refuse(ctx, tenant, op, { principalId: id }, unknownPrincipal(tenant, id));
  }
  return p;
}
