/**
 * Session contexts as the facade's lineage walks see them (docs/design.md § Derivation and
 * taint): a record that refers to its session's read log (`sessionContext`, core/session.ts)
 * derives from every record of the log's prefix — spelled out here as the `session` edges it stands
 * for — and matches its audit entry only while the stored log still hashes to the hash the entry
 * holds (a log altered, reordered or cut outside the API does not) — and the head of a session's
 * log as a write or a read may build on it: re-folded from its entries, once per entry. Imports
 * from src/core and src/store's port.
 */
import { hashCanonical } from '../core/canonical.js';
import { EMPTY_LOG_HASH, type SessionLogEntry, foldTaint, logHash, withSessionEdges } from '../core/session.js';
import { capSources } from '../core/taint-sources.js';
import type { MemoryRecord, SessionRef, Taint } from '../core/types.js';
import type { StorageReader } from '../store/driver.js';

/** Sessions whose log (and, apart, whose verified head) a facade keeps in memory at most (the least recently used is dropped). */
const MAX_LOGS = 256;

/** The records of `recs` each with the taint it may be trusted with (a row that does not match its audit entry: `external_untrusted`). */
export type TrustTaints = (recs: readonly MemoryRecord[]) => Promise<ReadonlyMap<string, MemoryRecord>>;

/** Put `v` at `k` as the most recently used, dropping the least recently used beyond `max` entries. */
export function touch<V>(m: Map<string, V>, k: string, v: V, max = MAX_LOGS): void {
  m.delete(k);
  if (m.size >= max) m.delete(m.keys().next().value as string);
  m.set(k, v);
}

const sameTaint = (a: Taint, b: Taint): boolean => hashCanonical(a) === hashCanonical(b);

/**
 * The session logs read so far and each record's edges spelled out, memoised per record object.
 * A memo can only save a read: a prefix is used only when its running hash equals the reference's
 * (content-addressed), so a log read inside a transaction that was rolled back is never trusted.
 */
export class SessionLogs {
  private readonly logs = new Map<string, { ids: string[]; hashes: string[] }>();
  private readonly full = new WeakMap<MemoryRecord, MemoryRecord>();
  /** the record as stored, by its spelled-out copy. */
  private readonly stored = new WeakMap<MemoryRecord, MemoryRecord>();
  private readonly broken = new WeakSet<MemoryRecord>();
  /** by session: the head of its log this facade last verified or appended ({@link trustedHead}). */
  private readonly heads = new Map<string, SessionLogEntry>();

  /** The memoised log of `ref`'s session when it holds the prefix `ref` names (its hash equal), else undefined. */
  private known(tenant: string, ref: SessionRef): { ids: string[]; hashes: string[] } | undefined {
    const log = this.logs.get(JSON.stringify([tenant, ref.sessionId]));
    return log !== undefined && log.hashes.length >= ref.length && log.hashes[ref.length - 1] === ref.hash ? log : undefined;
  }

  /** Remember a session's log as read (the least recently read dropped beyond {@link MAX_LOGS}). */
  private remember(tenant: string, sessionId: string, ids: string[]): void {
    const hashes: string[] = [];
    let h = EMPTY_LOG_HASH;
    for (const id of ids) hashes.push((h = logHash(h, id)));
    touch(this.logs, JSON.stringify([tenant, sessionId]), { ids, hashes });
  }

  /** Read what `recs` need (the logs not memoised, in one batched read); afterwards {@link expanded} and {@link matches} answer for them. */
  async load(src: StorageReader, tenant: string, recs: readonly MemoryRecord[]): Promise<void> {
    const todo = recs.filter((r) => r.sessionContext !== undefined && !this.full.has(r));
    if (todo.length === 0) return;
    const want = new Map<string, number>();
    for (const r of todo) {
      const ref = r.sessionContext as SessionRef;
      if (this.known(tenant, ref) === undefined) want.set(ref.sessionId, Math.max(want.get(ref.sessionId) ?? 0, ref.length));
    }
    if (want.size > 0) for (const [sessionId, ids] of await src.sessionLogPrefixes(tenant, want)) this.remember(tenant, sessionId, ids);
    for (const r of todo) {
      const ref = r.sessionContext as SessionRef;
      const log = this.known(tenant, ref);
      if (log === undefined) this.broken.add(r);
      const ids = log?.ids ?? this.logs.get(JSON.stringify([tenant, ref.sessionId]))?.ids ?? [];
      const copy: MemoryRecord = { ...r, derivedFrom: withSessionEdges(r.derivedFrom, ref, ids) };
      this.full.set(r, copy);
      this.stored.set(copy, r);
    }
  }

