/**
 * The write-surface inventory's store reads (src/store/driver.ts SurfaceStore, src/store/sql/surfaces.ts):
 * each record's source rule as SQL computes it equals the policy's first-match rule (globs with
 * SQL's own wildcard characters in them, case, rules bound to principals), the counts of a window,
 * the decisions per tier that cited each surface, the bounds, and tenant isolation.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { surfaceInventory } from '../../src/api/surfaces.js';
import type { PolicyInput } from '../../src/core/policy.js';
import type { SurfacePath } from '../../src/store/driver.js';
import { P, T, TEST_POLICY, manualClock, registerCast } from '../helpers.js';
import type { StoreFactory } from './common.js';

const RULES = [
  { match: 'file:/data/100%_[x]?.txt', authority: 'trusted_tool_verified', principals: ['crm'] as string[] },
  { match: 'Ticket:*', authority: 'external_untrusted' },
  { match: 'note:\\*', authority: 'model_inferred' },
  ...(TEST_POLICY.sources ?? []),
] as const satisfies readonly NonNullable<PolicyInput['sources']>[number][];
const POLICY: PolicyInput = { ...TEST_POLICY, sources: [...RULES] };

/** The reference: core/policy.ts's first-match rule, written out (`*` = any run, nothing else special). */
function expectedPath(source: string, writer: string): SurfacePath {
  const i = RULES.findIndex((r) => {
    if ('principals' in r && !(r.principals as readonly string[]).includes(writer)) return false;
    const re = new RegExp(
      `^${r.match
        .split('*')
        .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
      's',
    );
    return re.test(source);
  });
  return i >= 0 ? i : source === `principal:${writer}` ? 'self' : 'default';
}

const WRITES: readonly (readonly [string, string])[] = [
  [P.crm, 'file:/data/100%_[x]?.txt'],
  [P.crm, 'file:/data/100X_[x]?.txt'],
  [P.crm, 'file:/data/100%_x?.txt'],
  [P.crm, 'file:/data/100%_[x]!.txt'],
  [P.browser, 'file:/data/100%_[x]?.txt'],
  [P.mallory, 'Ticket:1'],
  [P.agent, 'ticket:1'],
  [P.agent, 'note:\\anything'],
  [P.browser, 'https://evil.example/pay'],
  [P.browser, 'HTTPS://evil.example/pay'],
  [P.crm, 'crm:Acct/7'],
  [P.alice, 'principal:alice'],
  [P.pipeline, 'principal:pipeline'],
  [P.bank, 'bankapi:iban/1'],
];

/** Cases for the factory's store. */
export function surfaces(f: StoreFactory): void {
  test('each record lands on the rule core/policy.ts would pick; writes, erasures and high-tier dependencies are counted per surface', async (t) => {
    const clock = manualClock('2026-01-10T00:00:00.000Z');
    const env = await f.open({ policy: POLICY, clock: clock.now });
    t.after(env.dispose);
    const { mem } = env;
    await registerCast(mem);
    await registerCast(mem, 'other');
    await mem.write({ tenant: T, scope: 's', principal: P.browser, content: 'before the window', source: 'https://old.example/' });
    await mem.write({ tenant: 'other', scope: 's', principal: P.browser, content: 'another tenant', source: 'https://x.example/' });
    clock.advance(8 * 86_400_000);
    const ids: string[] = [];
    for (const [principal, source] of WRITES) {
      ids.push((await mem.write({ tenant: T, scope: 's', principal, content: `from ${source}`, source, ...(principal === P.alice ? { expiresAt: '2027-01-01T00:00:00.000Z' } : {}) })).record.id);
    }
    await mem.delete({ tenant: T, id: ids[6] as string, principal: P.alice });
    const web = ids[8] as string;
    const pay = { type: 'pay', args: { to: 'ACCT-1', amount: 5 } };
    await mem.authorize({ tenant: T, action: pay, dependsOn: [web] });
    await mem.authorize({ tenant: T, action: pay, dependsOn: [web, ids[9] as string] });
    await mem.authorize({ tenant: T, action: { type: 'answer', args: { q: 'x' } }, dependsOn: [ids[13] as string] });

    const now = new Date(clock.now().getTime() + 1);
    const since = new Date(now.getTime() - 86_400_000).toISOString();
    const rules = POLICY.sources.map((r) => ({ match: r.match, principals: 'principals' in r ? [...(r.principals as readonly string[])] : null }));
    const c = await mem.driver.surfaceCounts(T, { since, until: now.toISOString(), rules, maxRecords: 1000, maxDecisions: 1000 });
    const got = new Map<string, number>();
    for (const w of c.writes) got.set(`${w.principal} ${String(w.path)}`, (got.get(`${w.principal} ${String(w.path)}`) ?? 0) + w.writes);
    const want = new Map<string, number>();
    for (const [p, s] of WRITES) want.set(`${p} ${String(expectedPath(s, p))}`, (want.get(`${p} ${String(expectedPath(s, p))}`) ?? 0) + 1);
    assert.deepEqual([...got].sort(), [...want].sort(), 'SQL rule matching equals the policy reference (no LIKE/GLOB wildcard leaks, case-sensitive)');
    assert.equal(c.recordsRead, WRITES.length, 'only this tenant and this window');
    assert.equal(c.decisionsRead, 3);

    const inv = await surfaceInventory(mem, { tenant: T, since: '1d', now });
    const row = (id: string) => inv.surfaces.find((s) => s.id === id);
    const https = row('rule:3');
    assert.equal(https?.name, 'https://*');
    assert.deepEqual([https?.observed.writes, https?.observed.tiers.high.decisions, https?.observed.tiers.high.dependencies, https?.observed.tiers.high.deny], [1, 2, 2, 2]);
    const browser = row(`principal:${P.browser}`);
    assert.deepEqual(
      [browser?.kind, browser?.domain, browser?.observed.writes, browser?.observed.tiers.high.decisions, browser?.observed.tiers.high.dependencies],
      ['tool', 'browser.vendor', 3, 2, 3],
    );
    assert.equal(row(`principal:${P.bank}`)?.observed.tiers.read_only.allow, 1);
    assert.equal(row(`principal:${P.agent}`)?.observed.erased, 1);
    assert.equal(row(`principal:${P.alice}`)?.observed.expiring, 1);
    assert.equal(row('rule:0')?.owner, P.crm);
    // alice and the pipeline each speaking for itself (another principal's principal:<id> is refused)
    assert.equal(row('self')?.observed.writes, 2);
    assert.equal(inv.window.complete, true);
  });

  test('the reads are bounded: the newest records and decisions of the window, and the inventory says when it did not see all', async (t) => {
    const env = await f.open({ policy: POLICY });
    t.after(env.dispose);
    const { mem } = env;
    await registerCast(mem);
    for (let i = 0; i < 5; i++) await mem.write({ tenant: T, scope: 's', principal: P.browser, content: `page ${i}`, source: `https://site.example/${i}` });
    const now = new Date(Date.now() + 1000);
    const q = { since: '2000-01-01T00:00:00.000Z', until: now.toISOString(), rules: [], maxRecords: 3, maxDecisions: 3 };
    const c = await mem.driver.surfaceCounts(T, q);
    assert.equal(c.recordsRead, 3);
    assert.deepEqual(
      c.writes.map((w) => [w.principal, w.path, w.writes]),
      [[P.browser, 'default', 3]],
    );
    const empty = await surfaceInventory(mem, { tenant: 'nobody', now });
    assert.match(empty.hint ?? '', /no principals and no records/);
    assert.equal((await surfaceInventory(mem, { tenant: T, now })).hint, undefined);
  });
}
