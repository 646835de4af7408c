/**
 * Verified-fact loading for the facade (docs/design.md § Audit log: a row that does not match the
 * audit entry that recorded it carries no authority): which record, corroboration and
 * confirmation rows match their entries, the gate facts of records, the closed provenance bundles
 * `get`, `corroborate` and `authorize` judge, and lineage summaries — with the memos that make
 * them cheap. Imports from src/core, src/store's port and read cache, and api/principals.ts.
 */
import type { AuditEntry } from '../core/audit.js';
import { type Authority, atLeast } from '../core/authority.js';
import { isKeyedHash } from '../core/content-hash.js';
import { type FactsBundle, type LineageSets, type RecordFacts, dependencyFacts, memoryRefId } from '../core/facts.js';
import type { DependencyFacts } from '../core/gate.js';
import { type LineageMemo, summarizeLineage } from '../core/lineage-summary.js';
import { corroborationMatchesEntry, recordMatchesEntry } from '../core/row-match.js';
import type { Corroboration, MemoryRecord } from '../core/types.js';
import { type MatchText, prepareText } from '../core/values.js';
import { cachedCorroborationList, derivedMemo } from '../store/cache.js';
import type { StorageDriver, StorageTx } from '../store/driver.js';
import { auditEntriesAt } from './audit-entries.js';
import { PrincipalVerifier } from './principals.js';
import { SessionEchoes } from './session-echoes.js';
import { SessionLogs } from './session-logs.js';

type Source = StorageTx | StorageDriver;

/** A record's gate facts but its status, with the corroboration list they were computed from (see {@link Provenance.dependencyVerdicts}). */
interface GateVerdict {
  readonly corroborations: object;
  readonly lowestAuthority: Authority;
  readonly actionAuthority: Authority;
  readonly corroborationAttempted: boolean;
  readonly verified: boolean;
}

/** A closed provenance bundle with a walk of each record's lineage (see {@link Provenance.factsBundle}). */
export interface BundleWithLineage {
  readonly bundle: FactsBundle;
  readonly lineageOf: (id: string) => Set<string>;
}

/**
 * Verified facts of one facade's store, memoised per row object. Memos are keyed by the record
 * (or corroboration, confirmation) object the store returned. The cache hands out the same frozen
 * object for as long as the row is known unchanged, and a new one after anything changed behind
 * its back; a driver without a cache returns new objects every time. So a memo never outlives the
 * row it describes:
 * - `verified`: the row matches the audit entry that recorded it (checked once per object);
 * - `texts`: the record's content prepared for value matching;
 * - `lineages`: writers of the record and of all its ancestors (immutable: derivation edges and
 *   origins never change), so a decision does not walk a deep chain;
 * - `facts`: the record's gate facts (needs `verified`);
 * - `gateVerdicts`: see {@link dependencyVerdicts}.
 */
export class Provenance {
  private readonly verified = new WeakMap<object, boolean>();
  private readonly texts = new WeakMap<MemoryRecord, MatchText>();
  private readonly lineages = new WeakMap<MemoryRecord, LineageMemo>();
  private readonly facts = new WeakMap<MemoryRecord, RecordFacts>();
  private readonly gateVerdicts = new WeakMap<MemoryRecord, GateVerdict>();
  /** principal rows checked against their registration entries (memoised per row object). */
  readonly principals = new PrincipalVerifier();
  readonly sessions = new SessionLogs();
  readonly echoes = new SessionEchoes(); // per session: its read texts indexed for the echo check of a write

  /** Note that `record` was built from the very values its audit entry was just built from: it matches the entry. */
  markVerified(record: MemoryRecord): void {
    this.verified.set(record, true);
  }

  /** Keep only rows that match the audit entry that recorded them (rows forged outside the API never count). */
  async verifiedRows<T extends { auditSeq?: number }>(src: Source, tenant: string, rows: T[], matches: (row: T, e: AuditEntry) => boolean): Promise<T[]> {
    // every row not yet checked, against its own entry: the entries read in one batch
    const unchecked = rows.filter((r) => r.auditSeq !== undefined && !this.verified.has(r));
    const entries = await auditEntriesAt(src, tenant, unchecked, (r) => r.auditSeq as number);
    const out: T[] = [];
    for (const r of rows) {
      if (r.auditSeq === undefined) continue;
      let ok = this.verified.get(r);
      if (ok === undefined) {
        const e = entries.get(r.auditSeq);
        ok = e !== undefined && matches(r, e);
        this.verified.set(r, ok);
      }
      if (ok) out.push(r);
    }
    return out;
  }

