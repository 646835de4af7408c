/**
 * An action argument holding an array with a hole. JSON (what the decision and the
 * audit entry store) reads the hole as null, while the arguments hash skipped it — so a
 * confirmation for `['a', 'b']` matched an action on `['a', <hole>, 'b']`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { T, P, expectCode, setup } from './helpers.js';

test('gate: a confirmation for [a, b] does not authorize an action whose argument is [a, <hole>, b] (refused as invalid input)', async () => {
  const env = await setup();
  try {
    const { mem } = env;
    await mem.confirm({ tenant: T, principal: P.alice, action: { type: 'send_email', args: { to: ['a@x.example', 'b@x.example'] } } });
    // eslint-disable-next-line no-sparse-arrays
    const holey = ['a@x.example', , 'b@x.example'];
    await expectCode(() => mem.authorize({ tenant: T, action: { type: 'send_email', args: { to: holey } } }), 'INVALID_ARGUMENT');
    await expectCode(() => mem.confirm({ tenant: T, principal: P.alice, action: { type: 'send_email', args: { to: holey } } }), 'INVALID_ARGUMENT');
    // the exact arguments are still allowed by the confirmation
    const d = await mem.authorize({ tenant: T, action: { type: 'send_email', args: { to: ['a@x.example', 'b@x.example'] } } });
    assert.equal(d.outcome === 'allow' || d.outcome === 'would_deny', true);
    assert.equal((await mem.verifyAudit({ tenant: T })).ok, true);
  } finally {
    await env.dispose();
  }
});
