/**
 * Session read logs against the chain (docs/design.md § Audit log, § Derivation and taint): every
 * session's log re-folded from its entries — each running hash recomputed from the record ids and
 * each running taint summary from the records' taints, as the facade folded them when it appended
 * the entry — and every record written in a session checked to carry at least the taint of the log
 * prefix it refers to. A summary changed outside the API (which would let a later write in that
 * session take a taint it never had) is found here. It yields to the event loop every few
 * milliseconds (api/yielder.ts): the logs grow with every read. Part of api/verify.ts; imports
 * from src/core, src/store's port and api/yielder.ts.
 */
import { atLeast } from '../core/authority.js';
import { hashCanonical } from '../core/canonical.js';
import { EMPTY_LOG_HASH, foldTaint, logHash } from '../core/session.js';
import { sourcesCover } from '../core/taint-sources.js';
import type { MemoryRecord, SessionRef, Taint } from '../core/types.js';
import type { StorageReader } from '../store/driver.js';
import { yielder } from './yielder.js';

export type SessionLogProblem =
  // a log entry whose ordinal, running hash or running summary is not what re-folding the log gives
  | 'session_log_entry_differs'
  // a record written in a session whose taint is above the summary of the log prefix it refers to
  | 'taint_above_session_context';

/** Rows read per query: a page is read and decoded in one stretch, so it stays short (a few ms). */
const PAGE = 1000;

/** A session's log as re-folded so far. */
interface Fold {
  sessionId: string;
  ord: number;
  hash: string;
  summary: Taint | null;
  /**
   * the same fold with every source kept whole, as logs were folded before sources were bounded
   * (core/taint-sources.ts): null before the first entry, undefined once an entry is not of that form.
   */
  unbounded: Taint | null | undefined;
  /** false from the first entry that differs on (nothing after it is checked). */
  ok: boolean;
}

/** Does `t` carry at least `context` (what a record derived from it must): authority no higher, every channel and source, no later oldest source? */
function covers(t: Taint, context: Taint): boolean {
  if (!atLeast(context.lowestAuthority, t.lowestAuthority)) return false;
  if (context.channels.some((c) => !t.channels.includes(c)) || context.sources.some((s) => !sourcesCover(t.sources, s))) return false;
  return t.oldestSourceAt <= context.oldestSourceAt;
}

/** {@link foldTaint} keeping every source: how session logs were folded before sources were bounded. */
function foldUnbounded(summary: Taint | null, t: Taint): Taint {
  const f = foldTaint(summary, t);
  return { ...f, sources: [...new Set([...(summary?.sources ?? []), ...t.sources])].sort() };
}

/** The records `page` names, those of the previous page's `known` reused (many sessions read the same records), the others read. */
async function pageRecords(driver: StorageReader, tenant: string, page: ReadonlyArray<{ recordId: string }>, known: ReadonlyMap<string, MemoryRecord>): Promise<Map<string, MemoryRecord>> {
  const ids = [...new Set(page.map((e) => e.recordId))];
  const out = new Map<string, MemoryRecord>();
  for (const id of ids) {
    const r = known.get(id);
    if (r !== undefined) out.set(id, r);
  }
  const missing = ids.filter((id) => !out.has(id));
  if (missing.length > 0) for (const r of await driver.getRecords(tenant, missing)) out.set(r.id, r);
  return out;
}

/**
 * Re-fold every session log of `tenant` (docs/design.md § Audit log).
 *
 * @param contexts - the records written in a session whose rows match their audit entries (their
 *   `sessionContext` and taint are the audited ones).
 * @param matching - ids of the records whose rows match their audit entries: an entry for any
 *   other record is folded with `external_untrusted`, as the facade appended it (api/sessions.ts).
 * @returns the problems found: a log entry as `session:<id>#<ord>` (the first that differs in its
 *   session), a record by its id.
 */
export async function sessionLogProblems(
  driver: StorageReader,
  tenant: string,
  contexts: ReadonlyArray<Pick<MemoryRecord, 'id' | 'taint'> & { sessionContext: SessionRef }>,
  matching: ReadonlySet<string>,
): Promise<Array<{ id: string; problem: SessionLogProblem }>> {
  const bad: Array<{ id: string; problem: SessionLogProblem }> = [];
  // the records to check at each (session, length)
  const at = new Map<string, Array<{ id: string; taint: Taint }>>();
  for (const r of contexts) {
    const k = JSON.stringify([r.sessionContext.sessionId, r.sessionContext.length]);
    at.set(k, [...(at.get(k) ?? []), { id: r.id, taint: r.taint }]);
  }
  let fold: Fold | null = null;
  let records = new Map<string, MemoryRecord>();
  // the logs may hold many rows (every record marked read in every session): let other requests run between them
  const pause = yielder();
  for (let after: { sessionId: string; ord: number } | null = null; ;) {
    const page = await driver.sessionLogAfter(tenant, after, PAGE);
    records = await pageRecords(driver, tenant, page, records);
    for (const e of page) {
      await pause();
      if (fold === null || fold.sessionId !== e.sessionId) fold = { sessionId: e.sessionId, ord: 0, hash: EMPTY_LOG_HASH, summary: null, unbounded: null, ok: true };
      if (!fold.ok) continue;
      const r = records.get(e.recordId);
      const taint = r === undefined ? null : matching.has(r.id) ? r.taint : { ...r.taint, lowestAuthority: 'external_untrusted' as const };
      fold.hash = logHash(fold.hash, e.recordId);
      fold.summary = taint === null ? null : foldTaint(fold.summary, taint);
      fold.unbounded = taint === null || fold.unbounded === undefined ? undefined : foldUnbounded(fold.unbounded, taint);
      fold.ord += 1;
      // an entry appended before sources were bounded holds them all; one appended since, the bounded fold (the same from any prefix)
      const stored = hashCanonical(e.summary);
      const legacy = fold.unbounded !== undefined && stored === hashCanonical(fold.unbounded);
      // the log's entries before the bound all come before those after it: once one is not of the old form, no later one is
      if (!legacy) fold.unbounded = undefined;
      if (e.ord !== fold.ord || e.hash !== fold.hash || fold.summary === null || (stored !== hashCanonical(fold.summary) && !legacy)) {
        fold.ok = false;
        bad.push({ id: `session:${e.sessionId}#${e.ord}`, problem: 'session_log_entry_differs' });
        continue;
      }
      for (const c of at.get(JSON.stringify([e.sessionId, e.ord])) ?? []) if (!covers(c.taint, fold.summary)) bad.push({ id: c.id, problem: 'taint_above_session_context' });
    }
    const last = page[page.length - 1];
    if (page.length < PAGE || last === undefined) break;
    after = { sessionId: last.sessionId, ord: last.ord };
  }
  return bad;
}
