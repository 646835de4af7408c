/**
 * A corroboration below the policy's floor is rejected `below_min_authority` whatever its
 * evidence (core/corroboration.ts), so its `memory:` evidence's lineage is never read: a channel
 * cannot make every read and decision of a tenant's record walk a lineage graph it built, by
 * corroborating the record with a record of that graph as evidence (api/provenance.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { P, T, setup } from './helpers.js';

test('below-floor memory: evidence: the rejection is the same and its lineage is not read by get, search or the gate', async () => {
  const env = await setup();
  try {
    const { mem } = env;
    const fact = (await mem.write({ tenant: T, scope: 'pay', principal: P.alice, content: 'Northwind is paid at NW-AP-1' })).record;
    const pages: string[] = [];
    for (let i = 0; i < 30; i++) pages.push((await mem.write({ tenant: T, scope: 'web', principal: P.browser, content: `page ${i}`, source: `https://pages.example/${i}` })).record.id);
    const top = await mem.derive({ tenant: T, scope: 'web', principal: P.browser, from: pages, content: 'all the pages', transform: 'merge' });
    const c = await mem.corroborate({ tenant: T, recordId: fact.id, principal: P.browser, evidence: `memory:${top.id}` });
    assert.equal(c.counted, false);
    assert.equal(c.rejection, 'below_min_authority');
    // every lineage walk from now on, with the ids it starts from
    const walked: string[][] = [];
    const driver = mem.driver as unknown as { lineage: (t: string, ids: readonly string[]) => Promise<unknown> };
    const inner = driver.lineage.bind(driver);
    driver.lineage = (t, ids) => {
      walked.push([...ids]);
      return inner(t, ids);
    };
    const v = await mem.get({ tenant: T, id: fact.id });
    assert.equal(v.actionAuthority, 'user_confirmed');
    await mem.search({ tenant: T, scope: 'pay', query: 'Northwind' });
    const d = await mem.authorize({ tenant: T, action: { type: 'pay', args: { to: 'NW-AP-1', amount: 5 } }, dependsOn: [fact.id], context: 'declared' });
    assert.ok(d.dependencies.some((x) => x.memoryId === fact.id && x.actionAuthority === 'user_confirmed'));
    assert.ok(walked.length > 0, 'the views walked the fact’s own lineage');
    for (const ids of walked) assert.ok(!ids.includes(top.id), `a walk from ${JSON.stringify(ids)} reads the evidence's lineage`);
  } finally {
    await env.dispose();
  }
});