  /** Ids of records whose row matches their write/derive audit entry (rows forged outside the API do not). */
  async verifiedRecords(src: Source, tenant: string, recs: readonly MemoryRecord[]): Promise<Set<string>> {
    const out = new Set<string>();
    let key: string | null | undefined;
    // every record not yet checked, against its own entry: the entries read in one batch
    recs = recs.map((r) => this.sessions.original(r));
    const unchecked = recs.filter((r) => !this.verified.has(r));
    const entries = await auditEntriesAt(src, tenant, unchecked, (r) => r.audit.seq);
    await this.sessions.load(src, tenant, unchecked);
    for (const r of recs) {
      let ok = this.verified.get(r);
      if (ok === undefined) {
        const e = entries.get(r.audit.seq);
        if (key === undefined && r.content !== null && isKeyedHash(r.contentHash)) key = await src.tenantContentKey(tenant);
        ok = e !== undefined && recordMatchesEntry(r, e, key) && this.sessions.matches(r);
        this.verified.set(r, ok);
      }
      if (ok) out.add(r.id);
    }
    return out;
  }

  /**
   * Inputs of a derivation as the taint computation may trust them: a row that does not match the
   * audit entry that recorded it (forged or altered outside the API) carries no authority — it
   * enters as `external_untrusted`, as it does at the gate — so deriving from it, echoing it or
   * reading it in a session can never launder a forged taint into a genuine record.
   */
  async untrustForged(tx: StorageTx, tenant: string, inputs: Map<string, MemoryRecord>): Promise<Map<string, MemoryRecord>> {
    if (inputs.size === 0) return inputs;
    const verified = await this.verifiedRecords(tx, tenant, [...inputs.values()]);
    if (verified.size === inputs.size) return inputs;
    const out = new Map<string, MemoryRecord>();
    for (const [k, r] of inputs) out.set(k, verified.has(r.id) ? r : { ...r, taint: { ...r.taint, lowestAuthority: 'external_untrusted' } });
    return out;
  }

  /** Gate facts of records: provenance only, `verified` against their audit entries (memoised per object). */
  async recordFacts(src: Source, tenant: string, recs: readonly MemoryRecord[]): Promise<RecordFacts[]> {
    const fresh = recs.filter((r) => !this.facts.has(r));
    const verified = await this.verifiedRecords(src, tenant, fresh);
    await this.sessions.load(src, tenant, fresh);
    return recs.map((r) => {
      let f = this.facts.get(r);
      if (!f) {
        f = {
          id: r.id,
          lowestAuthority: r.taint.lowestAuthority,
          originPrincipal: r.origin.principalId,
          status: r.status === 'deleted' ? 'deleted' : 'active',
          expiresAt: r.expiresAt,
          derivedFrom: this.sessions.expanded(r).derivedFrom,
          verified: verified.has(r.id),
        };
        this.facts.set(r, f);
      }
      return f;
    });
  }

  /** A record's content prepared for value matching (memoised per object). */
  matchText(r: MemoryRecord): MatchText {
    let t = this.texts.get(r);
    if (!t) {
      t = prepareText(r.content ?? '');
      this.texts.set(r, t);
    }
    return t;
  }

  /** The corroborations of records `ids` whose rows match their audit entries, by record id. */
  private async verifiedCorroborations(src: Source, tenant: string, ids: readonly string[]): Promise<Map<string, Corroboration[]>> {
    const corroborations = new Map<string, Corroboration[]>();
    for (const c of await this.verifiedRows(src, tenant, await src.corroborationsFor(tenant, ids), corroborationMatchesEntry)) {
      const list = corroborations.get(c.recordId) ?? [];
      list.push(c);
      corroborations.set(c.recordId, list);
    }
    return corroborations;
  }

  /** The closed provenance bundle for `ids` ({@link FactsBundle}), every ancestor in full, with the `memory:` evidence of corroborations at least `floor` (those below are rejected first). */
  async factsBundle(src: Source, tenant: string, ids: readonly string[], floor: Authority): Promise<BundleWithLineage> {
    const corroborations = await this.verifiedCorroborations(src, tenant, ids);
    const evidenceIds = [...corroborations.values()].flatMap((l) => l.filter((c) => atLeast(c.authority, floor)).map((c) => memoryRefId(c.evidenceRef))).filter((x): x is string => x !== null);
    // the records' and their evidence's lineages in one walk (the union of the two walks)
    const lineage = await src.lineage(tenant, [...ids, ...evidenceIds]);
    const recs = await src.getRecords(tenant, [...lineage.keys()]);
    const records = new Map<string, RecordFacts>();
    for (const f of await this.recordFacts(src, tenant, recs)) records.set(f.id, f);
    const domains = new Map((await this.principals.list(src, tenant)).map((p) => [p.id, p.domain]));
    const lineageOf = (id: string): Set<string> => {
      const seen = new Set<string>();
      const stack = [...(lineage.get(id) ?? []).map((e) => e.from)];
      while (stack.length) {
        const x = stack.pop() as string;
        if (!seen.has(x)) {
          seen.add(x);
          stack.push(...(lineage.get(x) ?? []).map((e) => e.from));
        }
      }
      return seen;
    };
    return { bundle: { records, domains, corroborations }, lineageOf };
  }

