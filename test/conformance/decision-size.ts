/**
 * Bounds on what one decision and one page of decisions cost (docs/design.md § Action gate): an
 * action whose argument values occur in more than `MAX_VALUE_REFERENCES` places in the records it
 * depends on is refused before anything is decided or recorded, and a page of a tenant's
 * decisions stops once their JSON holds `DECISION_PAGE_CHARS` characters — the stored decisions
 * an external principal can make, each as large as its values times the records that hold them,
 * cannot make one list request parse and return tens of megabytes.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_VALUE_REFERENCES } from '../../src/api/authorize-values.js';
import { listDecisions } from '../../src/api/decisions.js';
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
      for (let i = 0; i < 12; i++) ids.push((await mem.write({ tenant: T, scope: 's', principal: P.agent, content: `page ${i}: ${values.join(' ')}` })).record.id);
      const action = { type: 'send_email', args: { to: 'ops@example.org', subject: 'x', body: values.join(' '), tags: values } };
      const before = (await mem.listDecisions({ tenant: T, limit: 1000 })).length;
      // 10 records × 101 values (the tags and the body): 1,010 references, under the bound
      await mem.authorize({ tenant: T, action, dependsOn: ids.slice(0, 10), context: 'declared' });
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

    test('beforeRecord sees the bytes a made decision will store before any is written: throwing records nothing (no decision, no audit entry, no confirmation use)', async (t) => {
      const env = await setupWith(f);
      t.after(env.dispose);
      const { mem } = env;
      const rec = (await mem.write({ tenant: T, scope: 's', principal: P.alice, content: 'vendor ACCT-1 is paid monthly' })).record.id;
      const action = { type: 'pay', args: { to: 'ACCT-1', amount: 5 } };
      const conf = await mem.confirm({ tenant: T, principal: P.alice, action, memoryIds: [rec] });
      const head = async (): Promise<number> => (await mem.verifyAudit({ tenant: T })).tenants[0]!.chain.entries;
      const entries = await head();
      const seen: number[] = [];
      await assert.rejects(
        mem.authorize(
          { tenant: T, action, dependsOn: [rec], context: 'declared' },
          {
            beforeRecord: (bytes) => {
              seen.push(bytes);
              throw new Error('over quota');
            },
          },
        ),
        /over quota/,
      );
      assert.equal(seen.length, 1);
      assert.equal((await mem.listDecisions({ tenant: T })).length, 0);
      assert.equal(await head(), entries, 'no audit entry');
      // the confirmation was not used: the next call is allowed by it, and charged what it stored
      const d = await mem.authorize({ tenant: T, action, dependsOn: [rec], context: 'declared' }, { beforeRecord: (bytes) => void seen.push(bytes) });
      assert.equal(d.outcome, 'allow');
      assert.equal(d.confirmationId, conf.id);
      assert.ok(seen[1]! >= 2 * Buffer.byteLength(JSON.stringify(d), 'utf8'), `charged ${seen[1]} bytes for a decision of ${JSON.stringify(d).length} characters, stored twice`);
      assert.equal((await mem.verifyAudit({ tenant: T })).ok, true);
    });

    test('beforeRecord on write, derive and supersede: a throwing or asynchronous hook records nothing — no record, audit entry, session claim or read-log row', async (t) => {
      const env = await setupWith(f);
      t.after(env.dispose);
      const { mem } = env;
      const fact = (await mem.write({ tenant: T, scope: 's', principal: P.alice, content: 'vendor ACCT-1 is paid monthly' })).record;
      const entries = async (): Promise<number> => (await mem.verifyAudit({ tenant: T })).tenants[0]!.chain.entries;
      const before = await entries();
      const refuse = {
        beforeRecord: (): undefined => {
          throw new Error('over quota');
        },
      };
      const later = { beforeRecord: async (): Promise<void> => undefined } as unknown as { beforeRecord: (bytes: number) => undefined };
      for (const options of [refuse, later]) {
        const invalid = (e: unknown): boolean => (options === later ? isMemauthError(e) && e.code === 'INVALID_ARGUMENT' : /over quota/.test(String(e)));
        await assert.rejects(mem.write({ tenant: T, scope: 's', principal: P.agent, content: 'a note', session: 'fresh-1' }, options), invalid);
        await assert.rejects(mem.derive({ tenant: T, scope: 's', principal: P.agent, from: [fact.id], content: 'a summary', transform: 'summarize', session: 'fresh-2' }, options), invalid);
        await assert.rejects(mem.supersede({ tenant: T, id: fact.id, principal: P.alice, content: 'vendor ACCT-1 is paid weekly', reason: 'changed', session: 'fresh-3' }, options), invalid);
      }
      assert.equal(await entries(), before, 'no audit entry');
      assert.equal((await mem.list({ tenant: T, scope: 's' })).length, 1);
      // the sessions were never claimed: another principal may use them
      for (const session of ['fresh-1', 'fresh-2', 'fresh-3']) await mem.write({ tenant: T, scope: 's', principal: P.pipeline, content: `the pipeline in ${session}`, session, requester: P.pipeline });
      const bytes: number[] = [];
      await mem.write({ tenant: T, scope: 's', principal: P.agent, content: 'a note', session: 'fresh-4' }, { beforeRecord: (n) => void bytes.push(n) });
      assert.ok(bytes.length === 1 && bytes[0]! > 400, `${bytes[0]} bytes of metadata`);
      assert.equal((await mem.verifyAudit({ tenant: T })).ok, true);
    });

    test('listDecisions with requester: the newest `limit` decisions that principal requested, however many others decided since', async (t) => {
      const env = await setupWith(f);
      t.after(env.dispose);
      const { mem } = env;
      const mine = await mem.authorize({ tenant: T, action: { type: 'send_email', args: { to: 'bob@example.org' } }, requester: P.agent });
      for (let i = 0; i < 30; i++) await mem.authorize({ tenant: T, action: { type: 'pay', args: { to: `ACCT-${i}`, amount: 1 } } });
      assert.deepEqual(
        (await mem.listDecisions({ tenant: T, limit: 1, requester: P.agent })).map((d) => d.id),
        [mine.id],
      );
      assert.equal((await mem.listDecisions({ tenant: T, limit: 5 })).length, 5);
      assert.deepEqual(await mem.listDecisions({ tenant: T, requester: 'nobody' }), []);
    });

    test('a page of decisions stops once their JSON holds the page budget of characters (the first is always returned); pages of decisions made at one instant neither repeat nor skip one', async (t) => {
      // every decision at the same instant: the pages are ordered and continued by id alone
      const env = await setupWith(f, { clock: () => new Date('2030-01-01T00:00:00.000Z') });
      t.after(env.dispose);
      const { mem } = env;
      const rec = (await mem.write({ tenant: T, scope: 's', principal: P.alice, content: 'vendor ACCT-1 is paid monthly' })).record.id;
      for (let i = 0; i < 30; i++) await mem.authorize({ tenant: T, action: { type: 'pay', args: { to: 'ACCT-1', amount: i + 1 } }, dependsOn: [rec], context: 'declared' });
      const all = await mem.listDecisions({ tenant: T, limit: 1000 });
      assert.equal(all.length, 30);
      const size = all.map((d) => JSON.stringify(d).length);
      const ids = all.map((d) => d.id);
      const page = async (limit: number, maxChars: number) => (await listDecisions({ driver: mem.driver }, { tenant: T, limit }, maxChars)).map((d) => d.id);
      // newest first: the third pushes the page past the budget, so nothing follows it
      assert.deepEqual(await page(100, (size[0] ?? 0) + (size[1] ?? 0) + 1), ids.slice(0, 3));
      assert.deepEqual(await page(100, 1), ids.slice(0, 1));
      assert.deepEqual(await page(27, 1e9), ids.slice(0, 27), 'more than one chunk, up to the limit');
      assert.deepEqual(await page(100, 1e9), ids);
      // the same as one query of the store (no chunks)
      assert.deepEqual(
        (await mem.driver.listDecisions(T, 1000)).map((d) => d.id),
        ids,
      );
      assert.equal(new Set(ids).size, 30);
    });
  });
}
