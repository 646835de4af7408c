/**
 * The vouching operations of the facade: corroboration (docs/design.md § Corroboration) — another
 * principal vouches for a record with evidence — and human confirmation (docs/design.md § Human
 * confirmation) — a user principal allows one exact action. Each takes the facade's
 * {@link OpContext}; `Memory` in memory.ts holds their documentation. Imports from src/core,
 * src/store's port, and api/ modules below the facade.
 */
import { type Authority, atLeast, minAuthority } from '../core/authority.js';
import { assertArgumentsWithinLimits } from '../core/argument-limits.js';
import { argsHashOf } from '../core/confirmation.js';
import { MemauthError } from '../core/errors.js';
import { corroborationOf, memoryRefId } from '../core/facts.js';
import { sourceAuthority } from '../core/policy.js';
import type { Confirmation, Corroboration, MemoryRecord, Principal } from '../core/types.js';
import type { StorageTx } from '../store/driver.js';
import { type In, type OpContext, type Parsed, appendAudit, newId, nowOf } from './context.js';
import { Refusal, principalIn, principalOrThrow, refuse, refusing } from './refusals.js';
import { usableByChecked } from './requesters.js';
import { parseInput, schemas } from './validation.js';
import type { CorroborateResult } from './views.js';

/** {@link Memory.corroborate}: record a corroboration and say whether it counts. */
export async function corroborate(ctx: OpContext, input: In<'corroborate'>): Promise<CorroborateResult> {
  const a = parseInput(schemas.corroborate, input, 'corroborate');
  const now = nowOf(ctx);
  // the principal is read inside the transaction: outside one, a group commit's uncommitted rows are visible
  return refusing(ctx, a.tenant, 'corroborate', () =>
    ctx.store.transaction(a.tenant, async (tx) => {
      const p = await principalIn(ctx, tx, a.tenant, a.principal);
      assertCanCorroborate(ctx, p);
      const [rec] = await tx.getRecords(a.tenant, [a.recordId]);
      if (!rec) throw new MemauthError('RECORD_NOT_FOUND', `no record ${JSON.stringify(a.recordId)} in tenant ${JSON.stringify(a.tenant)}`, { id: a.recordId });
      if (rec.status === 'deleted') throw new MemauthError('RECORD_DELETED', `record ${a.recordId} is deleted and cannot be corroborated`, { id: a.recordId });
      const evidenceAuthority = await evidenceAuthorityOf(ctx, tx, a.tenant, a.evidence, p);
      const c: Corroboration = {
        id: newId('cor'),
        tenant: a.tenant,
        recordId: rec.id,
        principalId: p.id,
        authority: minAuthority(p.maxAuthority, evidenceAuthority),
        domain: p.domain,
        evidenceRef: a.evidence,
        at: now,
      };
      const entry = await appendAudit(ctx, tx, a.tenant, 'corroborate', {
        corroborationId: c.id,
        recordId: c.recordId,
        principalId: c.principalId,
        authority: c.authority,
        domain: c.domain,
        evidenceRef: c.evidenceRef,
        at: c.at,
      });
      await tx.insertCorroboration(c, entry.seq);
      return corroborationResult(ctx, tx, a.tenant, rec, c, now);
    }),
  );
}

/**
 * A principal whose ceiling is below the corroboration floor can never make a corroboration count
 * (docs/design.md § Corroboration), so its attempt is refused, not stored: an unbudgeted stream of
 * void corroborations would only grow the store and muddle the gate's `missing_corroboration`.
 * @throws Refusal of `CORROBORATOR_BELOW_FLOOR` (403; logged in the chain once the transaction is over).
 */
function assertCanCorroborate(ctx: OpContext, p: Principal): void {
  const floor = ctx.policy.document.corroboration.minAuthority;
  if (atLeast(p.maxAuthority, floor)) return;
  const message = `corroborate: principal ${JSON.stringify(p.id)} has ceiling ${p.maxAuthority}, below the corroboration floor ${floor}; its corroboration could never count`;
  throw new Refusal({ principalId: p.id, ceiling: p.maxAuthority, floor }, new MemauthError('CORROBORATOR_BELOW_FLOOR', message, { principal: p.id, ceiling: p.maxAuthority, floor }));
}

/**
 * The authority of corroboration evidence: a `memory:<id>` record's lowest authority (none when its
 * row does not match its audit entry), else the policy's judgement of the source for `p`.
 * @throws `RECORD_NOT_FOUND` for a `memory:` evidence record not in the tenant.
 */
async function evidenceAuthorityOf(ctx: OpContext, tx: StorageTx, tenant: string, evidence: string, p: Principal): Promise<Authority> {
  const evId = memoryRefId(evidence);
  if (evId === null) return sourceAuthority(ctx.policy, evidence, p);
  const [ev] = await tx.getRecords(tenant, [evId]);
  if (!ev) throw new MemauthError('RECORD_NOT_FOUND', `evidence record ${JSON.stringify(evId)} is not in tenant ${JSON.stringify(tenant)}`, { id: evId });
  // evidence whose row does not match its audit entry (forged outside the API) vouches for nothing
  return (await ctx.provenance.verifiedRecords(tx, tenant, [ev])).has(ev.id) ? ev.taint.lowestAuthority : 'external_untrusted';
}