  /**
   * What the gate needs to decide on `recs` (a closed {@link FactsBundle}, see core/facts.ts):
   * their facts, their corroborations that match audit entries, the evidence records those cite
   * with their lineage, and — instead of every ancestor — each record's lineage summary
   * (writers and their domains, see {@link lineageSets}).
   */
  async gateFacts(tx: StorageTx, tenant: string, recs: readonly MemoryRecord[], floor: Authority): Promise<FactsBundle> {
    const corroborations = await this.verifiedCorroborations(
      tx,
      tenant,
      recs.map((r) => r.id),
    );
    const all = new Map<string, MemoryRecord>(recs.map((r) => [r.id, r]));
    // evidence cited as `memory:<id>` is judged against its own lineage and the corroborated
    // record's lineage: for those records the bundle holds both in full (no summary is used)
    const evidenceIds = new Set<string>();
    const fullLineage = new Set<string>();
    for (const [recordId, list] of corroborations) {
      for (const c of list) {
        const ev = memoryRefId(c.evidenceRef);
        if (ev === null || !atLeast(c.authority, floor)) continue;
        evidenceIds.add(ev);
        fullLineage.add(recordId);
      }
    }
    if (evidenceIds.size > 0) {
      const lineage = await tx.lineage(tenant, [...evidenceIds, ...fullLineage]);
      for (const r of await tx.getRecords(
        tenant,
        [...lineage.keys()].filter((id) => !all.has(id)),
      ))
        all.set(r.id, r);
    }
    const records = new Map<string, RecordFacts>();
    for (const f of await this.recordFacts(tx, tenant, [...all.values()])) records.set(f.id, f);
    const lineage = await this.lineageSets(
      tx,
      tenant,
      recs.filter((r) => !fullLineage.has(r.id)),
    );
    const domains = new Map<string, string>();
    if (all.size > lineage.size) {
      for (const r of all.values()) {
        if (domains.has(r.origin.principalId)) continue;
        const p = await this.principals.get(tx, tenant, r.origin.principalId);
        if (p) domains.set(p.id, p.domain);
      }
    }
    return { records, domains, corroborations, lineage };
  }

  /**
   * Gate facts of the dependency candidates `recs` (without `why`). What corroboration makes of
   * a record — its action authority — is memoised per record object together with the
   * corroboration list the cache holds for it ({@link cachedCorroborationList}): a hit needs
   * the very row object (the cache hands out a new one after an erasure or any change behind its
   * back) and the very list (a new corroboration makes a new list). Only verdicts that depend on
   * nothing else are kept: none of the record's corroborations cites `memory:` evidence (whose
   * status and expiry can change) and every writer in its lineage is registered. Status and
   * expiry are computed now, on every call.
   * @returns a map, or a promise of one when a verdict was not memoised (all memoised: no promise hop).
   */
  dependencyVerdicts(tx: StorageTx, tenant: string, recs: readonly MemoryRecord[], k: number, floor: Authority, now: string): Map<string, DependencyFacts> | Promise<Map<string, DependencyFacts>> {
    const out = new Map<string, DependencyFacts>();
    let missed: MemoryRecord[] | null = null;
    for (const r of recs) {
      const m = this.gateVerdicts.get(r);
      if (m !== undefined && m.corroborations === cachedCorroborationList(tx, tenant, r.id)) {
        const status = r.status === 'deleted' ? 'deleted' : r.expiresAt !== null && r.expiresAt <= now ? 'expired' : 'active';
        out.set(r.id, {
          memoryId: r.id,
          why: [],
          lowestAuthority: m.lowestAuthority,
          actionAuthority: m.actionAuthority,
          status,
          corroborationAttempted: m.corroborationAttempted,
          verified: m.verified,
        });
      } else (missed ??= []).push(r);
    }
    // all memoised: no promise hop
    if (missed === null) return out;
    return this.missedVerdicts(tx, tenant, missed, out, k, floor, now);
  }

