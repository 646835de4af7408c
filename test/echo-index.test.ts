/**
 * The session's echo index (src/core/echo-index.ts; docs/design.md § Derivation and taint): on
 * random sessions, the echo check given only the records the index names finds exactly what it
 * finds given every record read — the same exact echo and the same contained records in the same
 * order — with texts built to repeat, quote, re-case, re-space and reuse the words of earlier
 * reads, and records whose text is erased after they were indexed. Also: the index names no record
 * the content cannot repeat, and a look-up's work does not grow with the number of records read.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EchoIndex } from '../src/core/echo-index.js';
import { echoWork, findEchoes } from '../src/core/echo.js';
import { rng } from '../reliability/common.js';

const WORDS = ['vendor', 'pays', 'ACCT-1', 'acct-1', 'to', 'the', 'invoice', 'Total', '42', 'é', 'e\u0301', '\u200b', '!', ' ', '\n', '\r\n', '\t', 'Friday', 'remit'];

type Rec = { id: string; content: string | null };

/** A content built from `reads`' texts (or not): repeated, quoted, re-cased, words reused, or new. */
function contentOf(r: ReturnType<typeof rng>, reads: readonly Rec[], text: (n: number) => string): string {
  const pick = reads.length > 0 ? (r.pick(reads).content ?? text(5)) : text(5);
  switch (r.int(0, 5)) {
    case 0:
      return `${pick}${r.pick(['', ' \n', '\r\n', '\t\n\n'])}`;
    case 1:
      return `${text(r.int(0, 4))}${r.pick(['', ' ', '"'])}${r.next() < 0.5 ? pick.toUpperCase() : pick}${r.pick(['', ' ', '.'])}${text(r.int(0, 4))}`;
    case 2:
      return pick
        .split(/\s+/)
        .filter(() => r.next() < 0.7)
        .reverse()
        .join(r.pick([' ', ', ']));
    case 3:
      return pick.slice(r.int(0, 5), Math.max(0, pick.length - r.int(0, 5)));
    default:
      return text(r.int(1, 40));
  }
}

const ids = (x: { exact: Rec | null; contained: Rec[] }): { exact: string | null; contained: string[] } => ({ exact: x.exact?.id ?? null, contained: x.contained.map((c) => c.id) });

describe('echo index', () => {
  test('findEchoes on the records the index names = findEchoes on every record read (random sessions)', () => {
    const r = rng(1616);
    const text = (n: number): string => Array.from({ length: n }, () => r.pick(WORDS)).join(r.pick([' ', '', '  ']));
    let checked = 0;
    let nonEmpty = 0;
    for (let round = 0; round < 150; round++) {
      const index = new EchoIndex();
      const reads: Rec[] = [];
      for (let step = 0; step < 40; step++) {
        if (r.next() < 0.45) {
          const rec: Rec = { id: `r${round}-${step}`, content: r.next() < 0.05 ? null : contentOf(r, reads, text) };
          reads.push(rec);
          index.add(rec.id, rec.content);
          continue;
        }
        // the store hands the records over in its own order (by id here), erased ones without text
        if (reads.length > 0 && r.next() < 0.1) r.pick(reads).content = null;
        const content = contentOf(r, reads, text);
        const all = [...reads].sort((a, b) => (a.id < b.id ? -1 : 1));
        const named = new Set(index.candidates(content));
        const want = ids(findEchoes(content, all));
        assert.deepEqual(
          ids(
            findEchoes(
              content,
              all.filter((x) => named.has(x.id)),
            ),
          ),
          want,
          `round ${round} step ${step}: ${JSON.stringify(content)}`,
        );
        checked += 1;
        if (want.exact !== null || want.contained.length > 0) nonEmpty += 1;
      }
    }
    assert.ok(nonEmpty > checked / 5, `the generator makes echoes often enough: ${nonEmpty} of ${checked}`);
  });

  test('the index names no record the content cannot repeat when every read is unrelated', () => {
    const index = new EchoIndex();
    for (let i = 0; i < 2000; i++) index.add(`r${i}`, `note ${i}: the customer asked about invoice ${i * 7} and the vendor v${i % 97} schedule`);
    assert.deepEqual(index.candidates('a brand new sentence with nothing read before'), []);
    assert.deepEqual(index.candidates('note 1234: the customer asked about invoice 8638 and the vendor v70 schedule'), ['r1234']);
    assert.deepEqual(index.candidates('as noted: NOTE 5 - the customer asked about invoice 35 and the vendor v5 schedule!'), ['r5']);
    assert.deepEqual(index.candidates('vendor v5 invoice 35 customer'), ['r5'], 'its words are a subset of one record only');
  });

  test('a look-up compares the content with the records sharing its keys only, whatever the number of records read', () => {
    const work = (n: number): { prepared: number; compared: number; found: string[] } => {
      const index = new EchoIndex();
      for (let i = 0; i < n; i++) index.add(`r${i}`, `record ${i} of the session about invoice ${i * 3}, unrelated to the rest`);
      const [p, c] = [echoWork.prepared, echoWork.compared];
      const found = index.candidates('as said: record 7 of the session about invoice 21, unrelated to the rest');
      return { prepared: echoWork.prepared - p, compared: echoWork.compared - c, found };
    };
    const small = work(10);
    const large = work(5000);
    assert.deepEqual(small.found, ['r7']);
    assert.deepEqual(large.found, ['r7']);
    assert.equal(large.prepared, 0, 'no record is prepared again at a look-up');
    assert.ok(large.compared <= small.compared + 2, `records compared: ${small.compared} of 10, ${large.compared} of 5,000`);
  });
});
