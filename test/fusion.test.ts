/**
 * Reciprocal rank fusion (src/core/fusion.ts): worked examples from the definition
 * (Cormack, Clarke & Büttcher 2009, k = 60) and fast-check properties — a permutation of the
 * union, sorted by score then id, deterministic, symmetric in the lists' order, a single list
 * kept as it is, a better rank never lowering a fused score.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { RRF_K, reciprocalRankFusion as rrf } from '../src/core/fusion.js';

const id: fc.Arbitrary<string> = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'r10', 'r2', 'Z');
const list = fc.array(id, { maxLength: 12 });
const lists = fc.array(list, { minLength: 1, maxLength: 4 });

describe('reciprocal rank fusion: examples', () => {
  it('scores 1/(60+rank) per list and sums', () => {
    const out = rrf([
      ['x', 'y'],
      ['y', 'z'],
    ]);
    assert.equal(RRF_K, 60);
    assert.deepEqual(
      out.map((h) => h.id),
      ['y', 'x', 'z'],
    );
    assert.ok(Math.abs((out[0]?.score ?? 0) - (1 / 62 + 1 / 61)) < 1e-15);
    assert.deepEqual(out[0]?.ranks, [2, 1]);
    assert.deepEqual(out[2]?.ranks, [null, 2]);
  });
  it('breaks equal scores by id; honours limit, k and weights; counts a repeated id once per list', () => {
    assert.deepEqual(
      rrf([['b'], ['a']]).map((h) => h.id),
      ['a', 'b'],
    );
    assert.equal(rrf([['a', 'b', 'c']], { limit: 2 }).length, 2);
    assert.deepEqual(
      rrf([['a', 'b'], ['b']], { weights: [1, 0] }).map((h) => h.id),
      ['a', 'b'],
    );
    assert.equal(rrf([['a', 'a']], { k: 0 })[0]?.score, 1);
    assert.throws(() => rrf([['a']], { k: -1 }), RangeError);
    assert.throws(() => rrf([['a']], { weights: [1, 1] }), RangeError);
    assert.deepEqual(rrf([]), []);
  });
});

describe('reciprocal rank fusion: properties', () => {
  it('returns each id of the union once, sorted by score descending then id', () => {
    fc.assert(
      fc.property(lists, (ls) => {
        const out = rrf(ls);
        assert.deepEqual(out.map((h) => h.id).sort(), [...new Set(ls.flat())].sort());
        for (let i = 1; i < out.length; i++) {
          const [p, q] = [out[i - 1], out[i]] as const;
          assert.ok(p!.score > q!.score || (p!.score === q!.score && p!.id < q!.id));
        }
      }),
    );
  });
  it('is deterministic and symmetric in the order of the lists', () => {
    fc.assert(
      fc.property(lists, fc.nat(), (ls, seed) => {
        const shuffled = [...ls].sort((a, b) => ((a.length * 31 + seed) % 7) - ((b.length * 31 + seed) % 7)).reverse();
        const strip = (xs: ReturnType<typeof rrf>) => xs.map((h) => [h.id, h.score]);
        assert.deepEqual(strip(rrf(ls)), strip(rrf(ls)));
        assert.deepEqual(strip(rrf(shuffled)), strip(rrf(ls)));
      }),
    );
  });
  it('keeps a single list in its order (first occurrences)', () => {
    fc.assert(
      fc.property(list, fc.integer({ min: 0, max: 1000 }), (l, k) => {
        assert.deepEqual(
          rrf([l], { k }).map((h) => h.id),
          [...new Set(l)],
        );
      }),
    );
  });
  it('moving an id up in one list never lowers its fused score', () => {
    fc.assert(
      fc.property(lists, fc.nat(), fc.nat(), (ls, which, pos) => {
        const li = which % ls.length;
        const l = [...new Set(ls[li])];
        if (l.length < 2) return;
        const from = 1 + (pos % (l.length - 1));
        const moved = l[from] as string;
        const better = [...l];
        [better[from - 1], better[from]] = [better[from] as string, better[from - 1] as string];
        const before = rrf(ls.map((x, i) => (i === li ? l : x))).find((h) => h.id === moved)!.score;
        const after = rrf(ls.map((x, i) => (i === li ? better : x))).find((h) => h.id === moved)!.score;
        assert.ok(after >= before);
      }),
    );
  });
  it('an id first in every list is first overall', () => {
    fc.assert(
      fc.property(lists, (ls) => {
        const top = 'TOP';
        assert.equal(rrf(ls.map((l) => [top, ...l]))[0]?.id, top);
      }),
    );
  });
});
