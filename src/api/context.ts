/**
 * What every operation module of the facade receives (an {@link OpContext}: the store, the policy,
 * the clock, the timing listener and the {@link Provenance} memos), and the plumbing they share:
 * transactions that report their timing, appending to a tenant's audit chain (docs/design.md
 * § Audit log), new ids. Imports from src/core, src/store's port and cache, and api/provenance.ts.
 */
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { type AuditEntry, type AuditOp, nextEntry } from '../core/audit.js';
import type { Policy } from '../core/policy.js';
import type { StorageDriver, StorageTx } from '../store/driver.js';
import type { Provenance } from './provenance.js';
import type { schemas } from './validation.js';
import type { OpTiming } from './views.js';

/** The input a facade method accepts for schema `K` of api/validation.ts. */
export type In<K extends keyof typeof schemas> = z.input<(typeof schemas)[K]>;

/** The same input once validated (`parseInput`, api/validation.ts). */
export type Parsed<K extends keyof typeof schemas> = z.output<(typeof schemas)[K]>;

/** What an operation needs of the facade it runs for. */
export interface OpContext {
  /** the driver as given: reads made outside a transaction. */
  readonly driver: StorageDriver;
  /** the driver behind its read cache: every transaction goes through it. */
  readonly store: StorageDriver;
  /** the loaded policy every decision and audit entry records. */
  readonly policy: Policy;
  readonly clock: () => Date;
  /** called after each write, derive and authorize with where its time went; usually undefined. */
  readonly onTiming: ((t: OpTiming) => void) | undefined;
  /** verified-fact loading and its memos. */
  readonly provenance: Provenance;
  /** versions one chain may hold (`MemoryOptions.maxVersionsPerChain`); undefined: the default. */
  readonly maxVersionsPerChain?: number;
}

const noop = (): void => undefined;

/** The context's clock as an ISO-8601 string. */
export function nowOf(ctx: Pick<OpContext, 'clock'>): string {
  return ctx.clock().toISOString();
}

/** A new id: `prefix` and 32 hex digits (`mem_…`, `dec_…`, `cor_…`, `cnf_…`, `ses_…`). */
export function newId(prefix: string): string {
  return `${prefix}_${randomUUID().replace(/-/g, '')}`;
}

/** A start time for {@link OpTiming}, or 0n when nobody listens. */
export function startTiming(ctx: Pick<OpContext, 'onTiming'>): bigint {
  return ctx.onTiming ? process.hrtime.bigint() : 0n;
}

/**
 * Run `body` in a transaction of the store; when timings are requested, report where the time of
 * operation `op` went (`mark()` notes the decision being ready, for authorize).
 */
export async function transact<T>(
  ctx: Pick<OpContext, 'store' | 'onTiming'>,
  tenant: string,
  op: OpTiming['op'],
  t0: bigint,
  body: (tx: StorageTx, mark: (phase: 'decided' | 'written') => void) => Promise<T>,
): Promise<T> {
  const report = ctx.onTiming;
  if (!report) return ctx.store.transaction(tenant, (tx) => body(tx, noop));
  const beforeNs = Number(process.hrtime.bigint() - t0);
  let tb0 = 0n;
  let tb1 = 0n;
  const out = await ctx.store.transaction(tenant, async (tx) => {
    tb0 = process.hrtime.bigint();
    try {
      return await body(tx, (phase) => report({ op, phase, beforeNs, bodyNs: Number(process.hrtime.bigint() - tb0) }));
    } finally {
      tb1 = process.hrtime.bigint();
    }
  });
  report({ op, phase: 'done', beforeNs, bodyNs: Number(tb1 - tb0) });
  return out;
}

/**
 * Inside a transaction: append an `op` entry to the tenant's audit chain, preceded by a `policy`
 * entry holding the policy text the first time this policy version appears in the chain.
 * @returns the entry appended.
 */
export async function appendAudit(ctx: Pick<OpContext, 'policy' | 'clock'>, tx: StorageTx, tenant: string, op: AuditOp, payload: Record<string, unknown>): Promise<AuditEntry> {
  const policy = ctx.policy;
  // asked in every transaction (the cache answers): a flag kept here could outlive a rolled back entry
  if (!(await tx.auditHasPolicy(tenant, policy.version))) {
    await tx.putPolicyText(policy.version, policy.text, nowOf(ctx));
    const head = await tx.auditHead(tenant);
    await tx.appendAudit(nextEntry(tenant, head, 'policy', { policyVersion: policy.version, text: policy.text, at: nowOf(ctx) }, policy.version));
  }
  const head = await tx.auditHead(tenant);
  const e = nextEntry(tenant, head, op, payload, policy.version);
  await tx.appendAudit(e);
  return e;
}
