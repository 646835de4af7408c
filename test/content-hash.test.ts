/** Keyed content hashes (src/core/content-hash.ts): format, legacy plain SHA-256, key required. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sha256Hex } from '../src/core/canonical.js';
import { contentHashMatches, contentHashOf, isKeyedHash, newContentKey } from '../src/core/content-hash.js';

test('a keyed hash is versioned, differs per key, and verifies only with its key; a legacy plain hash still verifies', () => {
  const k1 = newContentKey();
  const k2 = newContentKey();
  assert.match(k1, /^[0-9a-f]{64}$/);
  const h = contentHashOf('balance: 500', k1);
  assert.match(h, /^hmac-sha256:[0-9a-f]{64}$/);
  assert.ok(isKeyedHash(h));
  assert.notEqual(h, contentHashOf('balance: 500', k2));
  assert.equal(contentHashMatches('balance: 500', h, k1), true);
  assert.equal(contentHashMatches('balance: 501', h, k1), false);
  assert.equal(contentHashMatches('balance: 500', h, k2), false);
  assert.equal(contentHashMatches('balance: 500', h, null), false, 'no key (shredded): cannot be checked');
  const legacy = sha256Hex('balance: 500');
  assert.equal(contentHashOf('balance: 500', null), legacy);
  assert.ok(!isKeyedHash(legacy));
  assert.equal(contentHashMatches('balance: 500', legacy, k1), true);
  assert.equal(contentHashMatches('balance: 500', legacy, null), true);
  assert.equal(contentHashMatches('balance: 501', legacy, null), false);
});
