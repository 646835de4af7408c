/**
 * The fast paths of input validation agree with the full ones: `toPlainJson` (a walk without
 * paths, then the walk with paths only to name a refusal) and `authorizeFast` (accepts a subset
 * of what `schemas.authorize` accepts, with the same output).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { authorizeFast, schemas, toPlainJson, toPlainJsonWithPaths } from '../src/api/validation.js';

const weird = fc.oneof(
  fc.constant(Number.NaN),
  fc.constant(Number.POSITIVE_INFINITY),
  fc.constant(undefined),
  fc.constant('\uD800x'),
  fc.constant(() => 1),
  fc.constant(Symbol('s')),
  fc.constant(10n),
  fc.constant(new Date(0)),
  fc.constant({ toJSON: () => 1 }),
  fc.constant(JSON.parse('{"__proto__": 1}') as unknown),
  fc.constant({ constructor: 1 }),
  fc.constant(Object.create(null) as unknown),
);
const value = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: 'small' }, fc.jsonValue({ maxDepth: 2 }), weird, fc.array(tie('v'), { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 4 }), tie('v'), { maxKeys: 3 })),
})).v;

test('toPlainJson: the fast walk accepts and refuses exactly what the walk with paths does, with the same copy', () => {
  fc.assert(
    fc.property(value, (v) => {
      assert.deepEqual(toPlainJson(v), toPlainJsonWithPaths(v));
    }),
    { numRuns: 2000 },
  );
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  assert.deepEqual(toPlainJson({ x: cyclic }), toPlainJsonWithPaths({ x: cyclic }));
  assert.equal(toPlainJson({ x: cyclic }).ok, false);
  let deep: unknown = 1;
  for (let i = 0; i < 70; i++) deep = [deep];
  assert.deepEqual(toPlainJson(deep), toPlainJsonWithPaths(deep));
  assert.equal(toPlainJson(deep).ok, false);
  const shared = { a: 1 };
  assert.deepEqual(toPlainJson([shared, shared]), { ok: true, value: [{ a: 1 }, { a: 1 }] });
});

const ident = fc.oneof(
  { arbitrary: fc.constantFrom('acme', 'mem_1', 'ses_x', 'pay', 'x'.repeat(200), 'é ü'), weight: 8 },
  { arbitrary: fc.constantFrom('', 'a\u0001b', 'x'.repeat(201), 'a\u007f'), weight: 1 },
  { arbitrary: fc.string({ maxLength: 6 }), weight: 1 },
);
const maybe = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(a, { nil: undefined });
const authorizeInput = fc.record(
  {
    tenant: fc.oneof({ arbitrary: ident, weight: 9 }, { arbitrary: fc.integer(), weight: 1 }),
    action: fc.oneof(
      {
        arbitrary: fc.record(
          {
            type: ident,
            args: maybe(fc.oneof(fc.dictionary(fc.string({ maxLength: 3 }), fc.jsonValue({ maxDepth: 2 })), fc.array(fc.integer()), fc.constant(null))),
            resource: maybe(fc.oneof(fc.string({ maxLength: 3 }), fc.constant('a\u0000'), fc.constant('r'.repeat(2001)))),
          },
          { requiredKeys: ['type'] },
        ),
        weight: 10,
      },
      { arbitrary: fc.constant([]), weight: 1 },
      { arbitrary: fc.constant({ type: 'pay', extra: 1 }), weight: 1 },
    ),
    session: maybe(ident),
    dependsOn: maybe(fc.oneof(fc.array(ident, { maxLength: 3 }), fc.constant('mem_1'), fc.constant(Array.from({ length: 1001 }, (_, i) => `m${i}`)))),
    userTurn: maybe(
      fc.oneof(
        fc.record({ principal: ident, text: fc.oneof(fc.string({ maxLength: 5 }), fc.constant('t'.repeat(100_001))) }, { requiredKeys: [] }),
        fc.constant({ principal: 'alice', text: 'x', more: 1 }),
      ),
    ),
    context: maybe(fc.constantFrom('session', 'declared', 'all', 1)),
    confirmationId: maybe(ident),
    extra: fc.oneof({ arbitrary: fc.constant(undefined), weight: 9 }, { arbitrary: fc.constant(1), weight: 1 }),
  },
  { requiredKeys: ['tenant', 'action'] },
);

test('authorizeFast: accepts only what schemas.authorize accepts, with the same output', () => {
  let fastHits = 0;
  fc.assert(
    fc.property(authorizeInput, (input) => {
      const plain = toPlainJson(input);
      if (!plain.ok) return;
      const z = schemas.authorize.safeParse(structuredClone(plain.value));
      const fast = authorizeFast(structuredClone(plain.value));
      if (fast === null) return;
      fastHits += 1;
      assert.ok(z.success, `fast path accepted what zod refuses: ${JSON.stringify(input)}`);
      assert.deepEqual(fast, z.data);
    }),
    { numRuns: 5000 },
  );
  assert.ok(fastHits > 20, `the fast path was taken only ${fastHits} times`);
  const ok = { tenant: 'acme', action: { type: 'pay', args: { to: 'v', amount: 5 } }, dependsOn: ['mem_1'], context: 'declared' };
  assert.deepEqual(authorizeFast(structuredClone(ok)), schemas.authorize.parse(ok));
  assert.deepEqual(authorizeFast({ tenant: 'acme', action: { type: 'pay' } }), { tenant: 'acme', action: { type: 'pay', args: {} } });
});

test('toPlainJson: an array with holes is refused by both walks (JSON would store null, the argument hash skips the hole)', () => {
  // eslint-disable-next-line no-sparse-arrays
  const holey = { to: ['a', , 'b'] };
  assert.equal(toPlainJsonWithPaths(holey).ok, false);
  assert.deepEqual(toPlainJson(holey), toPlainJsonWithPaths(holey));
  const r = toPlainJson({ x: [1, 2, , 4] }); // eslint-disable-line no-sparse-arrays
  assert.equal(r.ok, false);
  if (!r.ok) assert.equal(r.path, 'x[2]');
});