  /** The verdicts {@link dependencyVerdicts} did not have memoised, added to `out` (and memoised when they may be). */
  private async missedVerdicts(
    tx: StorageTx,
    tenant: string,
    missed: readonly MemoryRecord[],
    out: Map<string, DependencyFacts>,
    k: number,
    floor: Authority,
    now: string,
  ): Promise<Map<string, DependencyFacts>> {
    const bundle = await this.gateFacts(tx, tenant, missed, floor);
    const memo = derivedMemo(tx);
    for (const r of missed) {
      const f = dependencyFacts(r.id, [], bundle, k, floor, now);
      out.set(r.id, f);
      const corroborations = cachedCorroborationList(tx, tenant, r.id);
      if (corroborations === undefined) continue;
      if ((bundle.corroborations.get(r.id) ?? []).some((c) => memoryRefId(c.evidenceRef) !== null)) continue;
      const lineage = this.lineages.get(this.sessions.expanded(r)) ?? (memo?.getDerived(tenant, r.id) as LineageMemo | undefined);
      if (lineage?.domains === undefined) continue;
      this.gateVerdicts.set(r, { corroborations, lowestAuthority: f.lowestAuthority, actionAuthority: f.actionAuthority, corroborationAttempted: f.corroborationAttempted, verified: f.verified });
    }
    return out;
  }

  /**
   * Lineage summaries of `recs`: the writers of each record and of all its ancestors, with their
   * domains — what corroboration independence is judged against. Derivation edges and origins
   * never change, so a summary is memoised — by (tenant, id) in the read cache (emptied with it),
   * else per record object — and built from the parents' summaries: a record at the end of a
   * long chain costs one walk of the chain, once (ancestors read in batches, one query per
   * generation), then nothing.
   */
  private async lineageSets(tx: StorageTx, tenant: string, given: readonly MemoryRecord[]): Promise<Map<string, LineageSets>> {
    const memo = derivedMemo(tx);
    const recs = await this.sessions.loadExpanded(tx, tenant, given);
    const known = (r: MemoryRecord): LineageMemo | undefined => this.lineages.get(r) ?? (memo?.getDerived(tenant, r.id) as LineageMemo | undefined);
    const remember = (r: MemoryRecord, m: LineageMemo): void => {
      this.lineages.set(r, m);
      memo?.setDerived(tenant, r.id, m);
    };
    const oneOff = await this.summarizePending(
      tx,
      tenant,
      recs.filter((r) => known(r) === undefined),
      known,
      remember,
    );
    const out = new Map<string, LineageSets>();
    for (const r of recs) {
      const m = (known(r) ?? oneOff.get(r)) as LineageMemo;
      if (m.domains === undefined) {
        const domains = new Set<string>();
        let complete = true;
        for (const pid of m.principals) {
          const p = await this.principals.get(tx, tenant, pid);
          if (p) domains.add(p.domain);
          else complete = false;
        }
        if (!complete) {
          // a writer whose principal row is missing or does not match its registration: its
          // domain is unknown, so independence cannot be judged (fail closed); not memoised
          out.set(r.id, { principals: m.principals, domains, unverified: true });
          continue;
        }
        m.domains = domains;
      }
      out.set(r.id, { principals: m.principals, domains: m.domains, unverified: m.unverified });
    }
    return out;
  }

  /**
   * Summarise the records of `pending` (none known yet): read their unsummarised ancestors one
   * generation per query, then summarise each (core/lineage-summary.ts), remembering what may be
   * memoised. @returns the summaries that may not be memoised (a cycle among forged rows).
   */
  private async summarizePending(
    tx: StorageTx,
    tenant: string,
    pending: readonly MemoryRecord[],
    known: (r: MemoryRecord) => LineageMemo | undefined,
    remember: (r: MemoryRecord, m: LineageMemo) => void,
  ): Promise<Map<MemoryRecord, LineageMemo>> {
    const oneOff = new Map<MemoryRecord, LineageMemo>();
    if (pending.length === 0) return oneOff;
    const byId = new Map<string, MemoryRecord>();
    const tried = new Set<string>();
    let frontier: string[] = [];
    const expand = (r: MemoryRecord): void => {
      byId.set(r.id, r);
      tried.add(r.id);
      if (known(r) !== undefined) return;
      for (const e of r.derivedFrom) {
        if (!tried.has(e.from)) {
          tried.add(e.from);
          frontier.push(e.from);
        }
      }
    };
    pending.forEach(expand);
    while (frontier.length > 0) {
      const next = frontier;
      frontier = [];
      for (const r of await this.sessions.loadExpanded(tx, tenant, await tx.getRecords(tenant, next))) expand(r);
    }
    // a writer is known only from a row that matches its audit entry
    const unsummarised = [...byId.values()].filter((r) => known(r) === undefined);
    const verified = await this.verifiedRecords(tx, tenant, unsummarised);
    for (const r of pending) {
      const made: Array<[MemoryRecord, LineageMemo]> = [];
      const m = summarizeLineage(r, byId, known, made, verified);
      for (const [x, xm] of made) remember(x, xm);
      if (m !== null) oneOff.set(r, m);
    }
    return oneOff;
  }
}
