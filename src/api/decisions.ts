/**
 * Stored decisions of the action gate as the facade returns them (docs/design.md § Audit log): one
 * decision, or a tenant's recent ones — only rows that match the `decide` audit entry that
 * recorded them (a row forged outside the API is no decision of the gate). Imports from src/core,
 * src/store's port, and api/ modules below the facade.
 */
import { MemauthError } from '../core/errors.js';
import { decisionMatchesEntry } from '../core/row-match.js';
import type { Decision } from '../core/types.js';
import type { StorageDriver } from '../store/driver.js';
import type { OpContext } from './context.js';
import { parseInput, schemas } from './validation.js';

/** {@link Memory.getDecision}. @throws `DECISION_NOT_FOUND` */
export async function getDecision(ctx: Pick<OpContext, 'driver'>, input: { tenant: string; decisionId: string }): Promise<Decision> {
  const a = parseInput(schemas.replay, input, 'getDecision');
  const d = await ctx.driver.getDecision(a.tenant, a.decisionId);
  if (!d || (await verifiedDecisions(ctx.driver, a.tenant, [d])).length === 0)
    throw new MemauthError('DECISION_NOT_FOUND', `no decision ${JSON.stringify(a.decisionId)} in tenant ${JSON.stringify(a.tenant)}`, { id: a.decisionId });
  return d;
}

/** {@link Memory.listDecisions}: recent verified decisions, newest first. */
export async function listDecisions(ctx: Pick<OpContext, 'driver'>, input: { tenant: string; limit?: number }): Promise<Decision[]> {
  const a = parseInput(schemas.listDecisions, input, 'listDecisions');
  return verifiedDecisions(ctx.driver, a.tenant, await ctx.driver.listDecisions(a.tenant, a.limit ?? 100));
}

/** The decisions whose row matches the `decide` audit entry that recorded it. */
async function verifiedDecisions(driver: StorageDriver, tenant: string, ds: readonly Decision[]): Promise<Decision[]> {
  const out: Decision[] = [];
  for (const d of ds) {
    if (!Number.isSafeInteger(d.auditSeq)) continue;
    const [e] = await driver.auditRange(tenant, d.auditSeq, d.auditSeq);
    if (e !== undefined && decisionMatchesEntry(d, e)) out.push(d);
  }
  return out;
}
