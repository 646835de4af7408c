/**
 * The echo check (docs/design.md § Derivation and taint: recalled text re-ingested; src/core/echo.ts)
 * never costs O(size of the session's texts) per write: each read record is normalised, hashed and
 * tokenised once (into the session's echo index, src/core/echo-index.ts, or once per record
 * object), and a write compares its text only with the records the index names
 * (test/echo-index.test.ts). Counted in work (records prepared), not wall time, and checked
 * against the straightforward reference algorithm on generated texts.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { echoKey, echoWork, findEchoes } from '../src/core/echo.js';
import { normalizeText, significantTokens } from '../src/core/values.js';
import { rng } from '../reliability/common.js';
import { P, T, setup } from './helpers.js';

/** The reference: every read record keyed and tokenised at every call. */
function reference(content: string, reads: ReadonlyArray<{ id: string; content: string | null }>): { exact: string | null; contained: string[] } {
  const loose = (t: string): string =>
    normalizeText(t)
      .replace(/[^\p{L}\p{N}@]+/gu, ' ')
      .trim();
  let exact: string | null = null;
  const contained: string[] = [];
  const tokens = significantTokens(content);
  for (const r of reads) {
    if (r.content === null) continue;
    if (exact === null && echoKey(r.content) === echoKey(content)) {
      exact = r.id;
      continue;
    }
    const rn = loose(r.content);
    const rt = significantTokens(r.content);
    if ((rn.length >= 16 && loose(content).includes(rn)) || (tokens.size >= 4 && [...tokens].every((t) => rt.has(t)))) contained.push(r.id);
  }
  return { exact, contained };
}

describe('echo check: work per write', () => {
  test('findEchoes gives what the reference gives (generated texts, repeated calls on the same records)', () => {
    const r = rng(42);
    const words = ['vendor', 'pays', 'ACCT-1', 'acct-1', 'to', 'the', 'invoice', 'Total', '42', 'é', 'e\u0301', '\u200b', '!', ' ', '\n', '\r\n', '\t'];
    const text = (n: number): string => Array.from({ length: n }, () => r.pick(words)).join(r.pick([' ', '', '  ']));
    for (let round = 0; round < 200; round++) {
      const reads = Array.from({ length: r.int(0, 6) }, (_, i) => ({ id: `r${i}`, content: r.next() < 0.1 ? null : text(r.int(1, 30)) }));
      for (let k = 0; k < 5; k++) {
        const pick = reads[r.int(0, Math.max(0, reads.length - 1))]?.content ?? null;
        const content = pick !== null && r.next() < 0.4 ? (r.next() < 0.5 ? `${pick} \n` : `${text(3)} ${pick} ${text(3)}`) : text(r.int(1, 40));
        const got = findEchoes(content, reads);
        assert.deepEqual({ exact: got.exact?.id ?? null, contained: got.contained.map((x) => x.id) }, reference(content, reads), `round ${round}: ${JSON.stringify(content)}`);
      }
    }
  });

  test('20 large records read into a session are prepared once, not at every later write', async () => {
    const env = await setup();
    try {
      const big = (i: number): string => Array.from({ length: 20_000 }, (_, j) => `w${i}x${j % 997}`).join(' ');
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) ids.push((await env.mem.write({ tenant: T, scope: 'x', principal: P.mallory, content: big(i), source: 'mail:flood' })).record.id);
      for (const id of ids) await env.mem.get({ tenant: T, id, session: 'flood' });
      const before = echoWork.prepared;
      for (let i = 0; i < 10; i++) {
        const w = await env.mem.write({ tenant: T, scope: 'x', principal: P.mallory, content: `small note ${i}`, source: 'mail:flood', session: 'flood' });
        assert.equal(w.echoOf, null, 'a small note is no echo');
      }
      const prepared = echoWork.prepared - before;
      // each of the 20 large records at most once (the cached row object is reused), plus slack for the notes
      assert.ok(prepared <= 20 + 10 && prepared >= 0, `records prepared over 10 writes: ${prepared} (each of the 20 large records at most once)`);
      // an echo of one of them is still found
      const echo = await env.mem.write({ tenant: T, scope: 'x', principal: P.mallory, content: `${big(3)}\n`, source: 'mail:flood', session: 'flood' });
      assert.equal(echo.record.id, ids[3]);
    } finally {
      await env.dispose();
    }
  });
});
