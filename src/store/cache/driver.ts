/**
 * The caching driver ({@link CachingDriver}): wraps a {@link StorageDriver} that can report
 * changes, hands each transaction a {@link CachedTx} view, and empties the cache whenever the
 * driver's change token moved behind its back.
 *
 * May import: core types, ../driver.js, ./state.js, ./tx.js, ./types.js.
 */
import type { SessionLogEntry } from '../../core/session.js';
import type { AuditEntry, AuditOp, Checkpoint } from '../../core/audit.js';
import type { Confirmation, Corroboration, Decision, DerivationEdge, MemoryRecord, Principal } from '../../core/types.js';
import type { ListRecordsOptions, QueuedDecisionCount, QueuedDecisionsQuery, SearchHit, StorageDriver, StorageTx, SurfaceCounts, SurfaceQuery, TokenRow } from '../driver.js';
import { CacheState, Overlay } from './state.js';
import { CachedTx } from './tx.js';
import type { CacheOptions, ChangeTracking } from './types.js';

/** Names of the functions an object has along its prototype chain (not Object's). */
function methodNames(o: object): string[] {
  const out = new Set<string>();
  for (let proto = Object.getPrototypeOf(o) as object | null; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto) as object | null) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const d = Object.getOwnPropertyDescriptor(proto, name);
      if (name !== 'constructor' && d !== undefined && typeof d.value === 'function') out.add(name);
    }
  }
  return [...out];
}

const viewClasses = new WeakMap<object, typeof CachedTx>();

/**
 * The view class for transactions of drivers like `tx`: {@link CachedTx} plus a forwarder for
 * every method of the driver it does not define (methods the port may gain later). Such a
 * method might write anything, so calling one empties the cache after the transaction.
 * Built once per driver class.
 */
function viewClassFor(tx: StorageTx): typeof CachedTx {
  const proto = Object.getPrototypeOf(tx) as object;
  let cls = viewClasses.get(proto);
  if (!cls) {
    const View = class extends CachedTx {};
    for (const name of methodNames(tx)) {
      if (name in CachedTx.prototype) continue;
      Object.defineProperty(View.prototype, name, {
        configurable: true,
        writable: true,
        value: function forwarded(this: CachedTx, ...args: unknown[]): unknown {
          this.ov.unknown = true;
          this.ov.dirty = true;
          return ((this.tx as unknown as Record<string, (...a: unknown[]) => unknown>)[name] as (...a: unknown[]) => unknown).apply(this.tx, args);
        },
      });
    }
    cls = View;
    viewClasses.set(proto, cls);
  }
  return cls;
}

