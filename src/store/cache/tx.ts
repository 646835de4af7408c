/**
 * The read cache's transaction view ({@link CachedTx}): the port's reads answered from the
 * cache's state and this transaction's overlay where it can, from the driver otherwise; writes
 * go through to the driver, then into the overlay.
 *
 * May import: core types, ../driver.js, ../rows.js, ./state.js.
 */
import { erasedRecord } from '../../core/claims.js';
import type { AuditEntry, AuditOp, Checkpoint } from '../../core/audit.js';
import type { SessionLogEntry } from '../../core/session.js';
import type { Confirmation, Corroboration, Decision, DerivationEdge, MemoryRecord, Principal } from '../../core/types.js';
import type { ListRecordsOptions, SearchHit, StorageTx, TokenRow } from '../driver.js';
import { byAtThenId, walkLineage, withSessionLineage } from '../rows.js';
import { type CacheState, type Entry, type Head, INVALID, type Overlay, type Slot, byCreatedThenId, byId, deepFreeze, key } from './state.js';

/**
 * The transaction view handed to the facade: cached reads, write-through writes. Port methods it
 * does not define are forwarded ({@link viewClassFor}); the merge below types it as a {@link StorageTx}.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- methods it lacks are forwarded at runtime
export interface CachedTx extends StorageTx {}
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class CachedTx {
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
    const getRecords = (batch: readonly string[]): Promise<MemoryRecord[]> => this.getRecords(tenant, batch);
    return withSessionLineage(
      (batch) => walkLineage(getRecords, batch),
      getRecords,
      (lengths) => this.tx.sessionLogPrefixes(tenant, lengths),
      ids,
    );
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

  /** Session reads, in the order first read (a set keeps insertion order). */
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

  getPolicyText = (version: string): Promise<string | null> => this.tx.getPolicyText(version);
  listRecords(tenant: string, opts: ListRecordsOptions): Promise<MemoryRecord[]> {
    return this.tx.listRecords(tenant, opts);
  }
  versionIds = (tenant: string, chains: readonly string[]): Promise<string[]> => this.tx.versionIds(tenant, chains);
  allowedInSession = (tenant: string, sessionId: string, actionType: string): Promise<Decision | null> => this.tx.allowedInSession(tenant, sessionId, actionType);
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
  sessionLogHead = (tenant: string, sessionId: string): Promise<SessionLogEntry | null> => this.tx.sessionLogHead(tenant, sessionId);
  sessionLogAfter = (tenant: string, after: { sessionId: string; ord: number } | null, limit: number): Promise<Array<SessionLogEntry & { sessionId: string }>> =>
    this.tx.sessionLogAfter(tenant, after, limit);
  sessionLogPrefixes = (tenant: string, lengths: ReadonlyMap<string, number>): Promise<Map<string, string[]>> => this.tx.sessionLogPrefixes(tenant, lengths);
  sessionLogHas = (tenant: string, sessionId: string, ids: readonly string[]): Promise<Set<string>> => this.tx.sessionLogHas(tenant, sessionId, ids);
  getDecision(tenant: string, id: string): Promise<Decision | null> {
    return this.tx.getDecision(tenant, id);
  }
  listDecisions(tenant: string, limit: number, after?: { readonly at: string; readonly id: string }): Promise<Decision[]> {
    return this.tx.listDecisions(tenant, limit, after);
  }
  auditRange(tenant: string, fromSeq: number, toSeq: number): Promise<AuditEntry[]> {
    return this.tx.auditRange(tenant, fromSeq, toSeq);
  }
  /** uncached, like {@link auditRange}; absent when the wrapped driver lacks it. */
  get auditEntriesAt(): ((tenant: string, seqs: readonly number[]) => Promise<AuditEntry[]>) | undefined {
    const inner = this.tx;
    return inner.auditEntriesAt === undefined ? undefined : (tenant, seqs) => (inner.auditEntriesAt as NonNullable<typeof inner.auditEntriesAt>)(tenant, seqs);
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
    CachedTx.put(this.ov.records, tenant, id, cur === undefined || cur === INVALID ? INVALID : deepFreeze(erasedRecord(cur)));
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
    const row: Corroboration = {
      id: c.id,
      tenant: c.tenant,
      recordId: c.recordId,
      principalId: c.principalId,
      authority: c.authority,
      domain: c.domain,
      evidenceRef: c.evidenceRef,
      at: c.at,
      auditSeq,
    };
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

  async appendSessionLog(tenant: string, sessionId: string, entries: readonly SessionLogEntry[], at: string): Promise<void> {
    this.wrote();
    await this.tx.appendSessionLog(tenant, sessionId, entries, at);
    const o = CachedTx.peek(this.ov.sessions, tenant, sessionId);
    const cur = o !== undefined ? o : this.st.sessions.get(tenant, sessionId);
    const add = entries.map((e) => e.recordId);
    CachedTx.put(this.ov.sessions, tenant, sessionId, cur === undefined || cur === INVALID ? INVALID : deepFreeze(new Set([...cur, ...add])));
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

  async ensureTenantContentKey(tenant: string, keyHex: string | (() => string), at: string): Promise<string> {
    const known = await this.tenantContentKey(tenant);
    if (known === null) this.wrote();
    return known ?? this.tx.ensureTenantContentKey(tenant, keyHex, at);
  }
}
