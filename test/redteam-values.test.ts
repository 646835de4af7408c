/**
 * Value-level provenance through the library on real SQLite files: the conformance cases of
 * test/conformance/values.ts (exact identifiers, exact amounts, the resource as a value, marked
 * products only), and the matcher's cost — a 1,000,000-character record in the session plus a
 * decision with 200 short argument values, which walked every occurrence of every value.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { valueCases } from './conformance/values.js';
import { P, T, setup } from './helpers.js';
import { sqliteStore } from './support/stores.js';

valueCases(sqliteStore);

test('a 1,000,000-character record in the session and 200 argument values: one linear pass (timing reported, not asserted)', async (t) => {
  const env = await setup();
  t.after(env.dispose);
  const { mem } = env;
  const S = 'ses-flood';
  await mem.write({ tenant: T, scope: 'web', principal: P.mallory, content: 'a'.repeat(1_000_000), source: 'https://flood.example', session: S });
  // within the action limits (256 values, 16 KiB): 200 values of 2–71 characters
  const items = Array.from({ length: 200 }, (_, i) => 'a'.repeat(2 + (i % 70)));
  const t0 = performance.now();
  const d = await mem.authorize({ tenant: T, action: { type: 'pay', args: { to: 'ACCT-1', amount: 1, items } }, session: S });
  const ms = performance.now() - t0;
  assert.equal(d.outcome, 'deny');
  assert.ok(
    d.values.filter((v) => v.argument.startsWith('items')).every((v) => v.recordIds.length === 0),
    'no value is inside the run of a',
  );
  // eslint-disable-next-line no-console -- reported for the load suite's owner
  console.log(`# authorize with a 1,000,000-character session record and 200 values: ${ms.toFixed(0)} ms`);
});
