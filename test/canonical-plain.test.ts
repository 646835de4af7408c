/**
 * `canonicalJsonOfPlain` (the audit chain's hash without a JSON round trip) agrees with the
 * round trip it replaces, and refuses what that round trip would change.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { canonicalJson, canonicalJsonOfPlain } from '../src/core/canonical.js';
import { entryHash, nextEntry, payloadJson } from '../src/core/audit.js';

const odd = fc.constantFrom<unknown>(
  undefined,
  -0,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  new Date(0),
  new String('ab'),
  new Number(5),
  new Map([[1, 2]]),
  Object.create(null),
  { toJSON: () => 'x' },
  () => 1,
  Symbol('s'),
  [1, , 3],
  '\uD800',
  'q"\\\n',
);
const value = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: 'small' }, fc.jsonValue({ maxDepth: 2 }), odd, fc.array(tie('v'), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 4 }), tie('v'), { maxKeys: 3 })),
})).v;

test('canonicalJsonOfPlain: when it answers, it is the canonical JSON of the JSON round trip, which gives the value back deep-equal', () => {
  let answered = 0;
  fc.assert(
    fc.property(value, (v) => {
      const got = canonicalJsonOfPlain(v);
      if (got === null) return;
      answered += 1;
      const back = JSON.parse(JSON.stringify(v)) as unknown;
      assert.equal(got, canonicalJson(back));
      assert.deepStrictEqual(back, v);
    }),
    { numRuns: 3000 },
  );
  assert.ok(answered > 100);
  for (const v of [undefined, -0, new Date(0), new String('ab'), { a: undefined }, [undefined], Object.create(null), [1, , 3]]) assert.equal(canonicalJsonOfPlain({ v }), null);
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.equal(canonicalJsonOfPlain(cyclic), null);
});

test('nextEntry: a plain payload and one that needs the round trip hash as stored', () => {
  for (const payload of [
    { a: 1, b: ['x', null, true], c: { d: 'é' } },
    { a: undefined, b: new Date(0), c: -0 },
  ]) {
    const e = nextEntry('t', { seq: 4, hash: 'h' }, 'decide', payload as Record<string, unknown>, 'v1');
    const stored = JSON.parse(JSON.stringify(e.payload)) as Record<string, unknown>;
    assert.equal(e.hash, entryHash({ seq: 5, prevHash: 'h', op: 'decide', payload: stored, policyVersion: 'v1' }));
    // what a driver stores parses back to what was hashed
    assert.deepEqual(JSON.parse(payloadJson(e)), stored);
  }
  // escaping in the envelope's own strings
  const odd = nextEntry('t', { seq: 9, hash: 'h"\\\u0001' }, 'decide', { x: 1 }, 'v"1\u2028');
  assert.equal(odd.hash, entryHash({ seq: 10, prevHash: 'h"\\\u0001', op: 'decide', payload: { x: 1 }, policyVersion: 'v"1\u2028' }));
  assert.equal(
    nextEntry('t', null, 'write', { a: [1, 'b'] }, 'v').hash,
    entryHash({ seq: 1, prevHash: nextEntry('t', null, 'write', { a: 1 }, 'v').prevHash, op: 'write', payload: { a: [1, 'b'] }, policyVersion: 'v' }),
  );
});
