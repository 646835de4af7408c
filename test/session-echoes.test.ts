/**
 * The facade's per-session echo indexes (src/api/session-echoes.ts; docs/design.md § Derivation
 * and taint) against a session log held in memory: whatever the index saw — entries it was told
 * of as they were appended, entries appended by someone else (another process) it must read,
 * entries it was told of that were then rolled back, a memory budget too small to keep any index —
 * `find` gives what the echo check gives over every record of the log as stored.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SessionEchoes } from '../src/api/session-echoes.js';
import { findEchoes } from '../src/core/echo.js';
import { type SessionLogEntry, extendLog } from '../src/core/session.js';
import type { MemoryRecord, Taint } from '../src/core/types.js';
import type { StorageReader } from '../src/store/driver.js';
import { rng } from '../reliability/common.js';

const TAINT: Taint = { lowestAuthority: 'external_untrusted', channels: [], sources: ['web'], oldestSourceAt: '2026-01-01T00:00:00.000Z' };
const WORDS = ['vendor', 'pays', 'ACCT-7', 'acct-7', 'invoice', 'Total', '42', 'weekly', 'remit', 'the', 'to', '!'];

/** One session's log and the records it names, as a store would hand them out. */
class FakeLog {
  readonly entries: SessionLogEntry[] = [];
  readonly records = new Map<string, MemoryRecord>();

  append(recs: ReadonlyArray<{ id: string; content: string | null }>): { prev: SessionLogEntry | null; added: SessionLogEntry[] } {
    const prev = this.entries[this.entries.length - 1] ?? null;
    for (const r of recs) this.records.set(r.id, r as unknown as MemoryRecord);
    const added = extendLog(
      prev,
      recs.map((r) => ({ id: r.id, taint: TAINT })),
    );
    this.entries.push(...added);
    return { prev, added };
  }

  get head(): SessionLogEntry | null {
    return this.entries[this.entries.length - 1] ?? null;
  }

  reader(session: string): StorageReader {
    return {
      sessionLogAfter: async (_t: string, after: { sessionId: string; ord: number } | null, limit: number) =>
        this.entries
          .filter((e) => e.ord > (after?.ord ?? 0))
          .slice(0, limit)
          .map((e) => ({ ...e, sessionId: session })),
      getRecords: async (_t: string, ids: readonly string[]) => [...new Set(ids)].flatMap((id) => this.records.get(id) ?? []).sort((a, b) => (a.id < b.id ? -1 : 1)),
    } as unknown as StorageReader;
  }

  /** The reference: the echo check over every record of the log. */
  scan(content: string): { exact: string | null; contained: string[] } {
    const all = [...new Set(this.entries.map((e) => e.recordId))].flatMap((id) => this.records.get(id) ?? []).sort((a, b) => (a.id < b.id ? -1 : 1));
    const r = findEchoes(content, all);
    return { exact: r.exact?.id ?? null, contained: r.contained.map((x) => x.id) };
  }
}

for (const [label, budget] of [
  ['the default budget', undefined],
  ['a budget too small to keep any index', 40],
] as const) {
  test(`find = the echo check over the whole stored log (told, untold and rolled-back appends; ${label})`, async () => {
    const r = rng(19);
    const words = (n: number): string => Array.from({ length: n }, () => r.pick(WORDS)).join(' ');
    const echoes = new SessionEchoes(budget);
    const log = new FakeLog();
    const texts: string[] = [];
    const S = 'ses-1';
    let next = 0;
    const content = (): string => {
      const pick = texts.length > 0 ? r.pick(texts) : words(6);
      return r.pick([pick, `${pick}\n`, `as said: ${pick.toUpperCase()}!`, pick.split(' ').reverse().join(' '), words(r.int(1, 12))]);
    };
    let kept = 0;
    for (let step = 0; step < 400; step++) {
      const op = r.int(0, 9);
      if (op <= 4) {
        const recs = Array.from({ length: r.int(1, 3) }, () => ({ id: `mem_${String(next++).padStart(4, '0')}_${r.int(0, 9)}`, content: r.next() < 0.05 ? null : content() }));
        for (const x of recs) if (x.content !== null) texts.push(x.content);
        const { prev, added } = log.append(recs);
        // this facade appended them (told), or another process did (read back at the next find)
        if (op <= 2) echoes.appended('t', S, prev, added, new Map(recs.map((x) => [x.id, x as unknown as MemoryRecord])));
      } else if (op === 5) {
        // told of an append whose transaction then rolled back: the store never holds it
        const ghost = { id: `mem_ghost_${step}`, content: content() };
        echoes.appended('t', S, log.head, extendLog(log.head, [{ id: ghost.id, taint: TAINT }]), new Map([[ghost.id, ghost as unknown as MemoryRecord]]));
      } else {
        const c = content();
        const got = await echoes.find(log.reader(S), 't', S, log.head, c);
        assert.deepEqual({ exact: got.exact?.id ?? null, contained: got.contained.map((x) => x.id) }, log.scan(c), `step ${step}: ${JSON.stringify(c)}`);
        kept = Math.max(kept, echoes.kept);
      }
    }
    assert.equal(kept, budget === undefined ? 1 : 0, 'the index is kept only within the budget');
  });
}
