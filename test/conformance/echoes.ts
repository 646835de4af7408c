/**
 * The echo check of a write in a session (docs/design.md § Derivation and taint: recalled text
 * re-ingested resolves to the original record) on a real store: a write looks its echoes up in the
 * facade's index of the session's read log (api/session-echoes.ts) and must find exactly what
 * comparing it with every record the session read finds (core/echo.ts findEchoes) — reads logged
 * by another facade on the same store (another process), records deleted after they were read and
 * supersede included.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Memory } from '../../src/index.js';
import { findEchoes } from '../../src/core/echo.js';
import { rng } from '../../reliability/common.js';
import { P, T } from '../helpers.js';
import { type StoreFactory, setupWith } from './common.js';

const WORDS = ['vendor', 'pays', 'ACCT-7', 'acct-7', 'invoice', 'Total', '42', 'weekly', 'remit', 'the', 'to', 'é', 'e\u0301', '!', ' ', '\n'];

/** What comparing `content` with every record read in `session` finds (the reference). */
async function scan(mem: Memory, session: string, content: string): Promise<{ exact: string | null; contained: string[] }> {
  const reads = await mem.driver.getRecords(T, await mem.driver.sessionReads(T, session));
  const { exact, contained } = findEchoes(content, reads);
  return { exact: exact?.id ?? null, contained: contained.map((r) => r.id) };
}

/** A content that repeats, quotes, reuses the words of, or ignores one of `texts`. */
function contentFrom(r: ReturnType<typeof rng>, texts: readonly string[]): string {
  const words = (n: number): string => Array.from({ length: n }, () => r.pick(WORDS)).join(r.pick([' ', '  ']));
  const pick = texts.length > 0 ? r.pick(texts) : words(8);
  const kind = r.int(0, 4);
  if (kind === 0) return `${pick}${r.pick(['', ' \n', '\r\n'])}`;
  if (kind === 1) return `${words(r.int(0, 3))} "${pick}" ${words(r.int(0, 3))}`;
  if (kind === 2)
    return pick
      .split(/\s+/)
      .filter((w) => r.next() < 0.8)
      .reverse()
      .join(' ');
  return words(r.int(1, 20));
}

export function echoCases(f: StoreFactory): void {
  describe('the echo index finds what a scan of every read finds', () => {
    test('random sessions: reads through two facades, deletions, writes and supersedes', async (t) => {
      const env = await setupWith(f);
      t.after(env.dispose);
      const other = await env.reopen();
      t.after(() => other.close());
      const r = rng(7);
      for (let round = 0; round < 3; round++) {
        const S = `ses-echo-index-${round}`;
        const texts: string[] = [];
        const written: string[] = [];
        for (let step = 0; step < 24; step++) {
          const op = r.int(0, 9);
          if (op <= 3) {
            const content = contentFrom(r, texts);
            const rec = (await env.mem.write({ tenant: T, scope: 'web', principal: P.browser, content, source: `https://site${round}.example/${step}` })).record;
            texts.push(content);
            written.push(rec.id);
            await (r.next() < 0.5 ? env.mem : other).get({ tenant: T, id: rec.id, session: S });
          } else if (op === 4 && written.length > 0) {
            await env.mem.delete({ tenant: T, id: r.pick(written) });
          } else {
            const content = contentFrom(r, texts);
            const want = await scan(env.mem, S, content);
            const w = await env.mem.write({ tenant: T, scope: 'chat', principal: P.alice, content, session: S });
            assert.equal(w.echoOf, want.exact, `round ${round} step ${step}: exact echo of ${JSON.stringify(content)}`);
            if (want.exact === null) {
              const echoes = w.record.derivedFrom.filter((e) => e.kind === 'echo').map((e) => e.from);
              assert.deepEqual(echoes, want.contained, `round ${round} step ${step}: echo edges of ${JSON.stringify(content)}`);
              texts.push(content);
            }
          }
        }
      }
    });

    test('a record read in the session by another facade (process) is found by the next write', async (t) => {
      const env = await setupWith(f);
      t.after(env.dispose);
      const other = await env.reopen();
      t.after(() => other.close());
      const S = 'ses-echo-other';
      const first = (await env.mem.write({ tenant: T, scope: 'web', principal: P.browser, content: 'Vendor page: remit weekly to ACCT-7', source: 'https://a.example/1' })).record;
      await env.mem.get({ tenant: T, id: first.id, session: S });
      // the index of the session is built here
      assert.equal((await env.mem.write({ tenant: T, scope: 'chat', principal: P.alice, content: 'a note of mine', session: S })).echoOf, null);
      const page = (await other.write({ tenant: T, scope: 'web', principal: P.browser, content: 'Pay ACCT-9 the sum of 90 by Friday', source: 'https://b.example/2' })).record;
      await other.get({ tenant: T, id: page.id, session: S });
      assert.equal((await env.mem.write({ tenant: T, scope: 'chat', principal: P.alice, content: 'Pay ACCT-9 the sum of 90 by Friday\n', session: S })).echoOf, page.id);
      const quoted = (await env.mem.write({ tenant: T, scope: 'chat', principal: P.alice, content: 'As it said: "pay acct-9 the sum of 90 by friday!"', session: S })).record;
      assert.deepEqual(quoted.derivedFrom, [{ from: page.id, transform: 'import', kind: 'echo' }]);
      assert.equal(quoted.taint.lowestAuthority, 'external_untrusted');
      const v = await env.mem.supersede({ tenant: T, id: quoted.id, principal: P.alice, content: 'Pay ACCT-9 the sum of 90 by Friday', reason: 'shorter', session: S });
      assert.ok(
        v.record.derivedFrom.some((e) => e.from === page.id && e.kind === 'echo'),
        'a version repeating it derives from it',
      );
      await env.mem.delete({ tenant: T, id: page.id });
      const after = await env.mem.write({ tenant: T, scope: 'chat', principal: P.alice, content: 'Pay ACCT-9 the sum of 90 by Friday', session: S });
      assert.equal(after.echoOf, v.record.id, 'the deleted page has no text to repeat; the version written in the session has');
    });
  });
}
