/**
 * src/core/json-numbers.ts (number literals a double does not hold) and src/core/argument-limits.ts
 * through the library (`Memory.evaluate`, `Memory.confirm` refuse ARGS_TOO_LARGE).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inexactNumberLiteral } from '../src/core/json-numbers.js';
import { MAX_ARGUMENT_VALUES } from '../src/core/argument-limits.js';
import { openMemory } from '../src/api/open.js';
import { tempDir } from './support/tmp.js';

test('inexactNumberLiteral: rounded, unsafe and overflowing literals outside strings; exact ones pass', () => {
  const why = (json: string): string | null => inexactNumberLiteral(json)?.why ?? null;
  assert.equal(why('{"a":6228480012345677999}'), 'rounded');
  assert.equal(why('[500.000000000000001]'), 'rounded');
  assert.equal(why('[1e-400]'), 'rounded');
  assert.equal(why('[-9007199254740992]'), 'unsafe_integer');
  assert.equal(why('[1e21]'), 'unsafe_integer');
  assert.equal(why('[1e400]'), 'overflow');
  assert.equal(why('[-1e99999999999999999999]'), 'overflow');
  for (const ok of ['[0.1, 1e2, 1.50, -0, 0, 0.0e5, 5e-324, 9007199254740991, -12.25]', '{"s":"6228480012345677999 \\" 1e400"}', '{"k\\\\":1}']) assert.equal(inexactNumberLiteral(ok), null, ok);
  const bad = inexactNumberLiteral('{"s":"1e400","n":6228480012345677999}');
  assert.deepEqual(bad, { literal: '6228480012345677999', offset: 17, parsed: '6228480012345678000', why: 'rounded' });
  const long = inexactNumberLiteral(`[1.${'1'.repeat(200)}]`);
  assert.equal(long?.literal.length, 65);
});

test('the library refuses arguments over the limits for evaluate, authorize and confirm alike (ARGS_TOO_LARGE)', async () => {
  const mem = await openMemory({ path: `${tempDir()}/m.db` });
  try {
    await mem.registerPrincipal({ tenant: 't', id: 'u', kind: 'user', domain: 'u' });
    const items = Array.from({ length: MAX_ARGUMENT_VALUES + 1 }, (_, i) => `v${i}`);
    const refused = (e: unknown): boolean => (e as { code?: string }).code === 'ARGS_TOO_LARGE';
    await assert.rejects(mem.evaluate({ tenant: 't', action: { type: 'send', args: { items } } }), refused);
    await assert.rejects(mem.authorize({ tenant: 't', action: { type: 'send', args: { items } } }), refused);
    await assert.rejects(mem.confirm({ tenant: 't', principal: 'u', action: { type: 'send', args: { items } } }), refused);
    const e = await mem.evaluate({ tenant: 't', action: { type: 'send', args: { items: items.slice(1) } } });
    assert.equal(e.values.length, MAX_ARGUMENT_VALUES);
    assert.equal((await mem.listDecisions({ tenant: 't' })).length, 0);
  } finally {
    await mem.close();
  }
});
