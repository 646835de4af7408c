/**
 * Repeated keys in a JSON text (src/core/json-keys.ts): the first key an object repeats is found,
 * keys compared as the strings they decode to; the same key in different objects, a key-like
 * string among values or inside a string, and arrays are no repeat.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { duplicateKey } from '../src/core/json-keys.js';

test('the first key an object repeats, after decoding, with its offset', () => {
  const text = '{"action":{"type":"pay","args":{"to":"A","to":"B"}}}';
  assert.deepEqual(duplicateKey(text), { key: 'to', offset: text.lastIndexOf('"to"') });
  assert.equal(duplicateKey('{"to":"A","\\u0074o":"B"}')?.key, 'to');
  assert.equal(duplicateKey('{"a":{"x":1},"b":[{"y":1,"y":2}]}')?.key, 'y');
  assert.equal(duplicateKey('{"a":1,"b":{"c":1},"a":2}')?.key, 'a', 'a repeat after a nested object');
  assert.equal(duplicateKey(`{"${'k'.repeat(100)}":1,"${'k'.repeat(100)}":2}`)?.key, `${'k'.repeat(64)}…`);
});

test('no repeat: equal keys in different objects, key-like values and strings, arrays', () => {
  for (const text of [
    '{"to":"A","args":{"to":"B"}}',
    '[{"to":1},{"to":2}]',
    '{"a":"to","b":"to","c":["to","to"]}',
    '{"s":"\\"to\\":1,\\"to\\":2","t":"{\\"x\\":1}"}',
    '{"to":"A","To":"B"}',
    '"to"',
    '{}',
  ]) {
    assert.equal(duplicateKey(text), null, text);
  }
});
