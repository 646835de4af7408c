/**
 * The labelled retrieval set and its scorer: the committed data/retrieval-eval/retrieval-set.json
 * is exactly what the seeded generator writes (regenerate with `node dist/perf/retrieval-data.js`),
 * it has ≥ 2,000 records and ≥ 200 queries with valid labels, queries share few words with their
 * targets, and recall@k / MRR are computed as defined.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { generateRetrievalSet, sharedWords } from '../src/bench/retrieval/dataset.js';
import { scoreRetrieval } from '../src/bench/retrieval/score.js';
import { FIRST_NAMES, LAST_NAMES } from '../src/bench/retrieval/topics.js';

const NAMES = new Set([...FIRST_NAMES, ...LAST_NAMES].map((n) => n.toLowerCase()));

const FILE = new URL('../../data/retrieval-eval/retrieval-set.json', import.meta.url);

describe('the retrieval set', () => {
  const set = generateRetrievalSet();
  it('is the committed file, byte for byte (deterministic generator)', () => {
    assert.equal(readFileSync(FILE, 'utf8'), `${JSON.stringify(set, null, 1)}\n`);
    assert.notDeepEqual(generateRetrievalSet(1).queries, set.queries, 'self-check: the seed matters');
  });
  it('has at least 2,000 records and 200 queries, each query labelled with existing records', () => {
    assert.ok(set.records.length >= 2000 && set.queries.length >= 200);
    const ids = new Set(set.records.map((r) => r.id));
    assert.equal(ids.size, set.records.length);
    assert.equal(new Set(set.queries.map((q) => q.text + q.relevant.join())).size, set.queries.length);
    for (const q of set.queries) assert.ok(q.relevant.length > 0 && q.relevant.every((id) => ids.has(id)), q.id);
  });
  it('paraphrases: a query shares at most names and one other word with its target, and none in most queries', () => {
    const byId = new Map(set.records.map((r) => [r.id, r.content]));
    let withOther = 0;
    for (const q of set.queries) {
      const other = sharedWords(q.text, byId.get(q.relevant[0] as string) as string).filter((w) => !NAMES.has(w));
      assert.ok(other.length <= 1, `${q.id} shares ${other.join(', ')}`);
      if (other.length > 0) withOther++;
    }
    assert.ok(withOther / set.queries.length < 0.05, `${withOther} queries share a word besides the name`);
  });
});

describe('the scorer', () => {
  it('computes recall@1/5/10 and MRR', () => {
    const s = scoreRetrieval([
      { ranked: ['a', 'b'], relevant: ['a'] },
      { ranked: ['x', 'y', 'z', 'w', 'v', 'b'], relevant: ['b'] },
      { ranked: ['x', 'c'], relevant: ['c', 'd'] },
      { ranked: [], relevant: ['e'] },
    ]);
    assert.equal(s.queries, 4);
    assert.equal(s.recallAt1, 1 / 4);
    assert.equal(s.recallAt5, (1 + 0 + 0.5 + 0) / 4);
    assert.equal(s.recallAt10, (1 + 1 + 0.5 + 0) / 4);
    assert.equal(s.mrr, (1 + 1 / 6 + 1 / 2 + 0) / 4);
    assert.throws(() => scoreRetrieval([{ ranked: [], relevant: [] }]), RangeError);
    assert.equal(scoreRetrieval([]).mrr, 0);
  });
});
