/**
 * The administrative operations of the facade: registering and listing principals (docs/design.md
 * § Principals and origin), deleting records and sweeping expired ones (§ Deletion, retention,
 * privacy), and signed checkpoints of the audit chains (§ Audit log). Each takes the facade's
 * {@link OpContext} (checkpoints: an {@link AdminContext}); `Memory` in memory.ts holds their
 * documentation. Imports from src/core, src/store's port, and api/ modules below the facade.
 */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import type { Checkpoint } from '../core/audit.js';
import { atLeast } from '../core/authority.js';
import { normalizeDomain } from '../core/domain.js';
import { MemauthError } from '../core/errors.js';
import { KIND_CEILING, type MemoryRecord, type Principal } from '../core/types.js';
import type { StorageTx } from '../store/driver.js';
import { type In, type OpContext, appendAudit, nowOf } from './context.js';
import { principalIn, refuse, refusing } from './refusals.js';
import { parseInput, schemas } from './validation.js';

/** What checkpoints need besides the {@link OpContext}. */
export interface AdminContext extends OpContext {
  /** Ed25519 private key (PEM) for signed checkpoints; null: `checkpoint()` refuses. */
  readonly checkpointKey: string | null;
  readonly onCheckpoint: ((c: Checkpoint) => void) | undefined;
  readonly externalCheckpoints: (() => Checkpoint[]) | undefined;
}

/** What registering a principal did: the principal, and whether this call created it. */
export interface Registration {
  readonly principal: Principal;
  /** false: it already existed with the same kind, domain and ceiling; nothing was written. */
  readonly created: boolean;
}

/**
 * {@link Memory.registerPrincipal} / {@link Memory.ensurePrincipal}: a new principal, its ceiling at
 * most its kind's; an existing one with the same kind, (canonical) domain and ceiling is returned
 * unchanged (`created: false`, nothing audited). Re-registration never changes a principal:
 * anything that differs is `PRINCIPAL_EXISTS` naming the differences.
 */
export async function registerPrincipal(ctx: OpContext, input: In<'registerPrincipal'>): Promise<Registration> {
  const a = parseInput(schemas.registerPrincipal, input, 'registerPrincipal');
  const ceiling = KIND_CEILING[a.kind];
  const maxAuthority = a.maxAuthority ?? ceiling;
  if (!atLeast(ceiling, maxAuthority)) {
    return refuse(
      ctx,
      a.tenant,
      'principal',
      { principalId: a.id, kind: a.kind, claimedAuthority: maxAuthority },
      new MemauthError('AUTHORITY_EXCEEDS_PRINCIPAL', `a principal of kind ${a.kind} can hold at most ${ceiling}, not ${maxAuthority}`, { kind: a.kind, ceiling, requested: maxAuthority }),
    );
  }
  // independence domains are stored in canonical form: "ERP-Vendor " is "erp-vendor", "Ledger.ACME." is "ledger.acme"
  const domain = normalizeDomain(a.domain);
  return ctx.store.transaction(a.tenant, async (tx) => {
    if (await tx.getPrincipal(a.tenant, a.id)) {
      // only a row that matches its registration entry counts as the existing principal
      const existing = await ctx.provenance.principals.get(tx, a.tenant, a.id);
      return { principal: sameOrRefuse(existing, a.tenant, a.id, { kind: a.kind, domain, maxAuthority }), created: false };
    }
    const p: Principal = { tenant: a.tenant, id: a.id, kind: a.kind, maxAuthority, domain, createdAt: nowOf(ctx) };
    await tx.insertPrincipal(p);
    await appendAudit(ctx, tx, a.tenant, 'principal', { principalId: p.id, kind: p.kind, maxAuthority: p.maxAuthority, domain: p.domain, at: p.createdAt });
    return { principal: p, created: true };
  });
}

/**
 * The existing principal when it has exactly the requested kind, domain and ceiling.
 * @throws `PRINCIPAL_EXISTS` naming what differs (`details.differs`: `{field: {existing, requested}}`),
 *   or that its row does not match its registration (`existing` null).
 */
function sameOrRefuse(existing: Principal | null, tenant: string, id: string, want: Pick<Principal, 'kind' | 'domain' | 'maxAuthority'>): Principal {
  const name = `principal ${JSON.stringify(id)} already exists in tenant ${JSON.stringify(tenant)}`;
  if (existing === null) throw new MemauthError('PRINCIPAL_EXISTS', `${name}, but its row does not match its registration in the audit log; run memauth audit verify`, { tenant, principal: id });
  const differs: Record<string, { existing: string; requested: string }> = {};
  for (const f of ['kind', 'domain', 'maxAuthority'] as const) if (existing[f] !== want[f]) differs[f] = { existing: existing[f], requested: want[f] };
  const fields = Object.entries(differs);
  if (fields.length === 0) return existing;
  const what = fields.map(([f, d]) => `${f} ${JSON.stringify(d.existing)}, not ${JSON.stringify(d.requested)}`).join('; ');
  throw new MemauthError('PRINCIPAL_EXISTS', `${name} with ${what}; a registered principal is never changed (register another id)`, { tenant, principal: id, differs });
}

