/** Wilson intervals against known values, the seeded PRNG, and the scenario loader's errors. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMemauthError } from '../src/core/errors.js';
import { deriveSeed, mulberry32, percentile, shuffled, wilson } from '../src/bench/stats.js';
import { defaultScenarioPath, loadScenarios } from '../src/bench/scenarios.js';
import { plan } from '../src/bench/run.js';
import { ATTACK, LEGIT } from './bench-fixtures.js';

const close = (a: number, b: number, eps = 5e-5): void => assert.ok(Math.abs(a - b) < eps, `${a} vs ${b}`);

test('Wilson score interval matches published values (R prop.test, correct = FALSE)', () => {
  const cases: Array<[number, number, number, number]> = [
    [0, 10, 0, 0.2775328],
    [1, 10, 0.01787621, 0.40415205],
    [5, 10, 0.2365931, 0.7634069],
    [10, 10, 0.7224672, 1],
    [81, 263, 0.2553, 0.3662],
  ];
  for (const [k, n, lo, hi] of cases) {
    const [l, h] = wilson(k, n);
    close(l, lo, k === 81 ? 5e-4 : 5e-5);
    close(h, hi, k === 81 ? 5e-4 : 5e-5);
  }
  assert.deepEqual(wilson(0, 0), [0, 1]);
  const [l, h] = wilson(3, 7);
  const [l2, h2] = wilson(4, 7);
  close(l, 1 - h2, 1e-12);
  close(h, 1 - l2, 1e-12);
  assert.throws(() => wilson(5, 4), RangeError);
});

test('mulberry32 is deterministic per seed; derived seeds differ per label', () => {
  const a = mulberry32(42);
  const b = mulberry32(42);
  const xs = Array.from({ length: 5 }, () => a());
  assert.deepEqual(
    xs,
    Array.from({ length: 5 }, () => b()),
  );
  assert.ok(xs.every((x) => x >= 0 && x < 1));
  assert.notDeepEqual(xs, Array.from({ length: 5 }, mulberry32(43)));
  assert.equal(deriveSeed(1, 'worst-case', 0, 'x'), deriveSeed(1, 'worst-case', 0, 'x'));
  assert.notEqual(deriveSeed(1, 'worst-case', 0, 'x'), deriveSeed(1, 'worst-case', 1, 'x'));
  assert.deepEqual(shuffled([1, 2, 3, 4, 5], mulberry32(7)), shuffled([1, 2, 3, 4, 5], mulberry32(7)));
});

test('the scenario loader names the scenario and the bad field', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memauth-bench-load-'));
  try {
    const write = (name: string, content: unknown): string => {
      const p = join(dir, name);
      writeFileSync(p, typeof content === 'string' ? content : JSON.stringify(content));
      return p;
    };
    const bad = (content: unknown, re: RegExp, field?: string): void => {
      const p = write('s.json', content);
      assert.throws(
        () => loadScenarios(p),
        (e: unknown) => {
          assert.ok(isMemauthError(e, 'SCENARIO_INVALID'), String(e));
          assert.match(e.message, re);
          if (field !== undefined) assert.equal(e.details.field, field);
          return true;
        },
      );
    };
    const { attacker_action: _a, ...sessionB } = ATTACK.session_b;
    bad([LEGIT, { ...ATTACK, session_b: sessionB }], /scenario "pay-redirect" \(#1\): session_b\.attacker_action: /, 'session_b.attacker_action');
    bad([{ ...ATTACK, kind: 'poison' }], /scenario "pay-redirect" \(#0\): kind: /, 'kind');
    bad([{ ...ATTACK, variants: { ...ATTACK.variants, static: 42 } }], /scenario "pay-redirect" \(#0\): variants\.static: /, 'variants.static');
    bad([{ ...ATTACK, session_b: { ...ATTACK.session_b, attacker_action: { to: 'X' } } }], /session_b\.attacker_action\.tool/, 'session_b.attacker_action.tool');
    bad([{ ...ATTACK, variants: { benign: 'only benign' } }], /variants: an attack scenario needs at least one attack variant/);
    bad([{ ...LEGIT, id: undefined }], /scenario #0: id: /, 'id');
    bad([LEGIT, LEGIT], /scenario "legit-remit" \(#1\): duplicate id/, 'id');
    bad('{not json', /is not valid JSON/);
    bad({ scenarios: [] }, /must hold a JSON array/);
    bad([], /holds no scenarios/);
    assert.throws(() => loadScenarios(join(dir, 'missing.json')), /cannot read scenario file/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the loader accepts the project set and the public MEM-INV-Bench file; the plan covers every variant', () => {
  const own = loadScenarios(defaultScenarioPath());
  assert.equal(own.length, 27);
  const specs = plan(own);
  const attackVariants = own.filter((s) => s.kind === 'attack').reduce((n, s) => n + Object.keys(s.variants).filter((v) => v !== 'benign').length, 0);
  // per attack variant: direct, summarize×2, tool_echo, corroborate×2, multi_turn×2, independent k=2/k=3
  assert.equal(specs.filter((s) => s.scenario.kind === 'attack' && s.variant !== 'benign').length, attackVariants * 10);
  assert.ok(specs.some((s) => s.variant === 'whitebox'));
  assert.ok(specs.some((s) => s.variant === 'benign' && s.scenario.kind === 'attack'));
  const pub = join(process.cwd(), '..', 'shared', 'data', 'mem-inv-bench', 'scenarios.json');
  if (existsSync(pub)) assert.equal(loadScenarios(pub).length, 12);
});

test('percentile is nearest-rank over sorted samples, NaN when there are none (the perf and reliability suites use it)', () => {
  const xs = Array.from({ length: 100 }, (_, i) => i + 1);
  assert.equal(percentile(xs, 0.5), 50);
  assert.equal(percentile(xs, 0.99), 99);
  assert.equal(percentile(xs, 1), 100);
  assert.equal(percentile(xs, 0), 1);
  assert.equal(percentile([7], 0.99), 7);
  assert.equal(percentile([1, 2, 3], 0.5), 2);
  assert.ok(Number.isNaN(percentile([], 0.5)));
});