  /** {@link load}, then `recs` with their session contexts spelled out (see {@link expanded}). */
  async loadExpanded(src: StorageReader, tenant: string, recs: readonly MemoryRecord[]): Promise<MemoryRecord[]> {
    await this.load(src, tenant, recs);
    return recs.map((r) => this.expanded(r));
  }

  /** `r` with its session context spelled out as edges (the same object each time; `r` itself without one). */
  expanded(r: MemoryRecord): MemoryRecord {
    return this.full.get(r) ?? r;
  }

  /** `r` as the store holds it (what its audit entry is checked against), given it or its spelled-out copy. */
  original(r: MemoryRecord): MemoryRecord {
    return this.stored.get(r) ?? r;
  }

  /** After {@link load}: false when `r` (as stored) refers to a session log the store does not hold as its audit entry says. */
  matches(r: MemoryRecord): boolean {
    return !this.broken.has(r) && (r.sessionContext === undefined || this.full.has(r));
  }

  /**
   * The head of `session`'s log (`head`, as stored) as the facade may build on it (docs/design.md
   * § Derivation and taint): the stored head when re-folding the log — each running hash from the
   * record ids, the running summary from the records' taints as `trust` gives them — ends in the
   * same hash and summary; otherwise (a log changed outside the API) the stored head with its
   * summary's authority lowered to `external_untrusted`. Each entry is re-folded once per facade
   * (from the last head it verified or appended), so a long session costs a constant amount per write.
   */
  async trustedHead(src: StorageReader, tenant: string, session: string, head: SessionLogEntry | null, trust: TrustTaints): Promise<SessionLogEntry | null> {
    if (head === null) return null;
    const k = JSON.stringify([tenant, session]);
    const known = this.heads.get(k);
    if (known !== undefined && known.ord === head.ord && known.hash === head.hash && sameTaint(known.summary, head.summary)) return head;
    // from the last head verified here when the log only grew since, else (and when that fails) from its start
    let folded = known !== undefined && known.ord < head.ord ? await this.refold(src, tenant, session, known, head.ord, trust) : null;
    if (folded === null || folded.hash !== head.hash) folded = await this.refold(src, tenant, session, null, head.ord, trust);
    // a head appended before sources were bounded holds every source: its bounded list is what the fold gives
    if (folded !== null && folded.hash === head.hash && sameTaint(folded.summary, { ...head.summary, sources: capSources(head.summary.sources) })) {
      this.appended(tenant, session, head);
      return head;
    }
    return { ...head, summary: { ...head.summary, lowestAuthority: 'external_untrusted' } };
  }

  /** Note `entry` as the head of `session`'s log this facade wrote or verified (its summary is its own fold). */
  appended(tenant: string, session: string, entry: SessionLogEntry): void {
    touch(this.heads, JSON.stringify([tenant, session]), entry);
  }

  /** The log's entries after `from` (null: its start) up to `ord` re-folded; null when one is missing, out of order or its record is gone. */
  private async refold(src: StorageReader, tenant: string, session: string, from: SessionLogEntry | null, ord: number, trust: TrustTaints): Promise<SessionLogEntry | null> {
    let at: { hash: string; summary: Taint | null; ord: number } = { hash: from?.hash ?? EMPTY_LOG_HASH, summary: from?.summary ?? null, ord: from?.ord ?? 0 };
    while (at.ord < ord) {
      const page = (await src.sessionLogAfter(tenant, { sessionId: session, ord: at.ord }, Math.min(ord - at.ord, 1000))).filter((e) => e.sessionId === session);
      if (page.length === 0) return null;
      const taints = await trust(await src.getRecords(tenant, [...new Set(page.map((e) => e.recordId))]));
      for (const e of page) {
        const r = taints.get(e.recordId);
        if (e.ord !== at.ord + 1 || r === undefined) return null;
        at = { hash: logHash(at.hash, e.recordId), summary: foldTaint(at.summary, r.taint), ord: e.ord };
      }
    }
    return at.summary === null ? null : { ord, recordId: '', hash: at.hash, summary: at.summary };
  }
}
