/**
 * The review queue's reads (src/store/driver.ts ReviewStore): one lane — outcome, tier, requester
 * side — paged newest first by keyset, never pushed out by other lanes' decisions (a flood of
 * allowed or external requests), and the count of each lane.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Decision } from '../../src/core/types.js';
import type { QueuedDecisionsQuery } from '../../src/store/driver.js';
import { P, T } from '../helpers.js';
import { type StoreFactory, setupWith } from './common.js';

const PAY = { type: 'pay', args: { to: 'ACCT-1234', amount: 50 } };

/** Cases for the factory's store. */
export function reviewQueue(f: StoreFactory): void {
  test('a lane pages its decisions newest first without gaps or repeats, past a flood of allowed and external ones; counts per lane', async (t) => {
    const env = await setupWith(f);
    t.after(env.dispose);
    const { mem } = env;
    const invoice = (await mem.write({ tenant: T, scope: 'mail', principal: P.browser, content: 'Invoice: pay ACCT-1234 the sum of 50.', source: 'email:billing@vendor.example' })).record;
    const agentPays: Decision[] = [];
    for (let i = 0; i < 5; i++) agentPays.push(await mem.authorize({ tenant: T, action: PAY, dependsOn: [invoice.id], requester: P.agent }));
    assert.ok(agentPays.every((d) => d.outcome === 'deny' && d.tier === 'high'));
    const app = await mem.authorize({ tenant: T, action: PAY, dependsOn: [invoice.id] });
    for (let i = 0; i < 30; i++) await mem.authorize({ tenant: T, action: { type: 'draft', args: { text: `x${i}` } }, requester: P.mallory });
    for (let i = 0; i < 3; i++) await mem.authorize({ tenant: T, action: PAY, dependsOn: [invoice.id], requester: P.mallory });
    const lane = (before: QueuedDecisionsQuery['before'], requesters: 'internal' | 'external' = 'internal'): QueuedDecisionsQuery => ({ outcome: 'deny', tier: 'high', requesters, before, limit: 2 });
    const seen: string[] = [];
    let before: QueuedDecisionsQuery['before'] = null;
    for (;;) {
      const page = await mem.driver.listQueuedDecisions(T, lane(before));
      seen.push(...page.map((d) => d.id));
      const last = page[page.length - 1];
      if (page.length < 2 || last === undefined) break;
      before = { at: last.at, id: last.id };
    }
    const expected = [...agentPays, app].sort((a, b) => (a.at === b.at ? (a.id < b.id ? 1 : -1) : a.at < b.at ? 1 : -1)).map((d) => d.id);
    assert.deepEqual(seen, expected, 'the internal high-tier lane holds exactly the agent and application pays, newest first');
    const external = await mem.driver.listQueuedDecisions(T, { ...lane(null, 'external'), limit: 10 });
    assert.deepEqual(
      external.map((d) => d.requester),
      [P.mallory, P.mallory, P.mallory],
    );
    assert.deepEqual(await mem.driver.listQueuedDecisions(T, { ...lane(null), tier: 'low' }), [], 'the allowed drafts are in no lane');
    const counts = await mem.driver.countQueuedDecisions(T);
    assert.deepEqual(
      counts.map((c) => [c.outcome, c.tier, c.requesters, c.count]),
      [
        ['deny', 'high', 'external', 3],
        ['deny', 'high', 'internal', 6],
      ],
    );
  });
}
