/**
 * The bound on a taint's sources (src/core/taint-sources.ts, docs/design.md § Derivation and
 * taint): the first 16 of the union in sort order, composed in any order to the same list; the
 * authority and channels stay exact; a session's running summary and a derivation from many
 * inputs store a bounded list; session logs folded before the bound still verify, and a source
 * added to one outside the API is still found.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { MAX_SOURCE_BYTES, MAX_TAINT_SOURCES, boundedSource, capSources, sourcesCover } from '../src/core/taint-sources.js';
import { P, T, openTemp, setup } from './helpers.js';

const bytes = (x: string): number => Buffer.byteLength(x, 'utf8');
const wellFormed = (x: string): boolean => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(x);
// short strings (many ties and orderings) and long full-Unicode ones (shortened, surrogate pairs at the cut)
const source = fc.oneof(fc.string({ maxLength: 6 }), fc.string({ unit: 'grapheme', minLength: 60, maxLength: 160 }), fc.string({ unit: 'binary', minLength: 150, maxLength: 400 }));
const list = fc.array(source, { maxLength: 40 });

describe('capSources and sourcesCover', () => {
  test('the first N of a union are the first N of the union of each part capped: folding in any order and grouping gives one list', () => {
    fc.assert(
      fc.property(list, list, list, (a, b, c) => {
        const whole = capSources(a, b, c);
        assert.deepEqual(capSources(capSources(a, b), c), whole);
        assert.deepEqual(capSources(c, capSources(b, a)), whole);
        assert.deepEqual(whole, [...new Set([...a, ...b, ...c].map(boundedSource))].sort().slice(0, MAX_TAINT_SOURCES));
      }),
    );
  });

  test('a capped union covers every source of its parts, and nothing that sorts before its last and is not in it', () => {
    fc.assert(
      fc.property(list, list, source, (a, b, s) => {
        const u = capSources(a, b);
        for (const x of [...a, ...b]) assert.ok(sourcesCover(u, x), `${JSON.stringify(u)} covers ${JSON.stringify(x)}`);
        const last = u[u.length - 1];
        const t = boundedSource(s);
        if (!u.includes(t) && (u.length < MAX_TAINT_SOURCES || (last !== undefined && t < last))) assert.equal(sourcesCover(u, s), false);
      }),
    );
  });
});

test('a long address is kept as its whole characters within 200 bytes and a digest: at most 220 bytes, never half a character, distinct addresses distinct, short ones untouched', () => {
  fc.assert(
    fc.property(source, source, (a, b) => {
      const x = boundedSource(a);
      assert.ok(bytes(x) <= 220 || x === a, `${bytes(x)} bytes`);
      assert.ok(wellFormed(x) || !wellFormed(a), 'a well-formed address stays well-formed');
      assert.equal(boundedSource(x), x, 'idempotent');
      if (bytes(a) <= MAX_SOURCE_BYTES) assert.equal(x, a);
      if (a !== b && bytes(a) > MAX_SOURCE_BYTES && bytes(b) > MAX_SOURCE_BYTES) assert.notEqual(x, boundedSource(b));
    }),
  );
  // an emoji across the 200th byte is left out whole
  const straddling = `${'a'.repeat(198)}😀${'b'.repeat(100)}`;
  assert.equal(boundedSource(straddling).slice(0, 199), 'a'.repeat(198) + '…');
  const long = `https://pages.example/${'q'.repeat(1000)}`;
  assert.ok(boundedSource(long).startsWith(long.slice(0, 200)));
  assert.ok(sourcesCover([long], long), 'a list stored with the whole address covers it');
  assert.ok(sourcesCover(capSources([long]), long));
});

describe('a store keeps bounded sources', () => {
  const pages = async (mem: Awaited<ReturnType<typeof setup>>['mem'], n: number): Promise<string[]> => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const url = `https://pages.example/${String(i).padStart(3, '0')}/${'q'.repeat(1500)}`;
      ids.push((await mem.write({ tenant: T, scope: 'web', principal: P.browser, content: `page ${i}`, source: url })).record.id);
    }
    return ids;
  };

  test('a derivation from 40 pages and the session that read them keep 16 sources, the authority and channels exact; the rows stay small; verify holds', async () => {
    const env = await setup();
    try {
      const { mem, db } = env;
      const ids = await pages(mem, 40);
      const rule = (await mem.write({ tenant: T, scope: 'rules', principal: P.alice, content: 'Pay only approved vendors' })).record;
      for (const id of [rule.id, ...ids]) await mem.get({ tenant: T, id, session: 's' });
      const summary = await mem.derive({ tenant: T, scope: 'notes', principal: P.agent, from: ids, content: 'what the pages said', transform: 'summarize', session: 's' });
      assert.equal(summary.taint.sources.length, MAX_TAINT_SOURCES);
      assert.deepEqual(summary.taint.sources, [...summary.taint.sources].sort());
      assert.equal(summary.taint.lowestAuthority, 'external_untrusted');
      assert.ok(summary.taint.channels.includes('undeclared_input') || summary.taint.channels.includes('self_summarization'));
      const rows = db.prepare("SELECT length(summary) AS n FROM session_log WHERE tenant = ? AND session_id = 's' ORDER BY ord").all(T) as Array<{ n: number }>;
      assert.equal(rows.length, 42);
      // 16 addresses of at most 256 characters, however many pages the session read and however long their addresses
      for (const r of rows) assert.ok(r.n < 16 * 224 + 600, `a summary of ${r.n} characters`);
      for (const s of summary.taint.sources) assert.ok(bytes(s) <= MAX_SOURCE_BYTES, s);
      assert.equal((await mem.verifyAudit({ tenant: T })).ok, true);
      const d = await mem.authorize({ tenant: T, action: { type: 'pay', args: { to: 'ACCT-1', amount: 1 } }, dependsOn: [summary.id], context: 'declared' });
      assert.equal(d.outcome, 'deny');
    } finally {
      await env.dispose();
    }
  });

  test('a session log folded before sources were bounded (every source kept) still verifies and is built on; one source added to it outside the API is named', async () => {
    const env = await setup();
    try {
      const { mem, db } = env;
      const ids = await pages(mem, 20);
      for (const id of ids) await mem.get({ tenant: T, id, session: 's' });
      // rewrite the log as the unbounded fold wrote it: each summary holds every source read so far
      db.exec('DROP TRIGGER session_log_no_update');
      const seen: string[] = [];
      const rows = db.prepare("SELECT ord, record_id, summary FROM session_log WHERE tenant = ? AND session_id = 's' ORDER BY ord").all(T) as Array<{
        ord: number;
        record_id: string;
        summary: string;
      }>;
      for (const r of rows) {
        const rec = db.prepare('SELECT taint_sources FROM records WHERE id = ?').get(r.record_id) as { taint_sources: string };
        seen.push(...(JSON.parse(rec.taint_sources) as string[]));
        const s = JSON.parse(r.summary) as { sources: string[] };
        db.prepare("UPDATE session_log SET summary = ? WHERE tenant = ? AND session_id = 's' AND ord = ?").run(JSON.stringify({ ...s, sources: [...new Set(seen)].sort() }), T, r.ord);
      }
      assert.ok((JSON.parse(rows[19]!.summary) as { sources: string[] }).sources.length === MAX_TAINT_SOURCES);
      const other = await openTemp({ dir: env.dir });
      const fresh = other.mem;
      try {
        assert.equal((await fresh.verifyAudit({ tenant: T })).ok, true, 'the unbounded fold is accepted');
        const note = (await fresh.write({ tenant: T, scope: 'notes', principal: P.agent, content: 'a note in the old session', session: 's' })).record;
        assert.equal(note.taint.lowestAuthority, 'external_untrusted');
        assert.equal(note.taint.sources.length, MAX_TAINT_SOURCES);
        assert.equal((await fresh.verifyAudit({ tenant: T })).ok, true, 'and the bounded entries appended after it');
        const last = db.prepare("SELECT summary FROM session_log WHERE tenant = ? AND session_id = 's' AND ord = 20").get(T) as { summary: string };
        const s = JSON.parse(last.summary) as { sources: string[] };
        db.prepare("UPDATE session_log SET summary = ? WHERE tenant = ? AND session_id = 's' AND ord = 20").run(JSON.stringify({ ...s, sources: [...s.sources, 'https://forged.example/'].sort() }), T);
        const tampered = await fresh.verifyAudit({ tenant: T });
        assert.equal(tampered.ok, false);
        assert.deepEqual(
          tampered.tenants[0]?.records.bad.map((b) => b.problem),
          ['session_log_entry_differs'],
        );
      } finally {
        await other.close();
      }
    } finally {
      await env.dispose();
    }
  });
});
