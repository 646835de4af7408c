/**
 * A read cache over a {@link StorageDriver}, used by the library facade for its transactions.
 *
 * What is cached: the reads the gate and the write path make over and over — records (their
 * rows, which are immutable but for erasure), principals, corroborations, unexpired
 * confirmations per action type, confirmation use counts, session reads, the audit chain head.
 * Only reads made inside a transaction use it, and only while the driver's
 * {@link ChangeTracking.changeToken} is what it was at the end of this cache's own last
 * transaction: any write by another connection, by this connection outside this cache (the raw
 * handle, another facade), or any rolled back write empties it. Writes made through it update it
 * when their transaction's body has completed; reads see their own transaction's writes. It never
 * decides anything: what the gate trusts is still verified against the audit log by the facade.
 *
 * Cached objects are deep-frozen (they are shared between calls).
 */
import type { AuditEntry, AuditOp, Checkpoint } from '../core/audit.js';
import type { Confirmation, Corroboration, Decision, DerivationEdge, MemoryRecord, Principal } from '../core/types.js';
import type { ListRecordsOptions, SearchHit, StorageDriver, StorageTx, TokenRow } from './driver.js';
import { walkLineage } from './rows.js';

/** A driver that can tell whether anything changed behind a cache's back (see {@link CachingDriver}). */
export interface ChangeTracking {
  /**
   * Called inside a transaction. Equal tokens at two points mean the data this connection sees
   * has not changed in between except through this connection's writes, and that none of those
   * writes was rolled back. It must change when another connection commits, when this
   * connection writes (by any path), and when a write is rolled back.
   */
  changeToken(): string;
}

/**
 * Facts a caller derives from immutable columns of a record (and of the records it names),
 * kept by (tenant, record id) for as long as the cache's contents are valid: emptied together
 * with it. Offered by the transaction view of a {@link CachingDriver} (see {@link derivedMemo}).
 */
export interface DerivedMemo {
  getDerived(tenant: string, id: string): unknown;
  setDerived(tenant: string, id: string, value: unknown): void;
}

/** The transaction's {@link DerivedMemo}, when it comes from a {@link CachingDriver}. */
export function derivedMemo(tx: StorageTx): DerivedMemo | null {
  return tx instanceof CachedTx ? tx : null;
}

/**
 * The corroboration list the cache holds for a record in this transaction: the same (frozen)
 * object for as long as the record's corroborations are known unchanged — a corroboration
 * added through the cache puts a new list, anything else empties the cache — or undefined when
 * the cache holds none (or `tx` is not a cache's). For memos of what a record's corroborations
 * decide: keyed by this object, they never outlive the list they were computed from.
 */
export function cachedCorroborationList(tx: StorageTx, tenant: string, recordId: string): object | undefined {
  return tx instanceof CachedTx ? tx.corroborationList(tenant, recordId) : undefined;
}

/** Options for {@link CachingDriver}. */
export interface CacheOptions {
  /** most records kept (the oldest cached are dropped first). Default 10,000. */
  readonly maxRecords?: number;
}

const INVALID: unique symbol = Symbol('invalid');
type Slot<T> = T | typeof INVALID;

const key = (tenant: string, id: string): string => `${tenant}\u0000${id}`;

/** Freeze `v` and everything reachable from it; returns `v`. */
export function deepFreeze<T>(v: T): T {
  if (v !== null && typeof v === 'object' && !Object.isFrozen(v)) {
    Object.freeze(v);
    for (const x of Object.values(v as object)) deepFreeze(x);
  }
  return v;
}

/** The order every driver's `getRecords` returns: by id. */
export function byId(a: MemoryRecord, b: MemoryRecord): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

const byAtThenId = (a: Corroboration, b: Corroboration): number => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
const byCreatedThenId = (a: Confirmation, b: Confirmation): number =>
  a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/**
 * A map from (tenant, id) bounded to `max` entries in all, dropping the oldest inserted (no
 * reordering on reads: a hit costs two Map look-ups).
 */
