/**
 * Search ranking against a reference (issue 16, finding 4): on random small corpora full of BM25
 * ties — 40 to 120 records of one or two words over a five-word vocabulary, some expired, some erased, some in
 * another scope — the top `limit` of `driver.search` is, for every limit, the first `limit` of
 * every matching row ranked in JavaScript (score, then id). The reference's match set is computed
 * from the records written, so the row filter (scope, active, unexpired) is checked too. Small
 * limits make the SQLite driver's window smaller than the matches, so every path of its window
 * (decided, tie at the boundary, filtered out) is taken.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { SearchHit } from '../../src/store/driver.js';
import { manualClock } from '../helpers.js';
import type { StoreFactory } from './common.js';

const WORDS = ['acct', 'pay', 'vendor', 'north', 'heron'] as const;
const QUERIES = ['acct', 'pay', 'heron north', 'vendor acct pay', 'absent', 'north'] as const;
const WRITTEN_AT = '2025-01-01T00:00:00.000Z';
const SEARCH_AT = '2025-06-01T00:00:00.000Z';

interface Doc {
  readonly words: string[];
  readonly otherScope: boolean;
  readonly expired: boolean;
  readonly erased: boolean;
}

const docArb: fc.Arbitrary<Doc> = fc.record({
  words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 2 }),
  otherScope: fc.nat(9).map((n) => n < 3),
  expired: fc.nat(9).map((n) => n < 2),
  erased: fc.nat(9).map((n) => n < 1),
});

/**
 * A corpus: random records, then a block that forces the rarer paths — `n` identical records
 * (every score ties) and `m` expired or erased ones that outrank the live matches.
 */
const corpusArb: fc.Arbitrary<Doc[]> = fc
  .tuple(fc.array(docArb, { minLength: 20, maxLength: 80, size: 'max' }), fc.nat(40), fc.nat(30), fc.boolean())
  .map(([docs, n, m, erase]) => [
    ...docs,
    ...Array.from({ length: n }, (): Doc => ({ words: ['acct', 'pay'], otherScope: false, expired: false, erased: false })),
    ...Array.from({ length: m }, (): Doc => ({ words: ['heron'], otherScope: false, expired: !erase, erased: erase })),
  ]);

/** Every matching record's hit, ranked as search promises: score (higher first), then id. */
function reference(hits: readonly SearchHit[]): SearchHit[] {
  return [...hits].sort((a, b) => b.score - a.score || (a.record.id < b.record.id ? -1 : a.record.id > b.record.id ? 1 : 0));
}

const brief = (hits: readonly SearchHit[]): Array<[string, number]> => hits.map((h) => [h.record.id, h.score]);

/** The ranking cases, against the factory's store. */
export function searchRanking(f: StoreFactory): void {
  describe('search ranks exactly like ranking every match', () => {
    test('top-k of random corpora with many ties equals the reference, for every k', { timeout: 300_000 }, async (t) => {
      const clock = manualClock(WRITTEN_AT);
      const env = await f.open({ clock: clock.now });
      t.after(env.dispose);
      const { mem } = env;
      let run = 0;
      await fc.assert(
        fc.asyncProperty(corpusArb, async (docs) => {
          const tenant = `rank${run++}`;
          await mem.registerPrincipal({ tenant, id: 'alice', kind: 'user', domain: 'alice' });
          const live = new Map<string, Set<string>>();
          for (const d of docs) {
            const words = d.words;
            const expiresAt = d.expired ? '2025-02-01T00:00:00.000Z' : undefined;
            const rec = (await mem.write({ tenant, scope: d.otherScope ? 'other' : 'main', principal: 'alice', content: words.join(' '), ...(expiresAt ? { expiresAt } : {}) })).record;
            if (d.erased) await mem.delete({ tenant, id: rec.id });
            else if (!d.otherScope && !d.expired) live.set(rec.id, new Set(words));
          }
          for (const q of QUERIES) {
            const terms = q.split(' ');
            const all = await mem.driver.search(tenant, 'main', q, 10_000, SEARCH_AT);
            const expected = [...live].filter(([, words]) => terms.some((w) => words.has(w))).map(([id]) => id);
            assert.deepEqual(all.map((h) => h.record.id).sort(), expected.sort(), `${q}: the matches`);
            const ranked = reference(all);
            for (let k = 1; k <= ranked.length + 1; k++) {
              assert.deepEqual(brief(await mem.driver.search(tenant, 'main', q, k, SEARCH_AT)), brief(ranked.slice(0, k)), `${q}, limit ${k}`);
            }
          }
        }),
        { numRuns: 12, seed: 1616 },
      );
    });
  });
}
