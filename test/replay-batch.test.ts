/**
 * Replay of many decisions in one pass (src/api/replay.ts replayDecisions; docs/design.md § Audit
 * log: replay, § Metrics): the same result as replaying each decision alone, and the metrics'
 * `replaySample=all` reads the audit log once, not once per decision.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { computeMetrics } from '../src/api/metrics.js';
import { computeMetricsSeries } from '../src/api/metrics-series.js';
import { replayDecision, replayDecisions } from '../src/api/replay.js';
import { hashCanonical } from '../src/core/canonical.js';
import { MemauthError } from '../src/core/errors.js';
import type { Memory } from '../src/index.js';
import { rng } from '../reliability/common.js';
import { P, T, manualClock, setup } from './helpers.js';

/** `n` decisions on a payment that depends on one trusted record; @returns the audit head's seq. */
async function paymentsOnOneRecord(mem: Memory, n: number): Promise<number> {
  const rec = (await mem.write({ tenant: T, scope: 'v', principal: P.bank, content: 'pay ACCT-1', source: 'bankapi:a' })).record;
  for (let i = 0; i < n; i++) await mem.authorize({ tenant: T, action: { type: 'pay', args: { to: 'ACCT-1', amount: '1' } }, dependsOn: [rec.id] });
  return (await mem.driver.auditHead(T))?.seq ?? 0;
}

/** Count the audit entries read through the driver's `auditRange` until `restore()`. */
function countAuditReads(mem: Memory): { read: () => number; restore: () => void } {
  const driver = mem.driver;
  const original = driver.auditRange.bind(driver);
  let read = 0;
  driver.auditRange = async (tenant: string, from: number, to: number) => {
    const page = await original(tenant, from, to);
    read += page.length;
    return page;
  };
  return { read: () => read, restore: () => void (driver.auditRange = original) };
}

/** A random history: writes of every authority, derivations, corroborations, confirmations, deletions and decisions. */
async function history(mem: Memory, seed: number, steps: number, advance: (ms: number) => void): Promise<string[]> {
  const r = rng(seed);
  const ids: string[] = [];
  const decisions: string[] = [];
  const writers = [
    [P.browser, 'https://shop.example/page'],
    [P.bank, 'bankapi:acct'],
    [P.registry, 'registry:v'],
    [P.mallory, 'mail:mallory'],
    [P.agent, 'agent:note'],
  ] as const;
  for (let i = 0; i < steps; i++) {
    advance(1000);
    const k = r.int(0, 9);
    const session = `s${r.int(0, 3)}`;
    const acct = `ACCT-${r.int(1, 4)}`;
    if (k <= 2 || ids.length === 0) {
      const [principal, source] = r.pick(writers);
      ids.push((await mem.write({ tenant: T, scope: 'v', principal, content: `vendor pays to ${acct} (${i})`, source, session })).record.id);
    } else if (k === 3) {
      ids.push((await mem.derive({ tenant: T, scope: 'v', principal: P.agent, from: [r.pick(ids)], content: `summary ${i}: ${acct}`, transform: 'summarize', session })).id);
    } else if (k === 4) {
      await mem
        .corroborate({ tenant: T, recordId: r.pick(ids), principal: r.pick([P.bank, P.registry, P.crm, P.mallory]), evidence: r.pick(['bankapi:x', 'registry:y', 'crm:z', 'https://blog.example']) })
        .catch(() => undefined);
    } else if (k === 5) {
      await mem.confirm({ tenant: T, principal: P.alice, action: { type: 'pay', args: { to: acct, amount: '10' } } });
    } else if (k === 6 && r.next() < 0.3) {
      await mem.delete({ tenant: T, id: r.pick(ids) }).catch(() => undefined);
    } else {
      const d = await mem.authorize({
        tenant: T,
        session,
        action: { type: r.pick(['pay', 'draft_reply', 'send_email']), args: { to: acct, amount: '10' } },
        ...(r.next() < 0.5 ? { dependsOn: [r.pick(ids)] } : {}),
      });
      decisions.push(d.id);
    }
  }
  return decisions;
}