class Bounded<V> {
  private readonly tenants = new Map<string, Map<string, V>>();
  private readonly order: Array<[string, string]> = [];
  private head = 0;
  private count = 0;
  constructor(private readonly max: number) {}
  /** The tenant's map, to look up many ids at once (read only). */
  of(tenant: string): ReadonlyMap<string, V> | undefined {
    return this.tenants.get(tenant);
  }
  get(tenant: string, id: string): V | undefined {
    return this.tenants.get(tenant)?.get(id);
  }
  set(tenant: string, id: string, v: V): void {
    let m = this.tenants.get(tenant);
    if (!m) {
      m = new Map();
      this.tenants.set(tenant, m);
    }
    if (!m.has(id)) {
      this.order.push([tenant, id]);
      this.count += 1;
    }
    m.set(id, v);
    while (this.count > this.max) this.evictOldest();
  }
  private evictOldest(): void {
    const e = this.order[this.head];
    this.head += 1;
    if (this.head > 4096 && this.head * 2 > this.order.length) {
      this.order.splice(0, this.head);
      this.head = 0;
    }
    if (e && this.tenants.get(e[0])?.delete(e[1])) this.count -= 1;
  }
  delete(tenant: string, id: string): void {
    // its slot in `order` stays; evicting it later finds nothing to delete
    if (this.tenants.get(tenant)?.delete(id)) this.count -= 1;
  }
  clear(): void {
    this.tenants.clear();
    this.order.length = 0;
    this.head = 0;
    this.count = 0;
  }
  get size(): number {
    return this.count;
  }
}

type Head = { seq: number; hash: string } | null;

/** An overlay entry: a new value for (tenant, id), or INVALID (read it from the store). */
interface Entry<V> {
  readonly tenant: string;
  readonly id: string;
  readonly v: Slot<V>;
}

/** What is known to be in the store as of the cache's token. */
class CacheState {
  readonly principals = new Map<string, ReadonlyMap<string, Principal>>();
  readonly records: Bounded<MemoryRecord>;
  readonly corroborations: Bounded<readonly Corroboration[]>;
  /** per tenant, action type and arguments hash: every confirmation unexpired at `since`. */
  readonly confirmations: Bounded<{ readonly since: string; readonly list: readonly Confirmation[] }>;
  readonly uses: Bounded<number>;
  readonly sessions: Bounded<ReadonlySet<string>>;
  readonly heads = new Map<string, Head>();
  /** (tenant, policy version) pairs whose policy entry is in the chain. */
  readonly policies = new Set<string>();
  /** see {@link DerivedMemo} */
  readonly derived: Bounded<unknown>;

  constructor(maxRecords: number) {
    this.records = new Bounded(maxRecords);
    this.corroborations = new Bounded(maxRecords);
    this.uses = new Bounded(10_000);
    this.sessions = new Bounded(10_000);
    this.confirmations = new Bounded(10_000);
    this.derived = new Bounded(Math.max(100_000, maxRecords));
  }

  clear(): void {
    this.principals.clear();
    this.records.clear();
    this.corroborations.clear();
    this.confirmations.clear();
    this.uses.clear();
    this.sessions.clear();
    this.heads.clear();
    this.policies.clear();
    this.derived.clear();
  }
}

/** One transaction's own writes, applied to the state when its body completes. */
class Overlay {
  /** a write happened: reads that miss the cache no longer populate it. */
  dirty = false;
  /** a method this cache does not know was called: empty the cache afterwards. */
  unknown = false;
  readonly principals = new Map<string, Principal[]>();
  readonly records = new Map<string, Entry<MemoryRecord>>();
  readonly corroborations = new Map<string, Entry<readonly Corroboration[]>>();
  /** confirmations this transaction added, per (tenant, action type + args hash) */
  readonly confirmations = new Map<string, { readonly tenant: string; readonly id: string; readonly adds: Confirmation[] }>();
  readonly uses = new Map<string, Entry<number>>();
  readonly sessions = new Map<string, Entry<ReadonlySet<string>>>();
  readonly heads = new Map<string, Head>();
  readonly policies = new Set<string>();

  apply(s: CacheState): void {
    for (const [t, adds] of this.principals) {
      const base = s.principals.get(t);
      if (base) {
        const m = new Map(base);
        for (const p of adds) m.set(p.id, p);
        s.principals.set(t, m);
      }
    }
    const put = <V>(b: Bounded<V>, m: Map<string, Entry<V>>): void => {
      for (const e of m.values()) {
        if (e.v === INVALID) b.delete(e.tenant, e.id);
        else b.set(e.tenant, e.id, e.v);
      }
    };
    put(s.records, this.records);
    put(s.corroborations, this.corroborations);
    put(s.uses, this.uses);
    put(s.sessions, this.sessions);
    for (const e of this.confirmations.values()) {
      const base = s.confirmations.get(e.tenant, e.id);
      if (base) s.confirmations.set(e.tenant, e.id, { since: base.since, list: [...base.list, ...e.adds] });
    }
    for (const [t, h] of this.heads) s.heads.set(t, h);
    for (const p of this.policies) s.policies.add(p);
  }
}