/** What the new corroboration `c` of `rec` makes of it: counted or why not, and the record's action authority now. */
async function corroborationResult(ctx: OpContext, tx: StorageTx, tenant: string, rec: MemoryRecord, c: Corroboration, now: string): Promise<CorroborateResult> {
  const { k, minAuthority: floor } = ctx.policy.document.corroboration;
  const bundle = await ctx.provenance.gateFacts(tx, tenant, [rec], floor);
  const r = corroborationOf(rec.id, bundle, k, floor, now);
  const rejection = r.rejected.find((x) => x.id === c.id)?.reason ?? null;
  // a forged row has no authority, corroborated or not (as in get() and at the gate)
  const actionAuthority = bundle.records.get(rec.id)?.verified === true ? r.actionAuthority : 'external_untrusted';
  return { corroboration: c, counted: rejection === null && r.counted.some((x) => x.id === c.id), rejection, actionAuthority, independentDomains: r.independentDomains };
}

const requiresUser = (p: Principal): MemauthError =>
  new MemauthError('CONFIRMATION_REQUIRES_USER', `only a user principal can confirm an action; ${p.id} is of kind ${p.kind}`, { principal: p.id, kind: p.kind });

/** {@link Memory.confirm}: a user's confirmation of one exact action. */
export async function confirm(ctx: OpContext, input: In<'confirm'>): Promise<Confirmation> {
  const a = parseInput(schemas.confirm, input, 'confirm');
  assertArgumentsWithinLimits(a.action, 'confirm');
  const p = await principalOrThrow(ctx, ctx.driver, a.tenant, a.principal, 'confirm');
  if (p.kind !== 'user') return refuse(ctx, a.tenant, 'confirm', { principalId: p.id, kind: p.kind, actionType: a.action.type }, requiresUser(p));
  const c = newConfirmation(ctx, a, p);
  let confirmation = c;
  return refusing(ctx, a.tenant, 'confirm', () =>
    ctx.store.transaction(a.tenant, async (tx) => {
      // judged again inside the transaction: the read above, outside one, sees a group commit's
      // uncommitted rows (a user row that may yet be rolled back)
      const q = await principalIn(ctx, tx, a.tenant, a.principal);
      if (q.kind !== 'user') throw new Refusal({ principalId: q.id, kind: q.kind, actionType: a.action.type }, requiresUser(q));
      if (a.usableBy !== undefined) confirmation = { ...c, usableBy: await usableByChecked(tx, a.tenant, a.usableBy) };
      if (c.memoryIds !== null) {
        const found = new Set((await tx.getRecords(a.tenant, c.memoryIds)).map((r) => r.id));
        const missing = c.memoryIds.filter((m) => !found.has(m));
        if (missing.length > 0)
          throw new MemauthError('RECORD_NOT_FOUND', `confirm: memoryIds names no record ${missing.map((m) => JSON.stringify(m)).join(', ')} in tenant ${JSON.stringify(a.tenant)}`, { ids: missing });
      }
      const entry = await appendAudit(ctx, tx, a.tenant, 'confirm', { confirmation, at: c.createdAt });
      await tx.insertConfirmation(confirmation, entry.seq);
      return confirmation;
    }),
  );
}

/**
 * The confirmation `confirm` records (without `usableBy`): its args hash and expiry checked.
 * @throws `INVALID_ARGUMENT` without args/argsHash, with an argsHash that does not match the args,
 *   or with a TTL above the policy's maximum.
 */
function newConfirmation(ctx: OpContext, a: Parsed<'confirm'>, p: Principal): Confirmation {
  if (a.action.args === undefined && a.argsHash === undefined) throw new MemauthError('INVALID_ARGUMENT', 'confirm: give the exact action.args or their argsHash', { field: 'action.args' });
  const argsHash = a.action.args !== undefined ? argsHashOf(a.action.args) : (a.argsHash as string);
  if (a.argsHash !== undefined && a.argsHash !== argsHash) throw new MemauthError('INVALID_ARGUMENT', 'confirm: argsHash does not match action.args', { field: 'argsHash' });
  const { defaultTtlSeconds, maxTtlSeconds } = ctx.policy.document.confirmation;
  const ttl = a.expiresInSeconds ?? defaultTtlSeconds;
  if (ttl > maxTtlSeconds) throw new MemauthError('INVALID_ARGUMENT', `confirm: expiresInSeconds ${ttl} exceeds the policy maximum ${maxTtlSeconds}`, { field: 'expiresInSeconds' });
  const now = ctx.clock();
  return {
    id: newId('cnf'),
    tenant: a.tenant,
    principalId: p.id,
    actionType: a.action.type,
    resource: a.action.resource ?? null,
    argsHash,
    args: a.action.args ?? null,
    memoryIds: a.memoryIds ?? null,
    expiresAt: new Date(now.getTime() + ttl * 1000).toISOString(),
    maxUses: a.maxUses ?? 1,
    createdAt: now.toISOString(),
  };
}
