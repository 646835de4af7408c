/**
 * Record views a page at a time (issue 16, finding 2): the rows of a page of hits are checked
 * against their audit entries in one batched read. The views are the same, byte for byte, as the
 * per-row reference (the same facade over a store without the batched read, which checks each
 * row with its own `auditRange`), forged rows still carry no authority, and the store reads of a
 * page do not grow with its number of hits (docs/design.md § Audit log, § What the model sees).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { OpContext } from '../src/api/context.js';
import { Memory } from '../src/api/memory.js';
import { views } from '../src/api/records.js';
import { mulberry32 } from '../src/bench/stats.js';
import { loadPolicy } from '../src/core/policy.js';
import type { MemoryRecord } from '../src/core/types.js';
import type { StorageDriver } from '../src/store/driver.js';
import { type Env, P, T, TEST_POLICY, manualClock, setup } from './helpers.js';

const WORDS = ['invoice', 'vendor', 'payment', 'account', 'terms', 'contract', 'renewal', 'bank', 'wire', 'routing', 'ledger', 'quarter'];
const clock = manualClock('2026-01-01T00:00:00.000Z');
let env: Env;
const ids: string[] = [];
const forged: string[] = [];

/** The driver as a store without the batched audit read: the per-row reference; `reads` counts every port read. */
function wrap(driver: StorageDriver, opts: { batched: boolean }, reads = { n: 0 }): StorageDriver {
  return new Proxy(driver, {
    get(target, key) {
      if (key === 'auditEntriesAt' && !opts.batched) return undefined;
      const v = Reflect.get(target, key, target) as unknown;
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        if (key !== 'transaction' && key !== 'changeToken' && key !== 'close') reads.n += 1;
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

const facade = (driver: StorageDriver): Memory => new Memory({ driver, policy: loadPolicy(TEST_POLICY), clock: clock.now, checkpointKey: null, cache: false });
const ctxOf = (mem: Memory): OpContext => (mem as unknown as { ctx: OpContext }).ctx;

before(async () => {
  env = await setup({ clock: clock.now });
  const { mem } = env;
  const r = mulberry32(16);
  const pick = <X>(xs: readonly X[]): X => xs[Math.floor(r() * xs.length)] as X;
  const text = (i: number): string => `record ${i} ${Array.from({ length: 6 }, () => pick(WORDS)).join(' ')}`;
  for (let i = 0; i < 160; i++) {
    const roll = r();
    if (roll < 0.2 && ids.length > 5) {
      const from = [...new Set([pick(ids), pick(ids)])];
      ids.push((await mem.derive({ tenant: T, principal: pick([P.agent, P.pipeline]), from, content: text(i), transform: 'summarize' })).id);
    } else if (roll < 0.3 && ids.length > 5) {
      const session = `s${i}`;
      await mem.search({ tenant: T, scope: 'vendors', query: pick(WORDS), session, requester: P.agent, limit: 3 });
      ids.push((await mem.write({ tenant: T, scope: 'vendors', principal: P.agent, content: text(i), session, requester: P.agent })).record.id);
    } else {
      const p = pick([P.alice, P.browser, P.mallory, P.pipeline, P.bank]);
      const source = p === P.browser && r() < 0.5 ? `https://web.example/p${i}` : undefined;
      ids.push((await mem.write({ tenant: T, scope: 'vendors', principal: p, content: text(i), ...(source ? { source } : {}) })).record.id);
    }
    if (r() < 0.25) {
      const evidence = r() < 0.3 ? `memory:${pick(ids)}` : `registry:check-${i}`;
      // refused when the record is deleted: the corpus goes on
      await mem.corroborate({ tenant: T, recordId: pick(ids), principal: pick([P.bank, P.registry, P.crm, P.alice, P.browser]), evidence }).catch(() => undefined);
    }
    if (r() < 0.03) await mem.delete({ tenant: T, id: pick(ids), principal: P.alice });
  }
  // rows altered outside the API: they must show no authority in either implementation
  env.db.exec('DROP TRIGGER records_provenance_immutable');
  const below = (await mem.driver.getRecords(T, ids)).filter((x) => x.taint.lowestAuthority !== 'user_confirmed' && x.status === 'active');
  for (const id of below.filter((_, i) => i % 17 === 5).map((x) => x.id)) {
    env.db.prepare("UPDATE records SET taint_lowest = 'user_confirmed', origin_authority = 'user_confirmed' WHERE id = ?").run(id);
    forged.push(id);
  }
});

after(async () => {
  await env.dispose();
});

test('page views and per-hit views equal the per-row reference, byte for byte, for random queries', async () => {
  const batched = facade(env.mem.driver);
  const reference = facade(wrap(env.mem.driver, { batched: false }));
  const r = mulberry32(99);
  let compared = 0;
  for (let q = 0; q < 60; q++) {
    const query = Array.from({ length: 1 + Math.floor(r() * 2) }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' ');
    const hits = await batched.search({ tenant: T, scope: 'vendors', query, limit: 1 + Math.floor(r() * 12) });
    assert.equal(JSON.stringify(hits), JSON.stringify(await reference.search({ tenant: T, scope: 'vendors', query, limit: hits.length || 1 })));
    const page = await views(
      ctxOf(batched),
      T,
      hits.map((h) => h.record),
    );
    const one: string[] = [];
    for (const h of hits) {
      const want = JSON.stringify(await reference.get({ tenant: T, id: h.record.id }));
      assert.equal(JSON.stringify(await batched.get({ tenant: T, id: h.record.id })), want, `get ${h.record.id}`);
      one.push(want);
      compared += 1;
    }
    assert.deepEqual(
      page.map((v) => JSON.stringify(v)),
      one,
      `page of ${query}`,
    );
  }
  assert.ok(compared > 100, `${compared} views compared`);
  // deleted records, derived ones and forged ones, also outside search (which shows active records only)
  const all = await env.mem.list({ tenant: T, limit: 1000, includeDeleted: true });
  const page = await views(ctxOf(batched), T, all);
  const refPage = await views(ctxOf(reference), T, all);
  assert.equal(JSON.stringify(page), JSON.stringify(refPage));
  assert.ok(all.some((x) => x.status === 'deleted') && all.some((x) => x.derivedFrom.length > 0));
});

test('a forged row is still checked against its audit entry in a batch: no authority', async () => {
  assert.ok(forged.length > 0);
  const batched = facade(env.mem.driver);
  const recs = await env.mem.driver.getRecords(T, ids);
  for (const v of await views(ctxOf(batched), T, recs)) {
    if (forged.includes(v.id)) assert.equal(v.actionAuthority, 'external_untrusted', v.id);
  }
});

test('the store reads of a page of hits do not grow with the number of hits', async () => {
  const count = async (recs: MemoryRecord[]): Promise<number> => {
    const reads = { n: 0 };
    await views(ctxOf(facade(wrap(env.mem.driver, { batched: true }, reads))), T, recs);
    return reads.n;
  };
  const all = await env.mem.driver.getRecords(T, ids);
  // records without lineage: the reads of 1 hit for 10 (one more when a corroboration cites a
  // memory: that evidence's lineage, read once for the page)
  const roots = all.filter((x) => x.derivedFrom.length === 0 && x.sessionContext === undefined);
  assert.ok(roots.length >= 30);
  const one = await count(roots.slice(0, 1));
  // the most a single hit of these costs (record ids are random, so which roots share a page is too)
  let most = one;
  for (const x of roots.slice(0, 30)) most = Math.max(most, await count([x]));
  for (const page of [roots.slice(0, 10), roots.slice(10, 20), roots.slice(20, 30)]) {
    const n = await count(page);
    assert.ok(n <= most + 2, `a page of 10 roots: ${n} reads (a single one: at most ${most})`);
  }
  // any page: bounded by a constant (lineage is read a generation at a time), never per hit
  const perRow = { n: 0 };
  for (const x of all.slice(0, 10)) await views(ctxOf(facade(wrap(env.mem.driver, { batched: false }, perRow))), T, [x]);
  for (let i = 0; i + 10 <= all.length; i += 10) {
    const n = await count(all.slice(i, i + 10));
    assert.ok(n <= one + 12, `page ${i}: ${n} reads (1 hit: ${one})`);
  }
  assert.ok(perRow.n > 3 * one, `the per-row reference reads ${perRow.n} for 10 single views`);
});

test('SQLite: the SQL statements of a lineage do not grow with its depth, and the walk finds every ancestor', async () => {
  const { mem } = env;
  const chain = [(await mem.write({ tenant: T, scope: 'chain', principal: P.alice, content: 'chain root' })).record.id];
  for (let i = 1; i <= 40; i++) chain.push((await mem.derive({ tenant: T, principal: P.agent, from: [chain[i - 1] as string], content: `chain link ${i}`, transform: 'summarize' })).id);
  // every statement run on this connection while `fn` runs
  const counted = async <X>(fn: () => Promise<X>): Promise<{ value: X; statements: number }> => {
    const proto = Object.getPrototypeOf(env.db.prepare('SELECT 1')) as Record<string, (...a: unknown[]) => unknown>;
    const saved = { all: proto.all, get: proto.get, iterate: proto.iterate };
    let statements = 0;
    for (const m of ['all', 'get', 'iterate'] as const) {
      const orig = saved[m] as (...a: unknown[]) => unknown;
      proto[m] = function (this: unknown, ...a: unknown[]) {
        statements += 1;
        return orig.apply(this, a);
      };
    }
    try {
      return { value: await fn(), statements };
    } finally {
      Object.assign(proto, saved);
    }
  };
  const shallow = await counted(() => mem.driver.lineage(T, [chain[2] as string]));
  const deep = await counted(() => mem.driver.lineage(T, [chain[40] as string]));
  assert.deepEqual([...shallow.value.keys()].sort(), chain.slice(0, 3).sort());
  assert.deepEqual([...deep.value.keys()].sort(), [...chain].sort());
  for (let i = 1; i <= 40; i++)
    assert.deepEqual(
      deep.value.get(chain[i] as string)?.map((e) => e.from),
      [chain[i - 1]],
    );
  assert.deepEqual(deep.value.get(chain[0] as string), []);
  assert.equal(deep.statements, shallow.statements, `depth 40: ${deep.statements} statements, depth 2: ${shallow.statements}`);
});