/** {@link Memory.listPrincipals}: the tenant's principals whose rows match their registrations. */
export async function listPrincipals(ctx: OpContext, input: In<'tenant'>): Promise<Principal[]> {
  const a = parseInput(schemas.tenant, input, 'listPrincipals');
  return ctx.provenance.principals.list(ctx.driver, a.tenant);
}

/** {@link Memory.delete}: erase a record's content (a no-op on a deleted record). */
export async function deleteRecord(ctx: OpContext, input: In<'delete'>): Promise<MemoryRecord> {
  const a = parseInput(schemas.delete, input, 'delete');
  // the principal is read inside the transaction: outside one, a group commit's uncommitted rows are visible
  return refusing(ctx, a.tenant, 'delete', () =>
    ctx.store.transaction(a.tenant, async (tx) => {
      if (a.principal !== undefined) await principalIn(ctx, tx, a.tenant, a.principal);
      const [rec] = await tx.getRecords(a.tenant, [a.id]);
      if (!rec) throw new MemauthError('RECORD_NOT_FOUND', `no record ${JSON.stringify(a.id)} in tenant ${JSON.stringify(a.tenant)}`, { id: a.id });
      if (rec.status === 'deleted') return rec;
      const now = nowOf(ctx);
      await appendAudit(ctx, tx, a.tenant, 'delete', { recordId: rec.id, contentHash: rec.contentHash, principalId: a.principal ?? null, reason: a.reason ?? 'delete', at: now });
      await tx.eraseRecord(a.tenant, rec.id, now);
      const [after] = await tx.getRecords(a.tenant, [rec.id]);
      return after as MemoryRecord;
    }),
  );
}

/** {@link Memory.sweepExpired}: delete (with `del`, the facade's delete) every expired record. @returns the ids. */
export async function sweepExpired(ctx: OpContext, input: In<'tenant'>, del: (input: In<'delete'>) => Promise<MemoryRecord>): Promise<string[]> {
  const a = parseInput(schemas.tenant, input, 'sweepExpired');
  const now = nowOf(ctx);
  const out: string[] = [];
  for (let offset = 0; ; offset += 1000) {
    const page = await ctx.driver.listRecords(a.tenant, { limit: 1000, offset });
    for (const r of page) if (r.expiresAt !== null && r.expiresAt <= now) out.push(r.id);
    if (page.length < 1000) break;
  }
  for (const id of out) await del({ tenant: a.tenant, id, reason: 'retention' });
  return out;
}

/** The checkpoint key's public half (SPKI DER, base64), or null without a key. */
export function publicKeyOf(checkpointKey: string | null): string | null {
  if (checkpointKey === null) return null;
  try {
    return createPublicKey(createPrivateKey(checkpointKey)).export({ type: 'spki', format: 'der' }).toString('base64');
  } catch {
    return null;
  }
}

/** {@link Memory.checkpoint}: sign and store a checkpoint of each (or one) tenant's moved chain head. */
export async function checkpoint(ctx: AdminContext, input: { tenant?: string; force?: boolean }): Promise<Checkpoint[]> {
  const { signCheckpoint } = await import('../core/audit.js');
  if (ctx.checkpointKey === null) throw new MemauthError('INVALID_ARGUMENT', 'checkpoint: no Ed25519 checkpoint key is configured', {});
  const key = ctx.checkpointKey;
  const tenants = input.tenant !== undefined ? [parseInput(schemas.tenant, { tenant: input.tenant }, 'checkpoint').tenant] : await ctx.driver.tenants();
  const out: Checkpoint[] = [];
  for (const t of tenants) {
    const c = await ctx.store.transaction(t, async (tx) => {
      const head = await tx.auditHead(t);
      if (!head) return null;
      const last = await tx.latestCheckpoint(t);
      if (input.force !== true && last !== null && last.seq === head.seq && last.hash === head.hash) return null;
      await assertNoContradiction(ctx, tx, t, head, last);
      const cp = signCheckpoint(t, head, nowOf(ctx), key);
      await tx.insertCheckpoint(cp);
      return cp;
    });
    if (c) {
      out.push(c);
      ctx.onCheckpoint?.(c);
    }
  }
  return out;
}

/**
 * Never sign a head that contradicts an earlier checkpoint of ours (a truncated or rewritten
 * chain): signing it would make the next verification pass.
 * @throws `DATABASE_CORRUPT` when the chain at the newest of our checkpoints, or at the last one stored, differs from it.
 */
async function assertNoContradiction(ctx: AdminContext, tx: StorageTx, t: string, head: { seq: number; hash: string }, last: Checkpoint | null): Promise<void> {
  const pub = publicKeyOf(ctx.checkpointKey);
  const ours = [...(ctx.externalCheckpoints?.() ?? []).filter((c) => c.tenant === t), ...(last ? [last] : [])].filter((c) => pub === null || c.publicKey === pub);
  const newest = ours.sort((x, y) => y.seq - x.seq)[0];
  for (const cp of [newest, last].filter((c): c is Checkpoint => c !== undefined && c !== null)) {
    const [e] = cp.seq <= head.seq ? await tx.auditRange(t, cp.seq, cp.seq) : [];
    if (!e || e.hash !== cp.hash) {
      throw new MemauthError('DATABASE_CORRUPT', `checkpoint: tenant ${t}'s audit chain contradicts its signed checkpoint at entry ${cp.seq}; run memauth audit verify`, { tenant: t, seq: cp.seq });
    }
  }
}
