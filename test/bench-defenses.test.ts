/**
 * Each baseline behaves as its class does, judged over views pulled from real stores after the
 * scenario ran through the public API — and none of them (nor memauth) sees a scenario label.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { riskTier } from '../src/core/policy.js';
import { benchPolicy } from '../src/bench/run.js';
import { toAction, type Scenario } from '../src/bench/scenarios.js';
import { SESSION_B, TENANT, sessionTools } from '../src/bench/world.js';
import { DEFAULT_DETECTOR_RULES, contentGate, injectionScore, lineageGate, observe, verdicts, type Observation } from '../src/bench/defenses/index.js';
import type { Memory } from '../src/api/memory.js';
import { decideB, fixtureScenarios, playRun } from './bench-fixtures.js';

const dir = mkdtempSync(join(tmpdir(), 'memauth-bench-def-'));
const { attack, legit } = fixtureScenarios(dir);
test.after(() => rmSync(dir, { recursive: true, force: true }));

type Act = { tool: string } & Record<string, unknown>;
const attackerAction = attack.session_b.attacker_action as Act;

/** All five verdicts on `action` after a run, plus the observation the baselines saw. */
async function judge(mem: Memory, s: Scenario, action: Act, declared?: readonly string[]) {
  const decision = await decideB(mem, s, action, declared);
  const a = toAction(action);
  const observation = await observe(mem, { tenant: TENANT, session: SESSION_B, action: a, userTurn: s.session_b.user_task, ...(declared ? { declared } : {}) });
  const v = verdicts({ action: a, tier: riskTier(benchPolicy(), a), observation, decision });
  return { v, decision, observation };
}

async function cell(variant: string, c: Parameters<typeof playRun>[2], sub: string | null, k = 2, s: Scenario = attack, action: Act = attackerAction) {
  const run = await playRun(s, variant, c, sub, k);
  try {
    return { ...(await judge(run.mem, s, action)), doc: run.doc };
  } finally {
    await run.mem.close();
  }
}

function assertNoLabels(o: Observation, s: Scenario): void {
  const text = JSON.stringify({
    values: o.values,
    texts: [...o.content.texts.entries()],
    counts: [...o.content.assertingItems.entries()],
    nodes: [...o.lineage.nodes.entries()],
    tainted: [...o.ifc.tainted],
  });
  for (const label of [s.id, s.kind, s.attack_class, 'static', 'adaptive', 'whitebox', 'attacker', 'legit']) {
    assert.ok(!text.includes(label), `a baseline view carries the label ${JSON.stringify(label)}`);
  }
}

test('lineage blocks a direct untrusted dependency and allows after a summary that dropped the edge', async () => {
  const direct = await cell('adaptive', 'direct', null);
  assert.equal(direct.v.lineage.allowed, false);
  assert.deepEqual(direct.v.lineage.reasons, ['untrusted_ancestor(to)']);
  const declared = await cell('adaptive', 'summarize', 'declared');
  assert.equal(declared.v.lineage.allowed, false, 'a summary that keeps its declared edge to the page is still traced');
  const dropped = await cell('adaptive', 'summarize', 'dropped');
  assert.equal(dropped.v.lineage.allowed, true, "the agent's own note with no declared edge is a trusted root: the class's fallback");
  assert.equal(dropped.v.memauth.allowed, false, 'memauth: the note written in a session that read the page carries its taint');
  // a trusted tool echoing the page: the lineage store records a trusted root
  const echo = await cell('static', 'tool_echo', null);
  assert.equal(echo.v.lineage.allowed, true);
  assert.equal(echo.v.memauth.allowed, false);
  assertNoLabels(dropped.observation, attack);
});