describe('replay of many decisions in one pass', () => {
  test('replayDecisions gives exactly what replayDecision gives for each decision (generated histories)', async () => {
    for (const seed of [1, 2, 3, 4]) {
      const clock = manualClock();
      const env = await setup({ clock: clock.now });
      try {
        const ids = await history(env.mem, seed, 120, clock.advance);
        assert.ok(ids.length > 10, `seed ${seed}: some decisions`);
        const batch = await replayDecisions(env.mem.driver, T, [...ids, 'dec_missing']);
        for (const id of ids) {
          const one = await replayDecision(env.mem.driver, T, id);
          const many = batch.get(id);
          assert.ok(many !== undefined && !(many instanceof MemauthError), `seed ${seed}: ${id} replayed`);
          assert.equal(hashCanonical(JSON.parse(JSON.stringify(many))), hashCanonical(JSON.parse(JSON.stringify(one))), `seed ${seed}: ${id} same replay alone and in a batch`);
          assert.equal(one.matches, true, `seed ${seed}: ${id} matches`);
        }
        const missing = batch.get('dec_missing');
        assert.ok(missing instanceof MemauthError && missing.code === 'DECISION_NOT_FOUND');
      } finally {
        await env.dispose();
      }
    }
  });

  test('metrics with replaySample=all read the audit log about once, not once per decision', async () => {
    const env = await setup();
    try {
      const head = await paymentsOnOneRecord(env.mem, 300);
      const { read, restore } = countAuditReads(env.mem);
      const m = await computeMetrics(env.mem, { tenant: T, replaySample: 'all' });
      restore();
      assert.equal(m.tiers.high.decisionReplayRate.denominator, 300);
      assert.equal(m.tiers.high.decisionReplayRate.numerator, 300);
      // one pass over the log for the replays, plus one entry per record checked against its audit entry
      assert.ok(read() <= 2 * head, `audit entries read: ${read()} for a log of ${head} entries`);
    } finally {
      await env.dispose();
    }
  });
});

describe('metrics series in one pass', () => {
  test('each bucket of the series equals computeMetrics over its window (generated histories)', async () => {
    for (const seed of [5, 6, 7]) {
      const clock = manualClock(new Date(Date.now() - 130 * 60_000).toISOString());
      const env = await setup({ clock: clock.now });
      try {
        await history(env.mem, seed, 120, (ms) => clock.advance(ms * 60));
        for (const [buckets, replaySample] of [
          [7, 3],
          [13, 'all'],
          [1, 20],
        ] as const) {
          const series = await computeMetricsSeries(env.mem, { tenant: T, buckets, replaySample });
          assert.equal(series.buckets.length, buckets);
          assert.ok(series.buckets.filter((b) => Object.values(b.tiers).some((t) => t.decisions > 0)).length >= Math.min(buckets, 3), `seed ${seed}: decisions spread over several buckets`);
          for (const b of series.buckets) {
            const one = await computeMetrics(env.mem, { tenant: T, since: b.from, until: b.to, replaySample });
            assert.deepEqual(b.tiers, one.tiers, `seed ${seed}, ${buckets} buckets: window ${b.from}..${b.to}`);
          }
        }
      } finally {
        await env.dispose();
      }
    }
  });

  test('a series of 50 buckets reads the store and the audit log about once, not once per bucket', async () => {
    const env = await setup();
    try {
      const head = await paymentsOnOneRecord(env.mem, 100);
      const { read, restore } = countAuditReads(env.mem);
      const s = await computeMetricsSeries(env.mem, { tenant: T, buckets: 50, replaySample: 'all' });
      restore();
      assert.equal(
        s.buckets.reduce((n, b) => n + b.tiers.high.decisionReplayRate.numerator, 0),
        100,
      );
      assert.ok(read() <= 2 * head, `audit entries read: ${read()} for a log of ${head} entries`);
    } finally {
      await env.dispose();
    }
  });
});
