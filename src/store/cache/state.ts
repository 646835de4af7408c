/**
 * The read cache's core: what is known to be in the store ({@link CacheState}, bounded maps per
 * tenant) and one transaction's own writes ({@link Overlay}), applied to the state — or the
 * entries they invalidate dropped — when the transaction's body completes.
 *
 * May import: core types.
 */
import type { Confirmation, Corroboration, MemoryRecord, Principal } from '../../core/types.js';

export const INVALID: unique symbol = Symbol('invalid');
export type Slot<T> = T | typeof INVALID;

export const key = (tenant: string, id: string): string => `${tenant}\u0000${id}`;

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

export const byCreatedThenId = (a: Confirmation, b: Confirmation): number => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * A map from (tenant, id) bounded to `max` entries in all, dropping the oldest inserted (no
 * reordering on reads: a hit costs two Map look-ups).
 */
export class Bounded<V> {
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

export type Head = { seq: number; hash: string } | null;

/** An overlay entry: a new value for (tenant, id), or INVALID (read it from the store). */
export interface Entry<V> {
  readonly tenant: string;
  readonly id: string;
  readonly v: Slot<V>;
}

/** What is known to be in the store as of the cache's token. */
export class CacheState {
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
  /** see `DerivedMemo` (./types.ts) */
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
export class Overlay {
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
