/**
 * Property tests (fast-check) of the pure core: the authority lattice and the gate. The store
 * properties (random operation sequences, audit tamper detection) are in
 * test/conformance/properties.ts and run on every driver.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { AUTHORITIES, type Authority, type Confirmation, type DependencyFacts, argsHashOf, atLeast, decide, maxAuthority, minAuthority, rank } from '../src/index.js';

const TRUSTED: Authority = 'trusted_tool_verified';

// ------------------------------------------------------------------ pure core

const authArb = fc.constantFrom(...AUTHORITIES);

describe('authority lattice', () => {
  test('minAuthority is a meet: commutative, associative, idempotent, ≤ each argument', () => {
    fc.assert(
      fc.property(authArb, authArb, authArb, (a, b, c) => {
        assert.equal(minAuthority(a, b), minAuthority(b, a));
        assert.equal(minAuthority(minAuthority(a, b), c), minAuthority(a, minAuthority(b, c)));
        assert.equal(minAuthority(a, a), a);
        const m = minAuthority(a, b, c);
        for (const x of [a, b, c]) assert.ok(rank(m) <= rank(x));
        assert.ok([a, b, c].includes(m), 'the meet of a total order is one of its arguments');
        assert.ok(atLeast(a, minAuthority(a, b)));
        assert.equal(minAuthority(a, 'system_policy'), a, 'top is the identity');
        assert.equal(minAuthority(a, 'external_untrusted'), 'external_untrusted', 'bottom absorbs');
        // absorption with the join
        assert.equal(minAuthority(a, maxAuthority(a, b)), a);
        assert.equal(maxAuthority(a, minAuthority(a, b)), a);
      }),
      { numRuns: 200 },
    );
  });

  test('minAuthority over any list equals the lowest rank', () => {
    fc.assert(
      fc.property(fc.array(authArb, { maxLength: 10 }), (xs) => {
        const m = minAuthority(...xs);
        if (xs.length === 0) assert.equal(m, 'system_policy');
        else assert.equal(rank(m), Math.min(...xs.map(rank)));
      }),
      { numRuns: 200 },
    );
  });
});

const trustedArb = fc.constantFrom<Authority>('trusted_tool_verified', 'user_confirmed', 'system_policy');
const untrustedArb = fc.constantFrom<Authority>('external_untrusted', 'model_inferred');
const whyArb = fc.subarray(['declared', 'value', 'context'] as const, { minLength: 1 });
const depArb = (auth: fc.Arbitrary<Authority>): fc.Arbitrary<DependencyFacts> =>
  fc.record({
    memoryId: fc.string({ minLength: 1, maxLength: 6 }).map((s) => `m_${s}`),
    why: whyArb,
    lowestAuthority: auth,
    actionAuthority: auth,
    status: fc.constant('active' as const),
    corroborationAttempted: fc.boolean(),
    verified: fc.constant(true),
  });
const actionArb = fc.record({
  type: fc.constantFrom('pay', 'send_email', 'deploy', 'unknown_tool'),
  args: fc.dictionary(fc.constantFrom('to', 'amount', 'memo'), fc.oneof(fc.string({ maxLength: 8 }), fc.integer())),
});
const baseGate = (action: { type: string; args: Record<string, unknown> }) => ({
  action,
  argsHash: argsHashOf(action.args),
  now: '2025-06-01T00:00:00.000Z',
  values: [],
  confirmations: [],
  citedConfirmationId: null,
  threshold: TRUSTED,
});

describe('decide properties', () => {
  test('all dependencies trusted and no values → allow (any tier, any mode)', () => {
    fc.assert(
      fc.property(
        actionArb,
        fc.array(depArb(trustedArb), { maxLength: 6 }),
        fc.constantFrom('read_only' as const, 'low' as const, 'high' as const),
        fc.constantFrom('observe' as const, 'enforce' as const),
        (action, deps, tier, mode) => {
          const r = decide({ ...baseGate(action), tier, mode, dependencies: deps });
          assert.equal(r.outcome, 'allow');
          assert.deepEqual(r.reasons, []);
        },
      ),
      { numRuns: 200 },
    );
  });

  test('any untrusted dependency and no confirmation → a high action is never allowed', () => {
    fc.assert(
      fc.property(
        actionArb,
        fc.array(depArb(fc.constantFrom(...AUTHORITIES)), { maxLength: 5 }),
        depArb(untrustedArb),
        fc.nat(),
        fc.constantFrom('observe' as const, 'enforce' as const),
        (action, deps, bad, pos, mode) => {
          const all = [...deps];
          all.splice(pos % (deps.length + 1), 0, bad);
          const r = decide({ ...baseGate(action), tier: 'high', mode, dependencies: all });
          assert.notEqual(r.outcome, 'allow');
          assert.equal(r.outcome, mode === 'observe' ? 'would_deny' : 'deny');
          assert.equal(r.confirmationId, null);
          assert.ok(r.reasons.some((x) => (x.code === 'untrusted_origin' || x.code === 'missing_corroboration') && x.memoryIds.includes(bad.memoryId)));
        },
      ),
      { numRuns: 200 },
    );
  });

  test('a confirmation only ever lifts a high denial when it matches the exact action, unexpired and unused', () => {
    const confArb = fc.record({
      id: fc.constant('c'),
      tenant: fc.constant('t'),
      principalId: fc.constant('alice'),
      actionType: fc.constantFrom('pay', 'send_email', 'deploy', 'unknown_tool'),
      resource: fc.constant(null),
      argsHash: fc.constant(''),
      args: fc.constant(null),
      memoryIds: fc.constant(null),
      expiresAt: fc.constantFrom('2025-05-31T00:00:00.000Z', '2025-06-01T00:00:00.000Z', '2025-06-02T00:00:00.000Z'),
      maxUses: fc.integer({ min: 1, max: 3 }),
      createdAt: fc.constantFrom('2025-05-30T00:00:00.000Z', '2025-05-31T12:00:00.000Z'),
    });
    fc.assert(
      fc.property(
        actionArb,
        depArb(untrustedArb),
        fc.array(fc.tuple(confArb, fc.nat({ max: 3 }), fc.boolean()), { maxLength: 4 }),
        fc.option(fc.constantFrom('c0', 'c1', 'c2', 'c3', 'c9'), { nil: null }),
        (action, bad, cands, cited) => {
          // ids are unique per store: c0, c1, …
          const confirmations = cands.map(([c, used, exact], i) => ({
            confirmation: { ...c, id: `c${i}`, argsHash: exact ? argsHashOf(action.args) : argsHashOf({ other: 1 }) } as Confirmation,
            usesSoFar: used,
          }));
          const g = { ...baseGate(action), tier: 'high' as const, mode: 'enforce' as const, dependencies: [bad], confirmations, citedConfirmationId: cited };
          const r = decide(g);
          if (r.outcome === 'allow') {
            const used = confirmations.find((c) => c.confirmation.id === r.confirmationId);
            assert.ok(used);
            assert.equal(used.confirmation.actionType, action.type);
            assert.equal(used.confirmation.argsHash, g.argsHash);
            assert.ok(used.confirmation.expiresAt > g.now);
            assert.ok(used.usesSoFar < used.confirmation.maxUses);
            if (cited !== null) assert.equal(r.confirmationId, cited);
          } else {
            assert.equal(r.confirmationId, null);
          }
          assert.deepEqual(decide(g), r, 'decide is a pure function');
        },
      ),
      { numRuns: 200 },
    );
  });
});