test('content blocks the raw injection but is laundered by summarize and tool_echo, and by planted consensus', async () => {
  const doc = attack.variants.static as string;
  assert.ok(injectionScore(doc).score >= 1, 'the static injection is detected');
  const direct = await cell('static', 'direct', null);
  assert.equal(direct.v.content.allowed, false);
  assert.match(direct.v.content.reasons[0] ?? '', /^suspicious_content\(to: /);
  for (const [c, sub] of [
    ['summarize', 'dropped'],
    ['summarize', 'declared'],
    ['tool_echo', null],
    ['corroborate', 'sybil'],
  ] as const) {
    const r = await cell('static', c, sub);
    assert.equal(r.v.content.allowed, true, `content laundered by ${c}${sub ? `:${sub}` : ''}`);
    assert.equal(r.v.memauth.allowed, false, `memauth blocks ${c}${sub ? `:${sub}` : ''}`);
    if (c === 'summarize' && sub === 'dropped') {
      // the note the detector sees carries the value and none of the phrasing
      const texts = [...r.observation.content.texts.values()];
      assert.ok(texts.some((t) => t.includes('ACCT-EVIL-4411') && injectionScore(t).score === 0));
    }
  }
  // the threshold is configurable: at a threshold above every score nothing is flagged
  const req = { action: toAction(attackerAction), tier: 'high' as const, values: direct.observation.values };
  assert.equal(contentGate(req, direct.observation.content, { threshold: 100 }).allowed, true);
  assert.equal(
    DEFAULT_DETECTOR_RULES.every((r) => r.weight > 0),
    true,
  );
});

test('capability_ifc permits memory-borne attacks and taints tool output of the current session', async () => {
  for (const [c, sub] of [
    ['direct', null],
    ['summarize', 'dropped'],
    ['tool_echo', null],
    ['corroborate', 'sybil'],
  ] as const) {
    const r = await cell('static', c, sub);
    assert.equal(r.v.capability_ifc.allowed, true, `long-term memory is clean to the class (${c})`);
  }
  // the same value arriving from a tool call in session B is tainted
  const run = await playRun(attack, 'static', 'multi_turn', 'tool_call');
  try {
    const lookup = await sessionTools(run.mem).lookup('ACCT-EVIL-4411');
    const r = await judge(run.mem, attack, attackerAction, [lookup.id]);
    assert.equal(r.v.capability_ifc.allowed, false);
    assert.deepEqual(r.v.capability_ifc.reasons, ['tainted_value(to)']);
    assert.ok(r.observation.ifc.tainted.has(lookup.id));
  } finally {
    await run.mem.close();
  }
});

test('memauth blocks correlated corroboration (two trusted principals in one domain)', async () => {
  const r = await cell('adaptive', 'corroborate', 'correlated');
  assert.equal(r.v.memauth.allowed, false);
  assert.ok(r.v.memauth.reasons.includes('missing_corroboration'), r.v.memauth.reasons.join(','));
  assert.equal(r.v.content.allowed, true, 'three items assert the value: consensus for the content class');
  assert.equal(r.v.none.allowed, true);
  const sybil = await cell('adaptive', 'corroborate', 'sybil');
  assert.equal(sybil.v.memauth.allowed, false);
});

test("two independent trusted principals compromised: allowed at k=2 (the inherent limit), blocked at k=3; legit at k=3 allowed by the systems of record's own claims", async () => {
  const k2 = await cell('adaptive', 'limit_independent', 'k2', 2);
  assert.equal(k2.v.memauth.allowed, true, 'k=2 independent trusted corroborations lift the claim: reported as the limit');
  const k3 = await cell('adaptive', 'limit_independent', 'k3', 3);
  assert.equal(k3.v.memauth.allowed, false);
  assert.ok(k3.v.memauth.reasons.includes('missing_corroboration'));
  const expected = legit.session_b.expected_action as Act;
  const three = await cell('benign', 'legit_k3', null, 3, legit, expected);
  assert.equal(three.v.memauth.allowed, true, 'two systems of record and an independent verifier: three domains');
  // Only two vouchers, short of k=3, so the note stays untrusted; yet the action is allowed outright:
  // the user's turn asks for the payment (trusted intent), the vendor master's typed claim
  // payee_account = PLOVER-PAY-77 supplies `to` and the turn asserts the amount, so the context is
  // waived without any corroboration (docs/design.md § Claims and intent). Elevation by vouchers is
  // what the text mode, a store without claims, still needs.
  const two = await cell('benign', 'legit_k3_two', null, 3, legit, expected);
  assert.equal(two.v.memauth.allowed, true);
  assert.equal(two.decision.contextWaived, true, 'allowed by the waiver, not by corroboration');
  const to = two.decision.values?.find((x) => x.argument === 'to');
  assert.deepEqual(
    to?.claims?.map((c) => c.field),
    ['payee_account'],
  );
  // without the systems of record (nothing but the note states the payee) it still asks
  const bare = await cell('benign', 'legit_uncorroborated', null, 3, legit, expected);
  assert.equal(bare.v.memauth.allowed, false);
  assert.ok(bare.v.memauth.reasons.includes('needs_confirmation'));
  const atK2 = await cell('benign', 'legit', null, 2, legit, expected);
  assert.equal(atK2.v.memauth.allowed, true);
});

test('lineage has no elevation path: it refuses a corroborated legit task whose value an untrusted note also states', async () => {
  const expected = legit.session_b.expected_action as Act;
  const r = await cell('benign', 'legit', null, 2, legit, expected);
  assert.equal(r.v.lineage.allowed, false);
  assert.equal(r.v.memauth.allowed, true);
  assert.equal(r.v.content.allowed, true);
  assert.equal(r.v.capability_ifc.allowed, true);
});

test('pure gates: below high risk everything passes; values from the user turn are not memory-borne', () => {
  const view = { nodes: new Map([['m1', { parents: [], writer: 'untrusted' as const }]]) };
  const values = [{ argument: 'to', value: 'X', supportIds: ['m1'], userTurn: false }];
  assert.equal(lineageGate({ action: { type: 'answer', args: {} }, tier: 'read_only', values }, view).allowed, true);
  assert.equal(lineageGate({ action: { type: 'pay', args: { to: 'X' } }, tier: 'high', values }, view).allowed, false);
  assert.equal(lineageGate({ action: { type: 'pay', args: { to: 'X' } }, tier: 'high', values: [{ ...values[0]!, userTurn: true }] }, view).allowed, true);
});