/**
 * The transaction view handed to the facade: cached reads, write-through writes. Port methods
 * it does not define are forwarded (see {@link viewClassFor}); the interface merge below lets
 * TypeScript see it as a full {@link StorageTx}.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- methods it lacks are forwarded at runtime
interface CachedTx extends StorageTx {}
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
class CachedTx {
  constructor(
    readonly tx: StorageTx,
    private readonly st: CacheState,
    readonly ov: Overlay,
  ) {}

  private wrote(): void {
    this.ov.dirty = true;
  }

  /** {@link DerivedMemo}: only values derived from immutable columns belong here. */
  getDerived(tenant: string, id: string): unknown {
    return this.st.derived.get(tenant, id);
  }

  setDerived(tenant: string, id: string, value: unknown): void {
    // not before this transaction's writes are known good: it may be rolled back
    if (!this.ov.dirty) this.st.derived.set(tenant, id, value);
  }

  /** see {@link cachedCorroborationList} */
  corroborationList(tenant: string, recordId: string): object | undefined {
    const o = CachedTx.peek(this.ov.corroborations, tenant, recordId);
    if (o !== undefined) return o === INVALID ? undefined : o;
    return this.st.corroborations.get(tenant, recordId);
  }

  /** This transaction's own entry for (tenant, id), if it wrote one. */
  private static peek<V>(m: ReadonlyMap<string, Entry<V>>, tenant: string, id: string): Slot<V> | undefined {
    return m.size === 0 ? undefined : m.get(key(tenant, id))?.v;
  }

  private static put<V>(m: Map<string, Entry<V>>, tenant: string, id: string, v: Slot<V>): void {
    m.set(key(tenant, id), { tenant, id, v });
  }

  private static peekAdds(m: ReadonlyMap<string, { readonly adds: Confirmation[] }>, tenant: string, id: string): readonly Confirmation[] {
    return m.size === 0 ? [] : (m.get(key(tenant, id))?.adds ?? []);
  }

  // ---- cached reads

  private async principalMap(tenant: string): Promise<ReadonlyMap<string, Principal>> {
    const base = this.st.principals.get(tenant);
    if (base) {
      const adds = this.ov.principals.get(tenant);
      if (!adds || adds.length === 0) return base;
      const m = new Map(base);
      for (const p of adds) m.set(p.id, p);
      return m;
    }
    const m = new Map((await this.tx.listPrincipals(tenant)).map((p) => [p.id, deepFreeze(p)] as const));
    if (!this.ov.dirty) this.st.principals.set(tenant, m);
    return m;
  }

  async getPrincipal(tenant: string, id: string): Promise<Principal | null> {
    return (await this.principalMap(tenant)).get(id) ?? null;
  }

  async listPrincipals(tenant: string): Promise<Principal[]> {
    return [...(await this.principalMap(tenant)).values()].sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async getRecords(tenant: string, ids: readonly string[]): Promise<MemoryRecord[]> {
    const out = new Map<string, MemoryRecord>();
    const miss = new Set<string>();
    const base = this.st.records.of(tenant);
    for (const id of ids) {
      if (out.has(id) || miss.has(id)) continue;
      const o = CachedTx.peek(this.ov.records, tenant, id);
      if (o !== undefined) {
        if (o === INVALID) miss.add(id);
        else out.set(id, o);
        continue;
      }
      const b = base?.get(id);
      if (b !== undefined) out.set(id, b);
      else miss.add(id);
    }
    if (miss.size > 0) {
      for (const r of await this.tx.getRecords(tenant, [...miss])) {
        deepFreeze(r);
        out.set(r.id, r);
        if (!this.ov.dirty && CachedTx.peek(this.ov.records, tenant, r.id) === undefined) this.st.records.set(tenant, r.id, r);
      }
    }
    return [...out.values()].sort(byId);
  }

  async lineage(tenant: string, ids: readonly string[]): Promise<Map<string, DerivationEdge[]>> {
    return walkLineage((batch) => this.getRecords(tenant, batch), ids);
  }

  async corroborationsFor(tenant: string, recordIds: readonly string[]): Promise<Corroboration[]> {
    const lists: Array<readonly Corroboration[]> = [];
    const miss = new Set<string>();
    const seen = new Set<string>();
    for (const id of recordIds) {
      if (seen.has(id)) continue;
      seen.add(id);
      const o = CachedTx.peek(this.ov.corroborations, tenant, id);
      if (o !== undefined) {
        if (o === INVALID) miss.add(id);
        else lists.push(o);
        continue;
      }
      const b = this.st.corroborations.get(tenant, id);
      if (b !== undefined) lists.push(b);
      else miss.add(id);
    }
    if (miss.size > 0) {
      const groups = new Map<string, Corroboration[]>();
      for (const id of miss) groups.set(id, []);
      for (const c of await this.tx.corroborationsFor(tenant, [...miss])) groups.get(c.recordId)?.push(deepFreeze(c));
      for (const [id, list] of groups) {
        list.sort(byAtThenId);
        deepFreeze(list);
        lists.push(list);
        if (!this.ov.dirty && CachedTx.peek(this.ov.corroborations, tenant, id) === undefined) this.st.corroborations.set(tenant, id, list);
      }
    }
    if (lists.length === 1) return [...(lists[0] as readonly Corroboration[])];
    return lists.flat().sort(byAtThenId);
  }

  async listConfirmations(tenant: string, actionType: string, argsHash: string, now: string): Promise<Confirmation[]> {
    const sub = key(actionType, argsHash);
    const base = this.st.confirmations.get(tenant, sub);
    if (base && now >= base.since) {
      // unexpired at `now` is a subset of unexpired at `since`; plus what was added since (merged on commit)
      const adds = CachedTx.peekAdds(this.ov.confirmations, tenant, sub);
      if (base.list.length === 0 && adds.length === 0) return [];
      return [...base.list, ...adds].filter((c) => c.expiresAt > now).sort(byCreatedThenId);
    }
    const rows = (await this.tx.listConfirmations(tenant, actionType, argsHash, now)).map((c) => deepFreeze(c));
    if (!this.ov.dirty) this.st.confirmations.set(tenant, sub, { since: now, list: rows });
    return rows;
  }

  async confirmationUses(tenant: string, ids: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const miss: string[] = [];
    for (const id of ids) {
      if (out.has(id)) continue;
      const o = CachedTx.peek(this.ov.uses, tenant, id);
      const v = o !== undefined ? o : this.st.uses.get(tenant, id);
      if (v === undefined || v === INVALID) miss.push(id);
      else out.set(id, v);
    }
    if (miss.length > 0) {
      const got = await this.tx.confirmationUses(tenant, miss);
      for (const id of miss) {
        const n = got.get(id) ?? 0;
        out.set(id, n);
        if (!this.ov.dirty && CachedTx.peek(this.ov.uses, tenant, id) === undefined) this.st.uses.set(tenant, id, n);
      }
    }
    return out;
  }

  /** Session reads; their order carries no meaning (records are always returned by id). */
  async sessionReads(tenant: string, sessionId: string): Promise<string[]> {
    const o = CachedTx.peek(this.ov.sessions, tenant, sessionId);
    const v = o !== undefined ? o : this.st.sessions.get(tenant, sessionId);
    if (v !== undefined && v !== INVALID) return [...v];
    const ids = await this.tx.sessionReads(tenant, sessionId);
    if (!this.ov.dirty && o === undefined) this.st.sessions.set(tenant, sessionId, deepFreeze(new Set(ids)));
    return ids;
  }

  async auditHead(tenant: string): Promise<Head> {
    const o = this.ov.heads.get(tenant);
    if (o !== undefined) return o;
    if (this.st.heads.has(tenant)) return this.st.heads.get(tenant) ?? null;
    const h = await this.tx.auditHead(tenant);
    if (!this.ov.dirty) this.st.heads.set(tenant, h);
    return h;
  }

  // ---- uncached reads

  getPolicyText(version: string): Promise<string | null> {
    return this.tx.getPolicyText(version);
  }
  listRecords(tenant: string, opts: ListRecordsOptions): Promise<MemoryRecord[]> {
    return this.tx.listRecords(tenant, opts);
  }
  search(tenant: string, scope: string, query: string, limit: number, now: string): Promise<SearchHit[]> {
    return this.tx.search(tenant, scope, query, limit, now);
  }
  getConfirmation(tenant: string, id: string): Promise<Confirmation | null> {
    return this.tx.getConfirmation(tenant, id);
  }
  sessionExists(tenant: string, sessionId: string): Promise<boolean> {
    return this.tx.sessionExists(tenant, sessionId);
  }
  sessionOwner(tenant: string, sessionId: string): Promise<{ owner: string | null } | null> {
    return this.tx.sessionOwner(tenant, sessionId);
  }
  getDecision(tenant: string, id: string): Promise<Decision | null> {
    return this.tx.getDecision(tenant, id);
  }
  listDecisions(tenant: string, limit: number): Promise<Decision[]> {
    return this.tx.listDecisions(tenant, limit);
  }
  auditRange(tenant: string, fromSeq: number, toSeq: number): Promise<AuditEntry[]> {
    return this.tx.auditRange(tenant, fromSeq, toSeq);
  }
  /** uncached: the identity entries are verified per row object by the callers (src/api/principals.ts). */
  auditEntriesNaming(tenant: string, ops: readonly AuditOp[], name: { readonly field: 'principalId' | 'tokenId'; readonly value: string } | null): Promise<AuditEntry[]> {
    return this.tx.auditEntriesNaming(tenant, ops, name);
  }
  findToken(by: { readonly id: string } | { readonly hash: string }): Promise<TokenRow | null> {
    return this.tx.findToken(by);
  }
  listTokens(tenant: string | null): Promise<TokenRow[]> {
    return this.tx.listTokens(tenant);
  }
  async auditHasPolicy(tenant: string, policyVersion: string): Promise<boolean> {
    const k = key(tenant, policyVersion);
    if (this.ov.policies.has(k) || this.st.policies.has(k)) return true;
    const has = await this.tx.auditHasPolicy(tenant, policyVersion);
    if (has && !this.ov.dirty) this.st.policies.add(k);
    return has;
  }
  latestCheckpoint(tenant: string): Promise<Checkpoint | null> {
    return this.tx.latestCheckpoint(tenant);
  }
  tenants(): Promise<string[]> {
    return this.tx.tenants();
  }
  tenantContentKey(tenant: string): Promise<string | null> {
    return this.tx.tenantContentKey(tenant);
  }

  // ---- writes: through to the driver, then into this transaction's overlay

  async putPolicyText(version: string, text: string, at: string): Promise<void> {
    this.wrote();
    await this.tx.putPolicyText(version, text, at);
  }

  async insertPrincipal(p: Principal): Promise<void> {
    this.wrote();
    await this.tx.insertPrincipal(p);
    const list = this.ov.principals.get(p.tenant) ?? [];
    list.push(deepFreeze({ tenant: p.tenant, id: p.id, kind: p.kind, maxAuthority: p.maxAuthority, domain: p.domain, createdAt: p.createdAt }));
    this.ov.principals.set(p.tenant, list);
  }

  async insertRecord(r: MemoryRecord): Promise<void> {
    this.wrote();
    await this.tx.insertRecord(r);
    // the row just written is exactly `r`; it is shared from now on, so it must not change
    CachedTx.put(this.ov.records, r.tenant, r.id, deepFreeze(r));
  }

  async eraseRecord(tenant: string, id: string, at: string): Promise<void> {
    this.wrote();
    await this.tx.eraseRecord(tenant, id, at);
    const o = CachedTx.peek(this.ov.records, tenant, id);
    const cur = o !== undefined ? o : this.st.records.get(tenant, id);
    CachedTx.put(this.ov.records, tenant, id, cur === undefined || cur === INVALID ? INVALID : deepFreeze({ ...cur, content: null, status: 'deleted' }));
  }

  async insertCorroboration(c: Corroboration, auditSeq: number): Promise<void> {
    this.wrote();
    await this.tx.insertCorroboration(c, auditSeq);
    const o = CachedTx.peek(this.ov.corroborations, c.tenant, c.recordId);
    const cur = o !== undefined ? o : this.st.corroborations.get(c.tenant, c.recordId);
    if (cur === undefined || cur === INVALID) {
      CachedTx.put(this.ov.corroborations, c.tenant, c.recordId, INVALID);
      return;
    }
    const row: Corroboration = { id: c.id, tenant: c.tenant, recordId: c.recordId, principalId: c.principalId, authority: c.authority, domain: c.domain, evidenceRef: c.evidenceRef, at: c.at, auditSeq };
    CachedTx.put(this.ov.corroborations, c.tenant, c.recordId, deepFreeze([...cur, row].sort(byAtThenId)));
  }

  async insertConfirmation(c: Confirmation, auditSeq: number): Promise<void> {
    this.wrote();
    await this.tx.insertConfirmation(c, auditSeq);
    const sub = key(c.actionType, c.argsHash);
    const k = key(c.tenant, sub);
    const entry = this.ov.confirmations.get(k) ?? { tenant: c.tenant, id: sub, adds: [] };
    this.ov.confirmations.set(k, entry);
    // what the driver reads back: args and memory ids go through JSON
    entry.adds.push(
      deepFreeze({
        id: c.id,
        tenant: c.tenant,
        principalId: c.principalId,
        actionType: c.actionType,
        resource: c.resource,
        argsHash: c.argsHash,
        args: c.args === null ? null : (JSON.parse(JSON.stringify(c.args)) as Record<string, unknown>),
        memoryIds: c.memoryIds === null ? null : (JSON.parse(JSON.stringify(c.memoryIds)) as string[]),
        expiresAt: c.expiresAt,
        maxUses: c.maxUses,
        createdAt: c.createdAt,
        ...(c.usableBy === undefined || c.usableBy === null ? {} : { usableBy: JSON.parse(JSON.stringify(c.usableBy)) as string[] }),
        auditSeq,
      }),
    );
  }

  async insertConfirmationUse(tenant: string, confirmationId: string, decisionId: string, at: string): Promise<void> {
    this.wrote();
    await this.tx.insertConfirmationUse(tenant, confirmationId, decisionId, at);
    const o = CachedTx.peek(this.ov.uses, tenant, confirmationId);
    const cur = o !== undefined ? o : this.st.uses.get(tenant, confirmationId);
    CachedTx.put(this.ov.uses, tenant, confirmationId, cur === undefined || cur === INVALID ? INVALID : cur + 1);
  }

  async ensureSession(tenant: string, sessionId: string, at: string, owner: string | null = null): Promise<string | null> {
    this.wrote();
    return this.tx.ensureSession(tenant, sessionId, at, owner);
  }

  async addSessionReads(tenant: string, sessionId: string, recordIds: readonly string[], at: string): Promise<void> {
    this.wrote();
    await this.tx.addSessionReads(tenant, sessionId, recordIds, at);
    const o = CachedTx.peek(this.ov.sessions, tenant, sessionId);
    const cur = o !== undefined ? o : this.st.sessions.get(tenant, sessionId);
    CachedTx.put(this.ov.sessions, tenant, sessionId, cur === undefined || cur === INVALID ? INVALID : deepFreeze(new Set([...cur, ...recordIds])));
  }

  async insertDecision(d: Decision): Promise<void> {
    this.wrote();
    await this.tx.insertDecision(d);
  }

  async appendAudit(e: AuditEntry): Promise<void> {
    this.wrote();
    await this.tx.appendAudit(e);
    this.ov.heads.set(e.tenant, { seq: e.seq, hash: e.hash });
    if (e.op === 'policy') this.ov.policies.add(key(e.tenant, e.policyVersion));
  }

  async insertCheckpoint(c: Checkpoint): Promise<void> {
    this.wrote();
    await this.tx.insertCheckpoint(c);
  }

  async ensureTenantContentKey(tenant: string, keyHex: string, at: string): Promise<string> {
    this.wrote();
    return this.tx.ensureTenantContentKey(tenant, keyHex, at);
  }
}

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
  getDecision(tenant: string, id: string): Promise<Decision | null> {
    return this.inner.getDecision(tenant, id);
  }
  listDecisions(tenant: string, limit: number): Promise<Decision[]> {
    return this.inner.listDecisions(tenant, limit);
  }
  auditHead(tenant: string): Promise<{ seq: number; hash: string } | null> {
    return this.inner.auditHead(tenant);
  }
  auditRange(tenant: string, fromSeq: number, toSeq: number): Promise<AuditEntry[]> {
    return this.inner.auditRange(tenant, fromSeq, toSeq);
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
