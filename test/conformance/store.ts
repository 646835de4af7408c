/**
 * Store cases beyond the regressions: search (tenant, scope, status and expiry filters; word
 * matching that ignores punctuation and case; no query-language injection; ranking) and the
 * audit chain under many concurrent appends; audit entries read by seq in one batch.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Decision } from '../../src/core/types.js';
import { P, T, expectCode, manualClock } from '../helpers.js';
import { type StoreFactory, setupWith } from './common.js';

/** Search and concurrency cases, against the factory's store. */
export function store(f: StoreFactory): void {
  describe('search', () => {
    test('only active, unexpired records of the asked tenant and scope are found', async (t) => {
      const clock = manualClock('2025-05-01T00:00:00.000Z');
      const env = await setupWith(f, { clock: clock.now });
      t.after(env.dispose);
      const { mem } = env;
      await mem.registerPrincipal({ tenant: 'globex', id: 'bob', kind: 'user', domain: 'bob' });
      const keep = (await mem.write({ tenant: T, scope: 'notes', principal: P.alice, content: 'Heron migration notes for the Heron project' })).record;
      const other = (await mem.write({ tenant: T, scope: 'other', principal: P.alice, content: 'Heron in another scope' })).record;
      const foreign = (await mem.write({ tenant: 'globex', scope: 'notes', principal: 'bob', content: 'Heron at Globex' })).record;
      const gone = (await mem.write({ tenant: T, scope: 'notes', principal: P.alice, content: 'Heron note to delete' })).record;
      const soon = (await mem.write({ tenant: T, scope: 'notes', principal: P.alice, content: 'Heron note that expires', expiresAt: '2025-05-01T01:00:00.000Z' })).record;
      await mem.delete({ tenant: T, id: gone.id });
      let ids = (await mem.search({ tenant: T, scope: 'notes', query: 'heron' })).map((h) => h.record.id).sort();
      assert.deepEqual(ids, [keep.id, soon.id].sort());
      clock.advance(2 * 3600_000);
      ids = (await mem.search({ tenant: T, scope: 'notes', query: 'heron' })).map((h) => h.record.id);
      assert.deepEqual(ids, [keep.id], 'the expired record is no longer found');
      assert.deepEqual(
        (await mem.search({ tenant: T, scope: 'other', query: 'Heron' })).map((h) => h.record.id),
        [other.id],
      );
      assert.deepEqual(
        (await mem.search({ tenant: 'globex', scope: 'notes', query: 'Heron' })).map((h) => h.record.id),
        [foreign.id],
      );
      assert.deepEqual(await mem.search({ tenant: 'initech', scope: 'notes', query: 'Heron' }), []);
    });

    test('words match whatever the punctuation and case; query syntax is not interpreted', async (t) => {
      const env = await setupWith(f);
      t.after(env.dispose);
      const { mem } = env;
      const acct = (await mem.write({ tenant: T, scope: 's', principal: P.alice, content: 'Remit to ACCT-77 by Friday.' })).record;
      const mail = (await mem.write({ tenant: T, scope: 's', principal: P.alice, content: 'Invoices go to billing@vendor.example' })).record;
      const url = (await mem.write({ tenant: T, scope: 's', principal: P.alice, content: 'See https://docs.vendor.example/pay?ref=42' })).record;
      const uni = (await mem.write({ tenant: T, scope: 's', principal: P.alice, content: 'Büro in Zürich, Ansprechpartner Jürgen' })).record;
      const find = async (q: string): Promise<string[]> => (await mem.search({ tenant: T, scope: 's', query: q })).map((h) => h.record.id);
      assert.ok((await find('acct 77')).includes(acct.id));
      assert.ok((await find('ACCT-77')).includes(acct.id));
      assert.ok((await find('remit')).includes(acct.id), 'case-insensitive');
      assert.ok((await find('billing')).includes(mail.id), 'the words of an e-mail address');
      assert.ok((await find('billing@vendor.example')).includes(mail.id));
      assert.ok((await find('docs')).includes(url.id), 'the words of a URL');
      assert.ok((await find('Zürich')).includes(uni.id), 'non-ASCII letters');
      assert.ok((await find('jürgen')).includes(uni.id));
      for (const q of ['"', "'", 'NEAR(', 'remit OR', 'AND NOT', '*', '-remit', 'remit:*', "'); DROP TABLE records; --", '!!!', '\\']) {
        await mem.search({ tenant: T, scope: 's', query: q }); // never a syntax error
      }
      assert.deepEqual(await find('!!! ??? ...'), [], 'no words, no hits');
      assert.equal((await mem.list({ tenant: T })).length, 4, 'nothing was dropped');
    });

    test('a record matching more of the words ranks first', async (t) => {
      const env = await setupWith(f);
      t.after(env.dispose);
      const { mem } = env;
      const one = (await mem.write({ tenant: T, scope: 's', principal: P.alice, content: 'the payroll run is monthly' })).record;
      const two = (await mem.write({ tenant: T, scope: 's', principal: P.alice, content: 'the payroll account is ACCT-P1 for the payroll run' })).record;
      const hits = await mem.search({ tenant: T, scope: 's', query: 'payroll account' });
      assert.deepEqual(
        hits.map((h) => h.record.id),
        [two.id, one.id],
      );
      assert.ok((hits[0]?.score ?? 0) > (hits[1]?.score ?? 0), 'higher score is better');
      assert.equal((await mem.search({ tenant: T, scope: 's', query: 'payroll', limit: 1 })).length, 1);
    });
  });

  describe('entries by seq, batched', () => {
    test('auditEntriesAt returns the entries auditRange returns for those seqs, by seq, within the tenant only', async (t) => {
      const env = await setupWith(f);
      t.after(env.dispose);
      for (const c of ['one', 'two', 'three']) await env.mem.write({ tenant: T, scope: 'notes', principal: P.alice, content: c });
      await env.mem.registerPrincipal({ tenant: 'globex', id: 'gx', kind: 'user', domain: 'globex' });
      const head = await env.mem.driver.auditHead(T);
      assert.ok(head && env.mem.driver.auditEntriesAt);
      const all = await env.mem.driver.auditRange(T, 1, head.seq);
      const seqs = [head.seq, 2, 1, 2, head.seq + 100];
      const got = await env.mem.driver.auditEntriesAt(T, seqs);
      assert.deepEqual(
        got,
        all.filter((e) => e.seq === 1 || e.seq === 2 || e.seq === head.seq),
      );
      assert.deepEqual(await env.mem.driver.auditEntriesAt(T, []), []);
      // another tenant's chain has a seq 1 too: never returned for T, nor T's for it
      const [gx] = await env.mem.driver.auditEntriesAt('globex', [1]);
      assert.equal(gx?.tenant, 'globex');
      assert.deepEqual(await env.mem.driver.auditEntriesAt('nobody', [1, 2]), []);
    });
  });

  describe("a session's allowed decisions", () => {
    test('the first allowed decision of one action type in one session: by (at, id), only allowed, only that type, session and tenant; rows stored before the type column by their body', async (t) => {
      const env = await setupWith(f);
      t.after(env.dispose);
      const decision = (id: string, tenant: string, sessionId: string | null, at: string, outcome: Decision['outcome'], type: string): Decision =>
        ({
          formatVersion: 1,
          id,
          tenant,
          sessionId,
          at,
          action: { type, args: {} },
          argsHash: 'h',
          tier: 'high',
          mode: 'enforce',
          outcome,
          reasons: [],
          dependencies: [],
          values: [],
          confirmationId: null,
          policyVersion: 'p',
          auditSeq: 0,
        }) as unknown as Decision;
      const at = (m: number): string => `2025-05-01T00:0${m}:00.000Z`;
      await env.mem.driver.transaction(T, async (tx) => {
        await tx.insertDecision(decision('dec_a0', T, 's', at(0), 'deny', 'pay'));
        await tx.insertDecision(decision('dec_a1', T, 's', at(1), 'would_deny', 'pay'));
        await tx.insertDecision(decision('dec_a2', T, 's', at(2), 'allow', 'send_email'));
        await tx.insertDecision(decision('dec_b1', T, 'other', at(1), 'allow', 'pay'));
        await tx.insertDecision(decision('dec_c1', 'globex', 's', at(1), 'allow', 'pay'));
        await tx.insertDecision(decision('dec_z3', T, 's', at(3), 'allow', 'pay'));
        await tx.insertDecision(decision('dec_y3', T, 's', at(3), 'allow', 'pay'));
        await tx.insertDecision(decision('dec_x4', T, 's', at(4), 'allow', 'pay'));
        await tx.insertDecision(decision('dec_p', T, 's', at(5), 'allow', 'Pay'));
      });
      // rows as stored before the action_type column: no type but the body's, NUL in the arguments
      const legacy = async (id: string, m: number, outcome: Decision['outcome'], type: string): Promise<void> => {
        const body = { ...decision(id, T, 'old', at(m), outcome, type), action: { type, args: { memo: 'a\u0000b' } } };
        await env.raw.query('INSERT INTO decisions (id, tenant, session_id, at, outcome, body, audit_seq) VALUES (?, ?, ?, ?, ?, ?, ?)', [id, T, 'old', at(m), outcome, JSON.stringify(body), 0]);
      };
      await legacy('dec_l1', 1, 'allow', 'send_email');
      await legacy('dec_l2', 2, 'deny', 'pay');
      await legacy('dec_l4', 4, 'allow', 'pay');
      await env.mem.driver.transaction(T, async (tx) => {
        await tx.insertDecision(decision('dec_n3', T, 'old', at(3), 'allow', 'deploy'));
        await tx.insertDecision(decision('dec_n5', T, 'old', at(5), 'allow', 'pay'));
        await tx.insertDecision(decision('dec_n6', T, 'old', at(6), 'allow', 'deploy'));
      });
      await env.mem.driver.transaction(T, async (tx) => {
        assert.equal((await tx.allowedInSession(T, 's', 'pay'))?.id, 'dec_y3', 'earliest at, then smallest id; denials and other sessions and tenants do not count');
        assert.equal((await tx.allowedInSession(T, 's', 'send_email'))?.id, 'dec_a2');
        assert.equal((await tx.allowedInSession(T, 's', 'Pay'))?.id, 'dec_p', 'types compare exactly');
        assert.equal(await tx.allowedInSession(T, 's', 'deploy'), null);
        assert.equal(await tx.allowedInSession(T, 'none', 'pay'), null);
        assert.equal((await tx.allowedInSession('globex', 's', 'pay'))?.id, 'dec_c1');
        assert.equal((await tx.allowedInSession(T, 'old', 'pay'))?.id, 'dec_l4', 'an older row without the column counts by its body');
        assert.deepEqual((await tx.allowedInSession(T, 'old', 'pay'))?.action.args, { memo: 'a\u0000b' });
        assert.equal((await tx.allowedInSession(T, 'old', 'send_email'))?.id, 'dec_l1');
        assert.equal((await tx.allowedInSession(T, 'old', 'deploy'))?.id, 'dec_n3');
        assert.equal(await tx.allowedInSession(T, 'old', 'answer'), null);
      });
      // one waiver per session: a decision allowed with its context waived answers for every type, new rows and old
      await env.mem.driver.transaction(T, async (tx) => {
        await tx.insertDecision({ ...decision('dec_w2', T, 'w', at(2), 'allow', 'pay'), contextWaived: true } as Decision);
        await tx.insertDecision(decision('dec_w1', T, 'w', at(1), 'allow', 'deploy'));
      });
      const body = { ...decision('dec_lw', T, 'oldw', at(1), 'allow', 'refund'), contextWaived: true };
      await env.raw.query('INSERT INTO decisions (id, tenant, session_id, at, outcome, body, audit_seq) VALUES (?, ?, ?, ?, ?, ?, ?)', ['dec_lw', T, 'oldw', at(1), 'allow', JSON.stringify(body), 0]);
      await env.mem.driver.transaction(T, async (tx) => {
        assert.equal((await tx.allowedInSession(T, 'w', 'purchase'))?.id, 'dec_w2');
        assert.equal((await tx.allowedInSession(T, 'w', 'deploy'))?.id, 'dec_w1');
        assert.equal((await tx.allowedInSession(T, 'oldw', 'purchase'))?.id, 'dec_lw');
      });
    });
  });

  describe('text every store can hold', () => {
    test('U+0000 in stored text is refused alike (INVALID_ARGUMENT); in action arguments it is kept', async (t) => {
      const env = await setupWith(f);
      t.after(env.dispose);
      const { mem } = env;
      await expectCode(() => mem.write({ tenant: T, scope: 's', principal: P.alice, content: 'nul \u0000 inside' }), 'INVALID_ARGUMENT');
      await expectCode(() => mem.write({ tenant: T, scope: 's', principal: P.alice, content: 'ok', source: 'https://x.example/\u0000' }), 'INVALID_ARGUMENT');
      const rec = (await mem.write({ tenant: T, scope: 's', principal: P.alice, content: 'Zürich 😀 "quoted" \\ text' })).record;
      assert.equal((await mem.get({ tenant: T, id: rec.id })).content, 'Zürich 😀 "quoted" \\ text');
      const d = await mem.authorize({ tenant: T, action: { type: 'answer', args: { q: 'a\u0000b', emoji: '😀' } } });
      assert.deepEqual((await mem.getDecision({ tenant: T, decisionId: d.id })).action.args, { q: 'a\u0000b', emoji: '😀' });
      assert.equal((await mem.replay({ tenant: T, decisionId: d.id })).matches, true);
      assert.equal((await mem.verifyAudit({})).ok, true);
    });
  });

  describe('concurrent appends', () => {
    // One memory, many calls in flight at once: the SQLite driver queues its transactions; the
    // PostgreSQL driver runs them on several pooled connections, serialised per tenant by the
    // advisory lock. (Several processes on one PostgreSQL: test/postgres-concurrency.test.ts.)
    test('writes and decisions in flight at once, on one tenant and on several: nothing lost, every chain verifies, decisions replay', async (t) => {
      const env = await setupWith(f);
      t.after(env.dispose);
      const tenants = [T, 'globex', 'initech'];
      for (const tenant of tenants.slice(1)) await env.mem.registerPrincipal({ tenant, id: P.alice, kind: 'user', domain: 'alice' });
      const jobs: Array<Promise<{ kind: 'write' | 'decide'; tenant: string; id: string }>> = [];
      for (let i = 0; i < 60; i++) {
        const mem = env.mem;
        const tenant = i % 3 === 0 ? T : (tenants[i % tenants.length] as string);
        jobs.push(mem.write({ tenant, scope: 'c', principal: P.alice, content: `concurrent note ${i}`, session: `ses-${i % 5}` }).then((r) => ({ kind: 'write' as const, tenant, id: r.record.id })));
        jobs.push(mem.authorize({ tenant, action: { type: 'pay', args: { to: `ACCT-${i}`, amount: i } }, session: `ses-${i % 5}` }).then((d) => ({ kind: 'decide' as const, tenant, id: d.id })));
      }
      const done = await Promise.all(jobs);
      for (const tenant of tenants) {
        const listed = new Set((await env.mem.list({ tenant, limit: 1000 })).map((r) => r.id));
        for (const w of done.filter((x) => x.kind === 'write' && x.tenant === tenant)) assert.ok(listed.has(w.id), `acknowledged write ${w.id} is present`);
      }
      const report = await env.mem.verifyAudit({});
      assert.equal(report.ok, true, report.tenants.map((x) => x.message).join('; '));
      for (const d of done.filter((x) => x.kind === 'decide')) assert.equal((await env.mem.replay({ tenant: d.tenant, decisionId: d.id })).matches, true, d.id);
    });
  });
}
