/**
 * Undeclared arguments on the default policy (docs/design.md § Action gate): each `high` action
 * type of the built-in policy lists the arguments it takes, so a flag riding along on a payment
 * the user asked for (`recurring: true`) is refused (`argument_not_allowed`); and below the top
 * level an object key is a value the gate traces unless it is a word that labels a value, so an
 * account smuggled in as a key (`{to: {account: "ACME-AP", acct_1Mallory: {}}}`) or a nested flag
 * is unsupplied. The plain forms of the same payment are still allowed by the user's request.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { DEFAULT_POLICY, loadPolicy, openMemory } from '../src/index.js';
import { argumentValues } from '../src/core/values.js';

const HIGH = Object.entries(DEFAULT_POLICY.actions).filter(([, a]) => a.tier === 'high');

test("every high action type of the default policy lists its arguments, those of the bench's own scenarios among them", () => {
  assert.ok(HIGH.length >= 10);
  for (const [type, a] of HIGH) assert.ok(a.arguments && a.arguments.length > 0, type);
  const text = readFileSync(new URL('../../data/scenarios/default.json', import.meta.url), 'utf8');
  const used = new Map<string, Set<string>>();
  JSON.parse(text, (_k, v: unknown) => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v) && typeof (v as { tool?: unknown }).tool === 'string') {
      const { tool, ...args } = v as Record<string, unknown>;
      for (const k of Object.keys(args)) used.set(tool as string, (used.get(tool as string) ?? new Set()).add(k));
    }
    return v;
  });
  assert.ok(used.size >= 8);
  for (const [type, a] of HIGH) for (const k of used.get(type) ?? []) assert.ok(a.arguments?.includes(k), `${type}: ${k}`);
  loadPolicy(DEFAULT_POLICY);
});

test('a plain payment the user asked for is allowed; an undeclared flag, a key that is an account, a nested flag are not', async (t) => {
  const mem = await openMemory({ path: ':memory:' });
  t.after(() => mem.close());
  await mem.registerPrincipal({ tenant: 't', id: 'alice', kind: 'user', domain: 'a' });
  await mem.registerPrincipal({ tenant: 't', id: 'agent', kind: 'agent', domain: 'g' });
  const ask = (args: Record<string, unknown>) => mem.evaluate({ tenant: 't', action: { type: 'pay', args }, requester: 'agent', userTurn: { principal: 'alice', text: 'Pay ACME-AP $100 please' } });
  for (const args of [
    { to: 'ACME-AP', amount: 100 },
    { to: 'ACME-AP', amount: 100, memo: { text: 'ACME-AP' } },
    { to: 'ACME-AP', amount: 100, memo: 'ACME-AP' },
  ]) {
    const d = await ask(args);
    assert.equal(d.outcome, 'allow', `${JSON.stringify(args)}: ${JSON.stringify(d.reasons)}`);
  }
  const flag = await ask({ to: 'ACME-AP', amount: 100, recurring: true });
  assert.equal(flag.outcome, 'deny');
  assert.ok(
    flag.reasons.some((r) => r.code === 'metadata_missing' && r.argument === 'recurring' && r.detail === 'argument_not_allowed'),
    JSON.stringify(flag.reasons),
  );
  // a destination (an argument a claim may supply) is a string or a list of them: its keys would be executor instructions
  for (const to of [{ account: 'ACME-AP' }, { account: 'ACME-AP', also_pay: 'ACME-AP' }, ['ACME-AP', { account: 'ACME-AP' }]]) {
    const d = await ask({ to, amount: 100 });
    assert.equal(d.outcome, 'deny', JSON.stringify(to));
    assert.ok(
      d.reasons.some((r) => r.code === 'metadata_missing' && r.argument === 'to' && r.detail === 'destination_not_scalar'),
      JSON.stringify(d.reasons),
    );
  }
  for (const [args, path] of [
    [{ to: 'ACME-AP', amount: 100, memo: { text: 'ACME-AP', acct_1Mallory: {} } }, 'memo.acct_1Mallory{key}'],
    [{ to: 'ACME-AP', amount: 100, memo: { text: 'ACME-AP', recurring: true } }, 'memo.recurring{key}'],
    [{ to: 'ACME-AP', amount: 100, memo: { text: 'ACME-AP', mallory: { x: null } } }, 'memo.mallory.x{key}'],
  ] as const) {
    const d = await ask(args);
    assert.notEqual(d.outcome, 'allow', JSON.stringify(args));
    assert.ok(
      d.reasons.some((r) => r.argument === path),
      `${path}: ${JSON.stringify(d.reasons)}`,
    );
  }
});

test('which object keys are values: any key that is no plain identifier; below the top level, one with a digit or labelling nothing', () => {
  const keys = (args: Record<string, unknown>): string[] =>
    argumentValues(args)
      .filter((v) => v.argument.endsWith('{key}'))
      .map((v) => v.value);
  assert.deepEqual(keys({ to: { account: 'A', line_items: [{ sku: 'X1', qty: 2 }] } }), []);
  assert.deepEqual(keys({ to: { account: 'A', acct_1Mallory: {}, recurring: true, note: '', ok: 'v' } }), ['acct_1Mallory', 'recurring', 'note']);
  assert.deepEqual(keys({ to: { acct_2: 'A' } }), ['acct_2'], 'a key with a digit is a value even when it labels one');
  assert.deepEqual(keys({ recurring: true, 'ACCT-9': 1 }), ['ACCT-9'], 'top-level names are the policy allow-list’s to judge');
  const order = argumentValues({ to: { acct_7: 'A' } }).map((v) => v.argument);
  assert.deepEqual(order, ['to.acct_7{key}', 'to.acct_7'], 'a key comes before what it labels');
});
