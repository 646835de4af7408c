/**
 * Bounds on what one decision and one page of decisions cost (docs/design.md § Action gate): an
 * action whose argument values occur in more than `MAX_VALUE_REFERENCES` places in the records it
 * depends on is refused before anything is decided or recorded, and a page of a tenant's
 * decisions stops once their bodies hold `DECISION_PAGE_CHARS` characters — the stored decisions
 * an external principal can make, each as large as its values times the records that hold them,
 * cannot make one list request parse and return tens of megabytes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_VALUE_REFERENCES } from '../../src/api/authorize-values.js';
import { DECISION_PAGE_CHARS } from '../../src/store/sql/statements.js';
import { isMemauthError } from '../../src/core/errors.js';
import { P, T } from '../helpers.js';
import { type StoreFactory, setupWith } from './common.js';

/** Register the decision-size cases for the factory's store. */
export function decisionSize(f: StoreFactory): void {
  describe('what one decision and one page of decisions may cost', () => {
    test(`values occurring in more than ${MAX_VALUE_REFERENCES} places are refused (INVALID_ARGUMENT) and nothing is recorded; fewer are decided`, async (t) => {
      const env = await setupWith(f);
      t.after(env.dispose);
      const { mem } = env;
      const values = Array.from({ length: 100 }, (_, i) => `tok${String(i).padStart(3, '0')}`);
      const ids: string[] = [];
      for (let i = 0; i < 42; i++) ids.push((await mem.write({ tenant: T, scope: 's', principal: P.agent, content: `page ${i}: ${values.join(' ')}` })).record.id);
      const action = { type: 'send_email', args: { to: 'ops@example.org', subject: 'x', body: values.join(' '), tags: values } };
      const before = (await mem.listDecisions({ tenant: T, limit: 1000 })).length;
      // 40 records × 101 values (the tags and the body): 4,040 references, under the bound
      await mem.authorize({ tenant: T, action, dependsOn: ids.slice(0, 40), context: 'declared' });
      await assert.rejects(
        mem.authorize({ tenant: T, action, dependsOn: ids, context: 'declared' }),
        (e: unknown) =>
          isMemauthError(e) &&
          e.code === 'INVALID_ARGUMENT' &&
          ((e.details as { references?: number }).references ?? 0) > MAX_VALUE_REFERENCES &&
          (e.details as { limit?: number }).limit === MAX_VALUE_REFERENCES,
      );
      assert.equal((await mem.listDecisions({ tenant: T, limit: 1000 })).length, before + 1);
      assert.equal((await mem.verifyAudit({ tenant: T })).ok, true);
    });

    test('a page of decisions stops once their bodies hold the page budget of characters (the first is always returned)', async (t) => {
      const env = await setupWith(f);
      t.after(env.dispose);
      const third = Math.floor(DECISION_PAGE_CHARS / 3) + 1;
      const insert = (tenant: string, i: number, chars: number) =>
        env.raw.query('INSERT INTO decisions (id, tenant, session_id, at, outcome, body, audit_seq) VALUES (?, ?, ?, ?, ?, ?, ?)', [
          `dec_${tenant}_${i}`,
          tenant,
          null,
          `2030-01-01T00:00:0${i}.000Z`,
          'deny',
          JSON.stringify({ id: `dec_${tenant}_${i}`, pad: 'x'.repeat(chars) }),
          0,
        ]);
      for (let i = 0; i < 5; i++) await insert('a', i, third);
      await insert('b', 0, 10);
      await insert('b', 1, 2 * DECISION_PAGE_CHARS);
      // newest first; each body a third of the budget: the fourth would start past it
      assert.deepEqual(
        (await env.mem.driver.listDecisions('a', 10)).map((d) => d.id),
        ['dec_a_4', 'dec_a_3', 'dec_a_2'],
      );
      assert.deepEqual(
        (await env.mem.driver.listDecisions('a', 2)).map((d) => d.id),
        ['dec_a_4', 'dec_a_3'],
      );
      // one body over the whole budget is still a page of one
      assert.deepEqual(
        (await env.mem.driver.listDecisions('b', 10)).map((d) => d.id),
        ['dec_b_1'],
      );
    });
  });
}
