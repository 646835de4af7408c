/**
 * Session contexts as the facade's lineage walks see them (docs/design.md § Derivation and
 * taint): a record that refers to its session's read log (`sessionContext`, core/session.ts)
 * derives from every record of the log's prefix — spelled out here as the `session` edges it stands
 * for — and matches its audit entry only while the stored log still hashes to the hash the entry
 * holds (a log altered, reordered or cut outside the API does not). Imports from src/core and
 * src/store's port.
 */
import { EMPTY_LOG_HASH, logHash, withSessionEdges } from '../core/session.js';
import type { MemoryRecord, SessionRef } from '../core/types.js';
import type { StorageReader } from '../store/driver.js';

/** Sessions whose log a facade keeps in memory at most (the least recently loaded is dropped). */
const MAX_LOGS = 256;

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
    const k = JSON.stringify([tenant, sessionId]);
    this.logs.delete(k);
    if (this.logs.size >= MAX_LOGS) this.logs.delete(this.logs.keys().next().value as string);
    this.logs.set(k, { ids, hashes });
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
}
