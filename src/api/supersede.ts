/**
 * The `supersede` operation of the facade (docs/design.md § Memory record): a new version of a
 * record, written under the write rules (the writer's origin, the session's context taint; its
 * typed claims checked as a write's and of the version's authority, in its hash and audit entry)
 * and linked to the version it replaces. Whether it hides the versions current before it or competes
 * with them is judged at every read and decision (core/versions.ts), never by the writer.
 * `Memory` in memory.ts holds its documentation. Imports from src/core, src/store's port, and
 * api/ modules below the facade.
 */
import { atLeast } from '../core/authority.js';
import { checkClaims } from '../core/claims.js';
import { MemauthError } from '../core/errors.js';
import { originAuthority } from '../core/policy.js';
import type { DerivationEdge, MemoryRecord, Principal } from '../core/types.js';
import { currentVersions } from '../core/versions.js';
import type { StorageTx } from '../store/driver.js';
import { type In, type OpContext, nowOf, startTiming, transact } from './context.js';
import type { StoreOptions } from './options.js';
import { type NewRecord, contextOf, insertNew, sourceRefOf } from './records.js';
import { principalIn, refusing } from './refusals.js';
import { enterSession } from './sessions.js';
import { parseInput, schemas } from './validation.js';
import { type Chain, chainIdOf, gateJudge, loadChains } from './versions.js';

/** Default of `MemoryOptions.maxVersionsPerChain`: versions one chain may hold, every writer together. */
export const DEFAULT_MAX_VERSIONS_PER_CHAIN = 100;

/**
 * `MemoryOptions.maxVersionsPerChain`, checked.
 * @throws `INVALID_ARGUMENT` unless an integer from 2 to 100 000.
 */
export function checkedMaxVersions(max: number): number {
  if (Number.isInteger(max) && max >= 2 && max <= 100_000) return max;
  throw new MemauthError('INVALID_ARGUMENT', `maxVersionsPerChain must be an integer from 2 to 100000; got ${String(max)}`, { field: 'maxVersionsPerChain' });
}

/**
 * Versions a chain may hold before a version that would not replace every current one is
 * refused (`TOO_MANY_VERSIONS`): a principal below a record cannot grow its chain without bound,
 * and uses at most half of the chain's room, so the writers who outrank it can still update it.
 */
export const competingLimit = (max: number): number => Math.max(1, Math.floor(max / 2));

/** Result of {@link Memory.supersede}. */
export interface SupersedeResult {
  readonly record: MemoryRecord;
  /** the chain's current versions now, highest authority first (the new one among them). */
  readonly current: readonly string[];
  /** more than one current version: the new version competes (docs/design.md § Memory record). */
  readonly conflict: boolean;
}

/**
 * The target of a supersede, checked: it exists in the tenant, is not deleted, and is a current
 * version of its chain.
 * @throws `RECORD_NOT_FOUND`, `RECORD_DELETED`, `RECORD_SUPERSEDED` (details.current: the current versions).
 */
async function targetOf(ctx: OpContext, tx: StorageTx, tenant: string, id: string, now: string): Promise<{ target: MemoryRecord; chain: Chain | undefined }> {
  const [target] = await tx.getRecords(tenant, [id]);
  if (!target) throw new MemauthError('RECORD_NOT_FOUND', `supersede: no record ${JSON.stringify(id)} in tenant ${JSON.stringify(tenant)}`, { id, tenant });
  if (target.status === 'deleted') throw new MemauthError('RECORD_DELETED', `supersede: record ${id} is deleted; write a new record instead`, { id });
  const chain = (await loadChains(tx, tenant, [target], gateJudge(ctx, tx, tenant, now))).get(chainIdOf(target));
  const current = chain?.state.current ?? (target.expiresAt !== null && target.expiresAt <= now ? [] : [target.id]);
  if (!current.includes(target.id)) {
    throw new MemauthError('RECORD_SUPERSEDED', `supersede: record ${id} is not a current version (current: ${current.join(', ') || 'none'}); supersede a current version`, { id, current });
  }
  return { target, chain };
}

/**
 * Room for one more version in `chain` (docs/design.md § Memory record): none once it holds `max`
 * versions (any writer: each read of a version judges its whole chain), and past
 * {@link competingLimit} only for a writer that outranks every current version.
 * @throws `VERSION_CHAIN_FULL` (details `{chain, versions, max}`), `TOO_MANY_VERSIONS` (details `{chain, versions, limit}`).
 */
