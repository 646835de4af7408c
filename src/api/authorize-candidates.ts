/**
 * Candidate loading for the action gate (docs/design.md § Action gate): the records a decision may
 * depend on — declared in `dependsOn` and read in the session — with why each is a dependency so
 * far, and the confirmations that may allow the action. Part of `authorize` (api/authorize.ts).
 * Imports from src/core, src/store's port, and api/ modules below the facade.
 */
import { MemauthError } from '../core/errors.js';
import type { ConfirmationCandidate } from '../core/gate.js';
import { confirmationMatchesEntry } from '../core/row-match.js';
import type { Confirmation, DependencyWhy, MemoryRecord } from '../core/types.js';
import type { StorageTx } from '../store/driver.js';
import type { OpContext } from './context.js';

/** The dependency candidates of one decision, and why each is a dependency before value matching. */
export interface Candidates {
  /** the records of `dependsOn` and of the session, each once. */
  readonly list: readonly MemoryRecord[];
  /** reasons by record id: `declared`, `context` (when the context mode is `session`); `value` is added later. */
  readonly why: Map<string, Set<DependencyWhy>>;
  /** the ids of the session's read log in the order read or written (none without a session). */
  readonly readOrder: readonly string[];
}

/** Add reason `w` for record `id` to `why`. */
export function addWhy(why: Map<string, Set<DependencyWhy>>, id: string, w: DependencyWhy): void {
  const s = why.get(id) ?? new Set();
  s.add(w);
  why.set(id, s);
}

/**
 * Inside the decision's transaction: the records of `dependsOn` and those read in `session`.
 * @throws `RECORD_NOT_FOUND` for a `dependsOn` id not in the tenant.
 */
export async function loadCandidates(tx: StorageTx, tenant: string, dependsOn: readonly string[] | undefined, session: string | undefined, contextMode: 'session' | 'declared'): Promise<Candidates> {
  const declaredIds = [...new Set(dependsOn ?? [])];
  const declared = await tx.getRecords(tenant, declaredIds);
  // getRecords returns each record found once: as many as asked means none is missing
  const found = declared.length === declaredIds.length ? null : new Set(declared.map((r) => r.id));
  const missing = found === null ? [] : declaredIds.filter((id) => !found.has(id));
  if (missing.length > 0)
    throw new MemauthError('RECORD_NOT_FOUND', `authorize: dependsOn names no record ${missing.map((m) => JSON.stringify(m)).join(', ')} in tenant ${JSON.stringify(tenant)}`, { ids: missing });
  const readOrder = session === undefined ? [] : await tx.sessionReads(tenant, session);
  const reads = await tx.getRecords(tenant, readOrder);
  const candidates = new Map<string, MemoryRecord>();
  for (const r of reads) candidates.set(r.id, r);
  for (const r of declared) candidates.set(r.id, r);
  const why = new Map<string, Set<DependencyWhy>>();
  for (const id of declaredIds) addWhy(why, id, 'declared');
  if (contextMode === 'session') for (const r of reads) addWhy(why, r.id, 'context');
  return { list: [...candidates.values()], why, readOrder };
}

/**
 * The confirmations that may allow the action: the one cited (if any), else every unexpired one
 * for this action type and args hash — only rows that match their `confirm` audit entries, each
 * with how often it was used so far.
 */
export async function confirmationCandidates(
  ctx: Pick<OpContext, 'provenance'>,
  tx: StorageTx,
  tenant: string,
  actionType: string,
  argsHash: string,
  cited: string | null,
  now: string,
): Promise<ConfirmationCandidate[]> {
  let list: Confirmation[];
  if (cited !== null) {
    const c = await tx.getConfirmation(tenant, cited);
    list = c ? [c] : [];
  } else {
    list = await tx.listConfirmations(tenant, actionType, argsHash, now);
  }
  if (list.length === 0) return [];
  list = await ctx.provenance.verifiedRows(tx, tenant, list, confirmationMatchesEntry);
  const uses = await tx.confirmationUses(
    tenant,
    list.map((c) => c.id),
  );
  return list.map((confirmation) => ({ confirmation, usesSoFar: uses.get(confirmation.id) ?? 0 }));
}
