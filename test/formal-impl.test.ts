/**
 * Smoke test of the exhaustive implementation check (formal/impl/enumerate.ts) at a small depth,
 * so that `npm test` notices when the enumerator and the Memory API drift apart. The full run is
 * `npm run formal`; the widened and claims universes alone: `npm run formal -- --widened`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CLAIMS, PROFILES, type Profile, WIDENED, explore, violationKind } from '../formal/impl/enumerate.js';

test('enumerator, deep profile at depth 2: no violation, trusted and confirmed allows reached', async () => {
  const r = await explore({ profile: { ...PROFILES.deep, depth: 2 }, mutant: 'none', stopAtFirst: false, renumber: true }, 1, () => undefined);
  assert.deepEqual(r.violations, []);
  assert.equal(r.replayMismatches, 0);
  assert.equal(r.states, 167);
  assert.ok((r.labelTransitions['allow:trusted:pay,L'] ?? 0) > 0);
  assert.ok((r.labelTransitions['allow:confirmed:pay,L'] ?? 0) > 0);
  assert.ok((r.stats.decisions ?? 0) > 0 && r.stats.decisions === r.stats.replays);
});

test('enumerator, mutant k1 at depth 2: a counterexample (one trusted vouch lifts an agent note)', async () => {
  const r = await explore({ profile: { ...PROFILES.deep, depth: 2 }, mutant: 'k1', stopAtFirst: true, renumber: true }, 1, () => undefined);
  assert.ok(r.violations.length > 0, 'k = 1 must break the invariant');
  assert.equal(r.violations[0]?.check, '(a) invariant');
});

/**
 * Slices of the widened universes, each just deep enough for the attack it adds (the full
 * profiles run in `npm run formal`). Each must hold, and reach the legitimate allow it names.
 */
const SLICES: ReadonlyArray<{ name: string; profile: Profile; allow: string }> = [
  // look-alike identifiers and amounts: pay to 6228480012345678777 / 06228… / 6,228,… / amount 1200.1000000000000001 after reading the record stating …901 and 1200.10
  {
    name: 'look-alike values',
    profile: {
      ...WIDENED.lookalike,
      depth: 2,
      writes: [
        ['toolA', 'SOR', 'L'],
        ['mallory', 'WEB', 'Z'],
      ],
      maxSessions: 1,
      maxDeletes: 0,
      maxCorroborations: 0,
    },
    allow: 'allow:trusted:pay,L',
  },
  // mallory attaches text stating a payee to the trusted record, the agent reads the record
  {
    name: 'attached evidence text',
    profile: { ...WIDENED.evidence, depth: 3, writes: [['toolA', 'SOR', 'L']], corroborators: [], maxSessions: 1, maxDeletes: 0, maxConfirmations: 0, noteValues: [] },
    allow: 'allow:trusted:pay,L',
  },
  // toolA fetches a page repeating the trusted record with case, ✔, punctuation or hidden tag characters changed (or CRLF / NFD: the same text)
  { name: 'echo variants', profile: { ...WIDENED.echo, depth: 3, writes: [['toolA', 'SOR', 'L']], maxSessions: 1, maxConfirmations: 0, noteValues: [] }, allow: 'allow:trusted:pay,L' },
  // deploy / export_data / pay with a resource no trusted text states
  {
    name: 'resources',
    profile: { ...WIDENED.resource, depth: 2, writes: [['toolA', 'SOR', 'L']], maxSessions: 1, maxDeletes: 0, maxCorroborations: 0, maxConfirmations: 0, noteValues: [] },
    allow: 'allow:trusted:deploy,@RL',
  },
  // typed claims and intent: the system of record claims the payee (its text forbids the attacker's account), the attacker's page claims its own; the user asks, the claim supplies the payee after the page was read
  {
    name: 'claims and intent',
    profile: {
      ...CLAIMS.claims,
      depth: 3,
      writes: [
        ['toolA', 'SOR', 'L'],
        ['mallory', 'WEB', 'A'],
      ],
      corroborators: [],
      maxSessions: 1,
      maxDeletes: 0,
      maxCorroborations: 0,
    },
    allow: 'allow:intent:pay,L|req|plain',
  },
];

for (const s of SLICES) {
  test(`enumerator, widened slice "${s.name}" (depth ${s.profile.depth}): no violation, the legitimate action still allowed`, async () => {
    const r = await explore({ profile: s.profile, mutant: 'none', stopAtFirst: false, renumber: true }, 1, () => undefined);
    const kinds = [...new Set(r.violations.map(violationKind))];
    assert.deepEqual(kinds, [], `counterexamples, e.g. ${r.violations[0]?.path.join(' ; ')}: ${r.violations[0]?.message}`);
    assert.equal(r.replayMismatches, 0);
    assert.ok((r.labelTransitions[s.allow] ?? 0) > 0, `${s.allow} never reached`);
  });
}