/**
 * A {@link StorageDriver} whose transactions read through a cache (see the module comment).
 * Reads outside transactions go straight to the wrapped driver, uncached; so do port methods
 * this class does not define (forwarded at construction; the interface merge below lets
 * TypeScript see it as a full {@link StorageDriver}).
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- methods it lacks are forwarded at runtime
export interface CachingDriver extends StorageDriver {}
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class CachingDriver {
  readonly kind: string;
  private readonly state: CacheState;
  /** the wrapped driver's token when the state was last known to match the store. */
  private token: string | null = null;

  private constructor(
    private readonly inner: StorageDriver & ChangeTracking,
    opts: CacheOptions,
  ) {
    this.kind = inner.kind;
    this.state = new CacheState(Math.max(1, opts.maxRecords ?? 10_000));
    const self = this as unknown as Record<string, unknown>;
    for (const name of methodNames(inner)) {
      if (name in CachingDriver.prototype) continue;
      self[name] = (...args: unknown[]): unknown => (inner as unknown as Record<string, (...a: unknown[]) => unknown>)[name]?.apply(inner, args);
    }
  }

  /** Wrap `driver` when it can report changes (see {@link ChangeTracking}); otherwise return it as is. */
  static wrap(driver: StorageDriver, opts: CacheOptions = {}): StorageDriver {
    const tracking = driver as StorageDriver & Partial<ChangeTracking>;
    return typeof tracking.changeToken === 'function' ? new CachingDriver(tracking as StorageDriver & ChangeTracking, opts) : driver;
  }

  /** Number of records currently cached (for tests and benchmarks). */
  get cachedRecords(): number {
    return this.state.records.size;
  }

  async transaction<T>(tenant: string, fn: (tx: StorageTx) => Promise<T>): Promise<T> {
    return this.inner.transaction(tenant, async (tx) => {
      const before = this.inner.changeToken();
      if (before !== this.token) {
        this.state.clear();
        this.token = before;
      }
      const ov = new Overlay();
      const View = viewClassFor(tx);
      const view: StorageTx = new View(tx, this.state, ov);
      let out: T;
      try {
        out = await fn(view);
      } catch (e) {
        // a body that wrote and failed is rolled back by the driver, which changes the token;
        // one that only read left the state valid
        if (ov.unknown) this.token = null;
        throw e;
      }
      if (ov.unknown) {
        this.state.clear();
        this.token = null;
      } else {
        ov.apply(this.state);
        this.token = this.inner.changeToken();
      }
      return out;
    });
  }

  async close(): Promise<void> {
    this.state.clear();
    await this.inner.close();
  }

  // ---- reads outside transactions: uncached
  getPolicyText(version: string): Promise<string | null> {
    return this.inner.getPolicyText(version);
  }
  getPrincipal(tenant: string, id: string): Promise<Principal | null> {
    return this.inner.getPrincipal(tenant, id);
  }
  listPrincipals(tenant: string): Promise<Principal[]> {
    return this.inner.listPrincipals(tenant);
  }
  getRecords(tenant: string, ids: readonly string[]): Promise<MemoryRecord[]> {
    return this.inner.getRecords(tenant, ids);
  }
  listRecords(tenant: string, opts: ListRecordsOptions): Promise<MemoryRecord[]> {
    return this.inner.listRecords(tenant, opts);
  }
  versionIds(tenant: string, chains: readonly string[]): Promise<string[]> {
    return this.inner.versionIds(tenant, chains);
  }
  search(tenant: string, scope: string, query: string, limit: number, now: string): Promise<SearchHit[]> {
    return this.inner.search(tenant, scope, query, limit, now);
  }
  lineage(tenant: string, ids: readonly string[]): Promise<Map<string, DerivationEdge[]>> {
    return this.inner.lineage(tenant, ids);
  }
  corroborationsFor(tenant: string, recordIds: readonly string[]): Promise<Corroboration[]> {
    return this.inner.corroborationsFor(tenant, recordIds);
  }
  getConfirmation(tenant: string, id: string): Promise<Confirmation | null> {
    return this.inner.getConfirmation(tenant, id);
  }
  listConfirmations(tenant: string, actionType: string, argsHash: string, now: string): Promise<Confirmation[]> {
    return this.inner.listConfirmations(tenant, actionType, argsHash, now);
  }
  confirmationUses(tenant: string, ids: readonly string[]): Promise<Map<string, number>> {
    return this.inner.confirmationUses(tenant, ids);
  }
  sessionExists(tenant: string, sessionId: string): Promise<boolean> {
    return this.inner.sessionExists(tenant, sessionId);
  }
  sessionOwner(tenant: string, sessionId: string): Promise<{ owner: string | null } | null> {
    return this.inner.sessionOwner(tenant, sessionId);
  }
  sessionReads(tenant: string, sessionId: string): Promise<string[]> {
    return this.inner.sessionReads(tenant, sessionId);
  }
  sessionLogHead(tenant: string, sessionId: string): Promise<SessionLogEntry | null> {
    return this.inner.sessionLogHead(tenant, sessionId);
  }
  sessionLogPrefixes(tenant: string, lengths: ReadonlyMap<string, number>): Promise<Map<string, string[]>> {
    return this.inner.sessionLogPrefixes(tenant, lengths);
  }
  sessionLogAfter(tenant: string, after: { sessionId: string; ord: number } | null, limit: number): Promise<Array<SessionLogEntry & { sessionId: string }>> {
    return this.inner.sessionLogAfter(tenant, after, limit);
  }
  sessionLogHas(tenant: string, sessionId: string, ids: readonly string[]): Promise<Set<string>> {
    return this.inner.sessionLogHas(tenant, sessionId, ids);
  }
  getDecision(tenant: string, id: string): Promise<Decision | null> {
    return this.inner.getDecision(tenant, id);
  }
  allowedInSession(tenant: string, sessionId: string, actionType: string): Promise<Decision | null> {
    return this.inner.allowedInSession(tenant, sessionId, actionType);
  }
  listDecisions(tenant: string, limit: number, after?: { readonly at: string; readonly id: string }): Promise<Decision[]> {
    return this.inner.listDecisions(tenant, limit, after);
  }
  listQueuedDecisions(tenant: string, q: QueuedDecisionsQuery): Promise<Decision[]> {
    return this.inner.listQueuedDecisions(tenant, q);
  }
  countQueuedDecisions(tenant: string): Promise<QueuedDecisionCount[]> {
    return this.inner.countQueuedDecisions(tenant);
  }
  surfaceCounts(tenant: string, q: SurfaceQuery): Promise<SurfaceCounts> {
    return this.inner.surfaceCounts(tenant, q);
  }
  auditHead(tenant: string): Promise<{ seq: number; hash: string } | null> {
    return this.inner.auditHead(tenant);
  }
  auditRange(tenant: string, fromSeq: number, toSeq: number): Promise<AuditEntry[]> {
    return this.inner.auditRange(tenant, fromSeq, toSeq);
  }
  /** uncached, like {@link auditRange}; absent when the wrapped driver lacks it. */
  get auditEntriesAt(): ((tenant: string, seqs: readonly number[]) => Promise<AuditEntry[]>) | undefined {
    const inner = this.inner;
    return inner.auditEntriesAt === undefined ? undefined : (tenant, seqs) => (inner.auditEntriesAt as NonNullable<typeof inner.auditEntriesAt>)(tenant, seqs);
  }
  auditEntriesNaming(tenant: string, ops: readonly AuditOp[], name: { readonly field: 'principalId' | 'tokenId'; readonly value: string } | null): Promise<AuditEntry[]> {
    return this.inner.auditEntriesNaming(tenant, ops, name);
  }
  findToken(by: { readonly id: string } | { readonly hash: string }): Promise<TokenRow | null> {
    return this.inner.findToken(by);
  }
  listTokens(tenant: string | null): Promise<TokenRow[]> {
    return this.inner.listTokens(tenant);
  }
  auditHasPolicy(tenant: string, policyVersion: string): Promise<boolean> {
    return this.inner.auditHasPolicy(tenant, policyVersion);
  }
  latestCheckpoint(tenant: string): Promise<Checkpoint | null> {
    return this.inner.latestCheckpoint(tenant);
  }
  tenants(): Promise<string[]> {
    return this.inner.tenants();
  }
  tenantContentKey(tenant: string): Promise<string | null> {
    return this.inner.tenantContentKey(tenant);
  }
}
