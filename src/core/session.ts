/**
 * Sessions (docs/design.md § What the model sees, § Derivation and taint): who may use a
 * session, and the session's context — an append-only read log whose every entry carries the
 * running hash of the log so far and the running taint of everything read so far. A record
 * written in the session refers to the log's prefix by (length, hash) instead of one edge per
 * record read. Pure: no I/O; imports only from src/core.
 */
import { minAuthority } from './authority.js';
import { hashCanonical } from './canonical.js';
import { capSources } from './taint-sources.js';
import type { Channel, DerivationEdge, SessionRef, Taint } from './types.js';

/**
 * Who may use a session. A session belongs to whoever used it first: a principal id, or `null`
 * for the application (a library call that names no requester; on the server, the admin token).
 * The application may use any session of its tenant (it holds the store); a principal only the
 * sessions it owns — never one the application or another principal opened.
 *
 * @param owner - the session's recorded owner (`null`: the application).
 * @param caller - the principal id the call is made for (`null`: the application).
 * @returns true when `caller` may read, write, derive or decide in the session.
 */
export function mayUseSession(owner: string | null, caller: string | null): boolean {
  return caller === null || owner === caller;
}

/** One entry of a session's read log: the `ord`-th record read (1-based), with the log's state after it. */
export interface SessionLogEntry {
  readonly ord: number;
  readonly recordId: string;
  /** running hash of the log up to this entry ({@link logHash}). */
  readonly hash: string;
  /** the minimum over the taints of every record read up to this entry ({@link foldTaint}). */
  readonly summary: Taint;
}

/** The hash of the empty log. */
export const EMPTY_LOG_HASH = '';

/** h_k = SHA-256(canonical [h_{k-1}, id_k]): the log's prefix of length k, content-addressed. */
export function logHash(prev: string, recordId: string): string {
  return hashCanonical([prev, recordId]);
}

/** The running summary after reading a record of taint `t`: it can only go down (authority) or grow (channels, sources — up to core/taint-sources.ts's bound). */
export function foldTaint(summary: Taint | null, t: Taint): Taint {
  if (summary === null) return { lowestAuthority: t.lowestAuthority, channels: [...t.channels].sort(), sources: capSources(t.sources), oldestSourceAt: t.oldestSourceAt };
  return {
    lowestAuthority: minAuthority(summary.lowestAuthority, t.lowestAuthority),
    channels: [...new Set<Channel>([...summary.channels, ...t.channels])].sort(),
    sources: capSources(summary.sources, t.sources),
    oldestSourceAt: t.oldestSourceAt < summary.oldestSourceAt ? t.oldestSourceAt : summary.oldestSourceAt,
  };
}

/**
 * The log entries that reading `reads` (records not read in the session yet, in read order,
 * each with the taint it may be trusted with) appends after `head` (null: the log is empty).
 */
export function extendLog(head: SessionLogEntry | null, reads: ReadonlyArray<{ readonly id: string; readonly taint: Taint }>): SessionLogEntry[] {
  const out: SessionLogEntry[] = [];
  let last = head;
  for (const r of reads) {
    const e: SessionLogEntry = { ord: (last?.ord ?? 0) + 1, recordId: r.id, hash: logHash(last?.hash ?? EMPTY_LOG_HASH, r.id), summary: foldTaint(last?.summary ?? null, r.taint) };
    out.push(e);
    last = e;
  }
  return out;
}

/**
 * Does `ids` (a log's record ids in order) hash to `hash` over its first `length` entries?
 * A log altered, reordered or cut outside the API does not.
 */
export function prefixMatches(ids: readonly string[], length: number, hash: string): boolean {
  if (ids.length < length) return false;
  let h = EMPTY_LOG_HASH;
  for (let i = 0; i < length; i++) h = logHash(h, ids[i] as string);
  return h === hash;
}

/**
 * A record's derivation edges with its session context spelled out: `derivedFrom`, then one
 * `session` edge to each record of the log's prefix (`prefix`, in read order) not already in it —
 * exactly the edges a record carried when each was stored on its own.
 */
export function withSessionEdges(derivedFrom: readonly DerivationEdge[], ref: SessionRef, prefix: readonly string[]): DerivationEdge[] {
  const have = new Set(derivedFrom.map((e) => e.from));
  const out = [...derivedFrom];
  for (let i = 0; i < ref.length && i < prefix.length; i++) {
    const id = prefix[i] as string;
    if (!have.has(id)) {
      have.add(id);
      out.push({ from: id, transform: ref.transform, kind: 'session' });
    }
  }
  return out;
}
