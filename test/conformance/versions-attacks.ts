/**
 * Versions attacked (docs/design.md § Memory record, § Action gate § Reasons), on a real store:
 * a lower principal cannot suppress a trusted record, a version never inherits the authority or
 * the corroborations of the version it replaces, a replaced version's value cannot drive a high
 * action unseen, a later version cannot make an earlier decision fail its replay, and a competing
 * version cannot take a decision's value out of what a reviewer reads.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Memory } from '../../src/index.js';
import { P, T, codes } from '../helpers.js';
import { type StoreFactory, setupWith } from './common.js';

const pay = (to: string) => ({ type: 'pay', args: { to } });

/** Alice's payee fact. */
const aliceFact = async (mem: Memory, to = 'ACCT-ALICE-1'): Promise<string> => (await mem.write({ tenant: T, scope: 'pay', principal: P.alice, content: `Rent goes to payee ${to}` })).record.id;

/** Register the attack cases for the factory's store (called by versions.ts). */
export function versionAttackCases(f: StoreFactory): void {
  const setup = () => setupWith(f);

  describe('versions attacked', () => {
    test('no principal below the user hides the user fact: tool, agent and external versions all compete', async (t) => {
      const env = await setup();
      t.after(env.dispose);
      const { mem } = env;
      const alice = await aliceFact(mem);
      let target = alice;
      for (const principal of [P.browser, P.agent, P.mallory]) {
        const r = await mem.supersede({ tenant: T, id: target, principal, content: `Rent goes to payee ACCT-${principal}`, reason: 'update', source: 'https://evil.example' });
        assert.equal(r.conflict, true, principal);
        assert.ok(r.current.includes(alice), principal);
        target = r.record.id;
      }
      // a read of the newest version shows the user's fact beside it, with its authority and text
      const v = await mem.get({ tenant: T, id: target });
      assert.equal(v.versions?.conflict, true);
      const shown = v.versions?.history.find((h) => h.id === alice);
      assert.equal(shown?.current, true);
      assert.equal(shown?.actionAuthority, 'user_confirmed');
      assert.match(shown?.content ?? '', /ACCT-ALICE-1/);
      assert.equal((await mem.get({ tenant: T, id: alice })).id, alice);
      const d = await mem.authorize({ tenant: T, action: pay('ACCT-ALICE-1'), dependsOn: [alice], context: 'declared' });
      assert.equal(d.outcome, 'deny');
      assert.ok(codes(d).includes('conflict'));
      assert.deepEqual(d.values.find((x) => x.argument === 'to')?.recordIds, [alice]);
    });

    test('a version inherits neither the authority nor the corroborations of the version it replaces', async (t) => {
      const env = await setup();
      t.after(env.dispose);
      const { mem } = env;
      const page = (await mem.write({ tenant: T, scope: 'pay', principal: P.mallory, content: 'Rent goes to payee ACCT-PAGE-1', source: 'https://landlord.example' })).record.id;
      for (const principal of [P.bank, P.registry, P.crm]) await mem.corroborate({ tenant: T, recordId: page, principal, evidence: `${principal}:acct/ACCT-PAGE-1` });
      const lifted = (await mem.get({ tenant: T, id: page })).actionAuthority;
      assert.notEqual(lifted, 'external_untrusted', 'the corroborations lift the page');
      const r = await mem.supersede({ tenant: T, id: page, principal: P.mallory, content: 'Rent goes to payee ACCT-EVIL-2', reason: 'bank change', source: 'https://landlord.example' });
      assert.equal(r.record.taint.lowestAuthority, 'external_untrusted');
      assert.equal(r.conflict, true, 'below the corroborated version it competes');
      const v = await mem.get({ tenant: T, id: r.record.id, exact: true });
      assert.equal(v.actionAuthority, 'external_untrusted');
      assert.equal(v.corroborations.length, 0);
      const d = await mem.authorize({ tenant: T, action: pay('ACCT-EVIL-2'), dependsOn: [r.record.id], context: 'declared' });
      assert.equal(d.outcome, 'deny');
      assert.ok(codes(d).includes('untrusted_origin') && codes(d).includes('conflict'), codes(d).join(','));
      assert.equal((await mem.replay({ tenant: T, decisionId: d.id })).matches, true);
    });

    test("a replaced version's value does not drive a high action unseen; the current one does", async (t) => {
      const env = await setup();
      t.after(env.dispose);
      const { mem } = env;
      const old = await aliceFact(mem, 'ACCT-OLD-1');
      const next = (await mem.supersede({ tenant: T, id: old, principal: P.alice, content: 'Rent goes to payee ACCT-NEW-2', reason: 'the old account was closed' })).record.id;
      // an agent that read the old version (by id, exactly) in its session
      await mem.get({ tenant: T, id: old, exact: true, session: 's-old' });
      const stale = await mem.authorize({ tenant: T, action: pay('ACCT-OLD-1'), dependsOn: [old], context: 'declared' });
      assert.equal(stale.outcome, 'deny');
      assert.deepEqual(stale.reasons.find((r) => r.code === 'conflict')?.memoryIds, [next, old].sort());
      const inSession = await mem.authorize({ tenant: T, action: pay('ACCT-OLD-1'), session: 's-old' });
      assert.equal(inSession.outcome, 'deny');
      assert.ok(codes(inSession).includes('conflict'), codes(inSession).join(','));
      const current = await mem.authorize({ tenant: T, action: pay('ACCT-NEW-2'), dependsOn: [next], context: 'declared' });
      assert.equal(current.outcome, 'allow', codes(current).join(','));
      for (const d of [stale, inSession, current]) assert.equal((await mem.replay({ tenant: T, decisionId: d.id })).matches, true);
    });

    test('a version written after a decision does not change its replay', async (t) => {
      const env = await setup();
      t.after(env.dispose);
      const { mem } = env;
      const alice = await aliceFact(mem);
      const before = await mem.authorize({ tenant: T, action: pay('ACCT-ALICE-1'), dependsOn: [alice], context: 'declared' });
      assert.equal(before.outcome, 'allow', codes(before).join(','));
      const evil = await mem.supersede({ tenant: T, id: alice, principal: P.mallory, content: 'Rent goes to payee ACCT-EVIL-3', reason: 'x', source: 'https://evil.example' });
      const during = await mem.authorize({ tenant: T, action: pay('ACCT-ALICE-1'), dependsOn: [alice], context: 'declared' });
      assert.ok(codes(during).includes('conflict'));
      const fix = await mem.supersede({ tenant: T, id: alice, principal: P.alice, content: 'Rent goes to payee ACCT-ALICE-1 (confirmed)', reason: 'fake notice' });
      assert.equal(fix.conflict, false);
      await mem.delete({ tenant: T, id: evil.record.id, principal: P.mallory, reason: 'gone' });
      for (const d of [before, during]) assert.equal((await mem.replay({ tenant: T, decisionId: d.id })).matches, true, d.id);
      assert.equal((await mem.verifyAudit({ tenant: T })).ok, true);
    });

    test("a competing version does not take a decision's value out of the reviewer's reads", async (t) => {
      const env = await setup();
      t.after(env.dispose);
      const { mem } = env;
      const alice = await aliceFact(mem);
      const d = await mem.authorize({ tenant: T, action: pay('ACCT-ALICE-1'), dependsOn: [alice], context: 'declared' });
      const evil = (await mem.supersede({ tenant: T, id: alice, principal: P.mallory, content: 'Rent goes to payee ACCT-EVIL-4', reason: 'x', source: 'https://evil.example' })).record.id;
      // every dependency of the recorded decision, read as a reviewer reads it, still shows the value it supplied
      for (const dep of (await mem.getDecision({ tenant: T, decisionId: d.id })).dependencies) {
        for (const exact of [false, true]) {
          const v = await mem.get({ tenant: T, id: dep.memoryId, exact });
          assert.equal(v.id, alice, `exact ${exact}`);
          assert.match(v.content ?? '', /ACCT-ALICE-1/);
          assert.equal(v.versions?.conflict, true);
          assert.ok(v.versions?.history.some((h) => h.id === evil && h.content !== null));
        }
      }
      const hits = await mem.search({ tenant: T, scope: 'pay', query: 'ACCT-EVIL-4', limit: 1 });
      assert.deepEqual(hits.map((h) => h.record.id).sort(), [alice, evil].sort());
      assert.deepEqual((await mem.list({ tenant: T, scope: 'pay' })).map((r) => r.id).sort(), [alice, evil].sort());
    });
  });
}
