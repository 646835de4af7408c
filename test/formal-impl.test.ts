/**
 * Smoke test of the exhaustive implementation check (formal/impl/enumerate.ts) at a small depth,
 * so that `npm test` notices when the enumerator and the Memory API drift apart. The full run is
 * `npm run formal`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PROFILES, explore } from '../formal/impl/enumerate.js';

test('enumerator, deep profile at depth 2: no violation, trusted and confirmed allows reached', async () => {
  const r = await explore({ profile: { ...PROFILES.deep, depth: 2 }, mutant: 'none', stopAtFirst: false, renumber: true }, 1, () => undefined);
  assert.deepEqual(r.violations, []);
  assert.equal(r.replayMismatches, 0);
  assert.equal(r.states, 167);
  assert.ok((r.labelTransitions['allow:trusted:L'] ?? 0) > 0);
  assert.ok((r.labelTransitions['allow:confirmed:L'] ?? 0) > 0);
  assert.ok((r.stats.decisions ?? 0) > 0 && r.stats.decisions === r.stats.replays);
});

test('enumerator, mutant k1 at depth 2: a counterexample (one trusted vouch lifts an agent note)', async () => {
  const r = await explore({ profile: { ...PROFILES.deep, depth: 2 }, mutant: 'k1', stopAtFirst: true, renumber: true }, 1, () => undefined);
  assert.ok(r.violations.length > 0, 'k = 1 must break the invariant');
  assert.equal(r.violations[0]?.check, '(a) invariant');
});
