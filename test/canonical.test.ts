/**
 * canonicalJson's fast path must be byte-identical to the `canonicalize` package (RFC 8785):
 * the audit chain's hashes depend on it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { canonicalJson, canonicalJsonReference, sha256Hex } from '../src/core/canonical.js';
import { createHash } from 'node:crypto';

function same(v: unknown): void {
  let expected: string | undefined;
  let expectedError: unknown = null;
  try {
    expected = canonicalJsonReference(v);
  } catch (e) {
    expectedError = e;
  }
  if (expectedError !== null || expected === undefined) {
    assert.throws(() => canonicalJson(v));
    return;
  }
  assert.equal(canonicalJson(v), expected);
}

test('canonicalJson equals the canonicalize package on arbitrary JSON values', () => {
  fc.assert(
    fc.property(fc.jsonValue(), (v) => same(v)),
    { numRuns: 3000 },
  );
});

test('canonicalJson equals the canonicalize package on strings with escapes, surrogates and odd keys', () => {
  // any UTF-16 code units, lone surrogates included
  const str = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 12 }).map((a) => String.fromCharCode(...a));
  fc.assert(
    fc.property(fc.dictionary(str, fc.oneof(str, fc.double(), fc.integer(), fc.constant(undefined), fc.array(fc.oneof(str, fc.constant(undefined))))), (v) => same(v)),
    { numRuns: 3000 },
  );
});

test('canonicalJson equals the canonicalize package on exotic values (falls back to it)', () => {
  for (const v of [
    { d: new Date(0) },
    [1, undefined, 3],
    { a: undefined, b: 1 },
    { n: -0, big: 1e21, small: 1e-7, f: 0.1 + 0.2 },
    '\u2028\u2029\u007f',
    'lone \ud800 surrogate',
    { toJSON: () => ({ z: 1, a: 2 }) },
  ]) {
    same(v);
  }
  assert.throws(() => canonicalJson(undefined), TypeError);
  assert.throws(() => canonicalJson({ x: Number.NaN }));
  assert.throws(() => canonicalJson([Number.POSITIVE_INFINITY]));
});

test('sha256Hex is SHA-256 hex of UTF-8', () => {
  fc.assert(fc.property(fc.string({ unit: 'grapheme' }), (s) => assert.equal(sha256Hex(s), createHash('sha256').update(s, 'utf8').digest('hex'))));
});