function checkRoom(chain: Chain | undefined, p: Principal, origin: NewRecord['origin'], max: number): void {
  if (chain === undefined) return; // one record: room for a second version (max is at least 2)
  const held = chain.versions.length;
  if (held >= max) {
    throw new MemauthError('VERSION_CHAIN_FULL', `supersede: chain ${chain.id} holds ${held} versions, the most a chain may (maxVersionsPerChain ${max}); write the update as a new record instead`, {
      chain: chain.id,
      versions: held,
      max,
    });
  }
  if (held < competingLimit(max)) return;
  const outranks = chain.state.current.every((id) => atLeast(origin, chain.judged.get(id)?.actionAuthority ?? 'system_policy'));
  if (!outranks)
    throw new MemauthError('TOO_MANY_VERSIONS', `supersede: chain ${chain.id} holds ${held} versions; ${p.id} (${origin}) does not outrank its current versions`, {
      chain: chain.id,
      versions: held,
      limit: competingLimit(max),
    });
}

/** {@link Memory.supersede}: a new version of a current record, linked to it. */
export async function supersede(ctx: OpContext, input: In<'supersede'>, options?: StoreOptions): Promise<SupersedeResult> {
  const t0 = startTiming(ctx);
  const a = parseInput(schemas.supersede, input, 'supersede');
  const now = nowOf(ctx);
  if (a.expiresAt !== undefined && new Date(a.expiresAt).toISOString() <= now) throw new MemauthError('INVALID_ARGUMENT', 'supersede: expiresAt is not in the future', { field: 'expiresAt' });
  return refusing(ctx, a.tenant, 'write', () =>
    transact(ctx, a.tenant, 'write', t0, async (tx, mark) => {
      const p = await principalIn(ctx, tx, a.tenant, a.principal);
      const { target, chain } = await targetOf(ctx, tx, a.tenant, a.id, now);
      const sourceRef = sourceRefOf(a.source, p.id);
      const origin = originAuthority(ctx.policy, sourceRef, p);
      checkRoom(chain, p, origin, ctx.maxVersionsPerChain ?? DEFAULT_MAX_VERSIONS_PER_CHAIN);
      const session = await enterSession(ctx.provenance, tx, a.tenant, a.session, a.requester ?? null, now);
      // recalled text in the new version derives from where it was read (an exact echo too: a version is always new)
      const { exact, contained } = await ctx.provenance.echoes.find(tx, a.tenant, a.session, session?.head ?? null, a.content);
      const echoes = exact ? [exact, ...contained.filter((r) => r.id !== exact.id)] : contained;
      const edges: DerivationEdge[] = echoes.map((r) => ({ from: r.id, transform: 'import', kind: 'echo' }));
      const expiresAt = a.expiresAt !== undefined ? new Date(a.expiresAt).toISOString() : null;
      const version = { of: chainIdOf(target), supersedes: target.id };
      const claims = checkClaims(a.claims ?? [], 'supersede');
      const base: NewRecord = { tenant: a.tenant, scope: target.scope, content: a.content, claims, principal: p, sourceRef, origin, writtenAt: now, expiresAt, reason: a.reason, session, version };
      const context = p.kind === 'agent' ? contextOf(base, echoes.length, 'rewrite') : null;
      const record = await insertNew(ctx, tx, 'write', base, edges, new Map(echoes.map((r) => [r.id, r])), now, 'rewrite', context, options);
      mark('written');
      const before = chain?.versions.map((r) => ({
        id: r.id,
        seq: r.audit.seq,
        actionAuthority: chain.judged.get(r.id)?.actionAuthority ?? 'external_untrusted',
        status: chain.judged.get(r.id)?.status ?? 'active',
      })) ?? [
        {
          id: target.id,
          seq: target.audit.seq,
          actionAuthority: (await gateJudge(ctx, tx, a.tenant, now)([target])).get(target.id)?.actionAuthority ?? 'external_untrusted',
          status: 'active' as const,
        },
      ];
      const state = currentVersions([...before, { id: record.id, seq: record.audit.seq, actionAuthority: record.taint.lowestAuthority, status: 'active' }]);
      return { record, current: [...state.current], conflict: state.conflict };
    }),
  );
}
