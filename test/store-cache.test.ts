/**
 * Group commit (SQLite driver) and the facade's read cache: a cached Memory must decide exactly
 * as an uncached one, whatever happens behind its back — rows altered out of band, another
 * connection deleting a record or using a confirmation, a group COMMIT that fails.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Memory } from '../src/api/memory.js';
import { DEFAULT_POLICY, type PolicyInput, loadPolicy } from '../src/core/policy.js';
import type { Decision } from '../src/core/types.js';
import { SqliteDriver } from '../src/store/sqlite/driver.js';
import { rmDir, tempDir } from './support/tmp.js';

const base = DEFAULT_POLICY as PolicyInput & { sources: unknown[] };
const POLICY = loadPolicy({ ...base, sources: [{ match: 'erp://*', authority: 'trusted_tool_verified' }, ...base.sources] });
const T = 'acme';

function scratchDir(): { dir: string; done: () => void } {
  const dir = tempDir('memauth-cache-');
  return { dir, done: () => rmDir(dir) };
}

function open(path: string, opts: { group?: boolean; cache?: boolean } = {}): Memory {
  return new Memory({ driver: SqliteDriver.open({ path, groupCommit: opts.group ?? false }), policy: POLICY, checkpointKey: null, cache: opts.cache ?? true });
}

async function principals(mem: Memory): Promise<void> {
  await mem.registerPrincipal({ tenant: T, id: 'alice', kind: 'user', domain: 'acme-staff' });
  await mem.registerPrincipal({ tenant: T, id: 'assistant', kind: 'agent', domain: 'agent-runtime' });
  await mem.registerPrincipal({ tenant: T, id: 'erp1', kind: 'tool', domain: 'erp-a' });
  await mem.registerPrincipal({ tenant: T, id: 'erp2', kind: 'tool', domain: 'erp-b' });
  await mem.registerPrincipal({ tenant: T, id: 'erp1b', kind: 'tool', domain: 'erp-a' });
  await mem.registerPrincipal({ tenant: T, id: 'web', kind: 'tool', domain: 'browser' });
}

const pay = (to: string, amount: number) => ({ type: 'pay', args: { to, amount } });
const codes = (d: Decision): string[] => d.reasons.map((r) => r.code);

test('group commit: concurrent transactions share a COMMIT, each resolves after it, and one that throws rolls back alone', async () => {
  const { dir, done } = scratchDir();
  try {
    const path = join(dir, 'g.db');
    const d = SqliteDriver.open({ path, groupCommit: { maxOps: 64, maxDelayMs: 5 } });
    const other = new Database(path, { readonly: true });
    const seen = (id: string): boolean => other.prepare('SELECT 1 FROM principals WHERE tenant = ? AND id = ?').get(T, id) !== undefined;
    const insert = (id: string, fail = false) =>
      d
        .transaction(T, async (tx) => {
          await tx.insertPrincipal({ tenant: T, id, kind: 'user', maxAuthority: 'user_confirmed', domain: 'd', createdAt: new Date().toISOString() });
          if (fail) throw new Error(`boom ${id}`);
          return id;
        })
        .then((v) => {
          // resolved only once committed: another connection sees it already
          assert.ok(seen(id), `${id} acknowledged before it was committed`);
          return v;
        });
    const results = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => insert(`p${i}`, i % 7 === 3)));
    for (const [i, r] of results.entries()) {
      if (i % 7 === 3) {
        assert.equal(r.status, 'rejected');
        assert.equal(seen(`p${i}`), false, `p${i} threw but was committed`);
      } else {
        assert.equal(r.status, 'fulfilled');
        assert.ok(seen(`p${i}`));
      }
    }
    other.close();
    await d.close();
  } finally {
    done();
  }
});

test('group commit: a failed COMMIT rejects every transaction of the batch and the cache forgets what it held', async () => {
  const { dir, done } = scratchDir();
  try {
    const path = join(dir, 'c.db');
    const mem = open(path, { group: true });
    await principals(mem);
    await mem.write({ tenant: T, scope: 'v', principal: 'alice', content: 'pay vendor-1 amount 100' });
    const raw = (mem.driver as SqliteDriver).unsafeDatabase();
    // a deferred foreign key: the transaction body succeeds, the COMMIT fails
    raw.exec('CREATE TABLE p (id INTEGER PRIMARY KEY); CREATE TABLE c (x INTEGER REFERENCES p(id) DEFERRABLE INITIALLY DEFERRED);');
    const poison = (mem.driver as SqliteDriver).transaction(T, async () => {
      raw.prepare('INSERT INTO c (x) VALUES (42)').run();
    });
    const writes = Array.from({ length: 5 }, (_, i) => mem.write({ tenant: T, scope: 'v', principal: 'alice', content: `pay vendor-${i + 2} amount 200` }));
    const settled = await Promise.allSettled([poison, ...writes]);
    assert.ok(
      settled.every((r) => r.status === 'rejected'),
      'every transaction of the failed batch is rejected',
    );
    raw.exec('DROP TABLE c; DROP TABLE p;');
    // the chain head and records the cache saw in the failed batch were rolled back: nothing stale is used
    const { record } = await mem.write({ tenant: T, scope: 'v', principal: 'alice', content: 'pay vendor-9 amount 900' });
    const dec = await mem.authorize({ tenant: T, action: pay('vendor-9', 900), dependsOn: [record.id], context: 'declared' });
    assert.equal(dec.outcome, 'allow');
    const rep = await mem.verifyAudit({ tenant: T });
    assert.ok(rep.ok, rep.tenants[0]?.message);
    assert.equal((await mem.list({ tenant: T })).length, 2);
    await mem.close();
  } finally {
    done();
  }
});

test('cache: a row altered out of band (triggers dropped) stops counting, exactly as without the cache', async () => {
  const { dir, done } = scratchDir();
  try {
    for (const cache of [true, false]) {
      const mem = open(join(dir, `t-${cache}.db`), { cache });
      await principals(mem);
      const { record } = await mem.write({ tenant: T, scope: 'v', principal: 'web', content: 'pay vendor-66 amount 66', source: 'https://evil.example/x' });
      const first = await mem.authorize({ tenant: T, action: pay('vendor-66', 66), dependsOn: [record.id], context: 'declared' });
      assert.deepEqual(codes(first).includes('untrusted_origin'), true);
      const raw = (mem.driver as SqliteDriver).unsafeDatabase();
      raw.exec('DROP TRIGGER records_provenance_immutable');
      raw.prepare("UPDATE records SET taint_lowest = 'user_confirmed', origin_authority = 'user_confirmed' WHERE id = ?").run(record.id);
      const after = await mem.authorize({ tenant: T, action: pay('vendor-66', 66), dependsOn: [record.id], context: 'declared' });
      assert.equal(after.outcome, 'deny', `cache=${cache}`);
      assert.ok(codes(after).includes('metadata_missing'), `cache=${cache}: ${codes(after).join(',')}`);
      await mem.close();
    }
  } finally {
    done();
  }
});

test('cache: another connection deleting a record or using a confirmation is seen at the next decision', async () => {
  const { dir, done } = scratchDir();
  try {
    const path = join(dir, 'x.db');
    const a = open(path);
    await principals(a);
    const { record } = await a.write({ tenant: T, scope: 'v', principal: 'alice', content: 'pay vendor-5 amount 500' });
    const ok = await a.authorize({ tenant: T, action: pay('vendor-5', 500), dependsOn: [record.id], context: 'declared' });
    assert.equal(ok.outcome, 'allow');
    const b = open(path);
    await b.delete({ tenant: T, id: record.id });
    const gone = await a.authorize({ tenant: T, action: pay('vendor-5', 500), dependsOn: [record.id], context: 'declared' });
    assert.equal(gone.outcome, 'deny');
    assert.ok(codes(gone).includes('deleted_source'));

    // a single-use confirmation, used by the other connection, cannot be used again here
    const { record: page } = await a.write({ tenant: T, scope: 'v', principal: 'web', content: 'pay vendor-7 amount 700', source: 'https://evil.example/p' });
    const ask = { tenant: T, action: pay('vendor-7', 700), dependsOn: [page.id], context: 'declared' as const };
    assert.equal((await a.authorize(ask)).outcome, 'deny'); // caches the (empty) confirmation list and uses
    await a.confirm({ tenant: T, principal: 'alice', action: pay('vendor-7', 700) });
    assert.equal((await a.authorize(ask)).outcome, 'allow');
    await a.confirm({ tenant: T, principal: 'alice', action: pay('vendor-7', 700) });
    assert.equal((await b.authorize(ask)).outcome, 'allow'); // b uses the second one
    const third = await a.authorize(ask);
    assert.equal(third.outcome, 'deny', 'a confirmation used by another connection was used again');
    assert.ok(codes(third).includes('needs_confirmation'));
    await a.close();
    await b.close();
  } finally {
    done();
  }
});

test('cache: memoised gate verdicts follow corroborations added here or by another connection, forged rows, and memory evidence deleted', async () => {
  const { dir, done } = scratchDir();
  try {
    const path = join(dir, 'v.db');
    const a = open(path);
    await principals(a);
    const { record: fact } = await a.write({ tenant: T, scope: 'v', principal: 'alice', content: 'pay vendor-8 amount 800' });
    const note = await a.derive({ tenant: T, principal: 'assistant', from: [fact.id], transform: 'summarize', content: 'settle vendor-8 amount 800' });
    const ask = { tenant: T, action: pay('vendor-8', 800), dependsOn: [note.id], context: 'declared' as const };
    for (let i = 0; i < 2; i++) assert.equal((await a.authorize(ask)).outcome, 'deny'); // second: memoised
    await a.corroborate({ tenant: T, recordId: note.id, principal: 'erp1', evidence: 'erp://ledger/8' });
    assert.ok(codes(await a.authorize(ask)).includes('missing_corroboration')); // one of two
    const b = open(path);
    await b.corroborate({ tenant: T, recordId: note.id, principal: 'erp2', evidence: 'erp://bank/8' });
    assert.equal((await a.authorize(ask)).outcome, 'allow', 'a corroboration by another connection was not seen');
    assert.equal((await a.authorize(ask)).outcome, 'allow');
    // a forged corroboration row (no audit entry) never counts, memo or not
    const { record: fact2 } = await a.write({ tenant: T, scope: 'v', principal: 'alice', content: 'pay vendor-9 amount 900' });
    const note2 = await a.derive({ tenant: T, principal: 'assistant', from: [fact2.id], transform: 'summarize', content: 'settle vendor-9 amount 900' });
    const ask2 = { tenant: T, action: pay('vendor-9', 900), dependsOn: [note2.id], context: 'declared' as const };
    await a.corroborate({ tenant: T, recordId: note2.id, principal: 'erp1', evidence: 'erp://ledger/9' });
    assert.ok(codes(await a.authorize(ask2)).includes('missing_corroboration'));
    const raw = (a.driver as SqliteDriver).unsafeDatabase();
    const cols = (raw.prepare('PRAGMA table_info(corroborations)').all() as Array<{ name: string }>).map((c) => c.name);
    const row = raw.prepare('SELECT * FROM corroborations WHERE record_id = ?').get(note2.id) as Record<string, unknown>;
    const forged: Record<string, unknown> = { ...row, id: 'cor_forged', principal_id: 'erp2', domain: 'erp-b', evidence_ref: 'erp://bank/9' };
    raw.prepare(`INSERT INTO corroborations (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`).run(...cols.map((c) => forged[c]));
    assert.ok(codes(await a.authorize(ask2)).includes('missing_corroboration'), 'a forged corroboration row counted');
    // memory evidence: its record deleted, the corroboration stops counting at the next decision
    const { record: ev } = await a.write({ tenant: T, scope: 'v', principal: 'erp2', content: 'bank statement vendor-9 900', source: 'erp://bank/statement-9' });
    await a.corroborate({ tenant: T, recordId: note2.id, principal: 'erp2', evidence: `memory:${ev.id}` });
    for (let i = 0; i < 2; i++) assert.equal((await a.authorize(ask2)).outcome, 'allow');
    await a.delete({ tenant: T, id: ev.id });
    assert.ok(codes(await a.authorize(ask2)).includes('missing_corroboration'), 'memory evidence deleted, still counted');
    await a.close();
    await b.close();
  } finally {
    done();
  }
});

test("cache: the lineage summary of a deep chain keeps every writer (a corroborator in the root writer's domain never counts)", async () => {
  const { dir, done } = scratchDir();
  try {
    const path = join(dir, 'd.db');
    let mem = open(path);
    await principals(mem);
    // the root is written by erp1 (domain erp-a); 300 agent rewrites later, erp1b (also erp-a) and erp2 corroborate the tip
    const { record: root } = await mem.write({ tenant: T, scope: 'v', principal: 'erp1', content: 'pay vendor-3 amount 300', source: 'erp://ledger/3' });
    let tip = root.id;
    for (let i = 0; i < 300; i++) tip = (await mem.derive({ tenant: T, principal: 'assistant', from: [tip], transform: 'rewrite', content: `pay vendor-3 amount 300 (v${i})` })).id;
    const c1 = await mem.corroborate({ tenant: T, recordId: tip, principal: 'erp1b', evidence: 'erp://bank/3' });
    assert.equal(c1.rejection, 'writer_or_lineage_domain');
    const c2 = await mem.corroborate({ tenant: T, recordId: tip, principal: 'erp2', evidence: 'erp://bank/3' });
    assert.equal(c2.counted, true);
    assert.equal(c2.independentDomains, 1);
    const ask = { tenant: T, action: pay('vendor-3', 300), dependsOn: [tip], context: 'declared' as const };
    for (let round = 0; round < 2; round++) {
      const d = await mem.authorize(ask); // first: summaries built; second: memoised
      assert.equal(d.outcome, 'deny');
      assert.ok(codes(d).includes('missing_corroboration'));
    }
    await mem.close();
    mem = open(path); // cold: nothing cached
    const cold = await mem.authorize(ask);
    assert.ok(codes(cold).includes('missing_corroboration'));
    const replay = await mem.replay({ tenant: T, decisionId: cold.id });
    assert.equal(replay.matches, true);
    // a third, independent domain lifts it
    await mem.registerPrincipal({ tenant: T, id: 'erp3', kind: 'tool', domain: 'erp-c' });
    await mem.corroborate({ tenant: T, recordId: tip, principal: 'erp3', evidence: 'erp://registry/3' });
    const lifted = await mem.authorize(ask);
    assert.equal(lifted.outcome, 'allow', codes(lifted).join(','));
    assert.equal((await mem.replay({ tenant: T, decisionId: lifted.id })).matches, true);
    await mem.close();
  } finally {
    done();
  }
});

test('cache on and off decide the same on a mixed workload; records come back by id', async () => {
  const { dir, done } = scratchDir();
  try {
    const outcomes: string[][] = [];
    for (const cache of [true, false]) {
      const mem = open(join(dir, `m-${cache}.db`), { cache });
      await principals(mem);
      const out: string[] = [];
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) {
        const w =
          i % 3 === 0
            ? await mem.write({ tenant: T, scope: 'v', principal: 'web', content: `pay vendor-${i} amount ${i * 10}`, source: `https://x.example/${i}` })
            : await mem.write({ tenant: T, scope: 'v', principal: 'alice', content: `pay vendor-${i} amount ${i * 10}` });
        ids.push(w.record.id);
      }
      const note = await mem.derive({ tenant: T, principal: 'assistant', from: [ids[1] as string, ids[3] as string], transform: 'merge', content: 'pay vendor-1 amount 10' });
      await mem.corroborate({ tenant: T, recordId: note.id, principal: 'erp1', evidence: 'erp://a' });
      await mem.corroborate({ tenant: T, recordId: note.id, principal: 'erp2', evidence: `memory:${ids[2] as string}` });
      // session reads by id (search ties are ordered by the random record ids)
      for (const id of [ids[0], ids[2], ids[4], ids[3], note.id] as string[]) await mem.get({ tenant: T, id, session: 's1' });
      for (let i = 0; i < 12; i++) {
        const d = await mem.authorize({
          tenant: T,
          session: i % 2 === 0 ? 's1' : undefined,
          action: pay(`vendor-${i}`, i * 10),
          dependsOn: [ids[i] as string, note.id],
          context: i % 4 === 0 ? 'session' : 'declared',
        });
        out.push(`${d.outcome}:${codes(d).join(',')}`);
        if (i === 5) await mem.delete({ tenant: T, id: ids[3] as string });
      }
      const got = await mem.driver.getRecords(T, [...ids].reverse());
      assert.deepEqual(
        got.map((r) => r.id),
        [...ids].sort(),
      );
      assert.ok((await mem.verifyAudit({ tenant: T })).ok);
      outcomes.push(out);
      await mem.close();
    }
    assert.deepEqual(outcomes[0], outcomes[1]);
  } finally {
    done();
  }
});

test('openMemory({ groupCommit: true }): concurrent writes, derives and decisions keep one valid chain, replayable after reopening', async () => {
  const { dir, done } = scratchDir();
  try {
    const { openMemory } = await import('../src/api/open.js');
    const path = join(dir, 'o.db');
    let mem = await openMemory({ path, policy: POLICY.document, groupCommit: { maxOps: 16, maxDelayMs: 2 } });
    await principals(mem);
    const written = await Promise.all(Array.from({ length: 60 }, (_, i) => mem.write({ tenant: T, scope: 'v', principal: 'alice', content: `pay vendor-${i} amount ${i}` })));
    const derived = await Promise.all(
      written.slice(0, 30).map((w, i) => mem.derive({ tenant: T, principal: 'assistant', from: [w.record.id], transform: 'summarize', content: `vendor-${i} gets ${i}` })),
    );
    const decisions = await Promise.all(
      written.map((w, i) => mem.authorize({ tenant: T, action: pay(`vendor-${i}`, i), dependsOn: [w.record.id, ...(derived[i] ? [derived[i].id] : [])], context: 'declared' })),
    );
    assert.equal(decisions.filter((d) => d.outcome === 'allow').length, 30); // the 30 without an agent note
    await mem.close();
    mem = await openMemory({ path, policy: POLICY.document });
    const rep = await mem.verifyAudit();
    assert.ok(rep.ok, rep.tenants[0]?.message);
    for (const d of decisions.slice(0, 10)) assert.equal((await mem.replay({ tenant: T, decisionId: d.id })).matches, true);
    await mem.close();
  } finally {
    done();
  }
});

test('cache: writes made inside a transaction someone else opened on the raw handle, then rolled back by them, are never served', async () => {
  const driver = SqliteDriver.open({ path: ':memory:' });
  const db = driver.unsafeDatabase();
  const exec = db.exec.bind(db);
  // like the formal enumerator: the driver's transactions become savepoints inside an outer one
  const bracket: Readonly<Record<string, string>> = { 'BEGIN IMMEDIATE': 'SAVEPOINT memauth_tx', COMMIT: 'RELEASE memauth_tx', ROLLBACK: 'ROLLBACK TO memauth_tx; RELEASE memauth_tx' };
  db.exec = ((sql: string) => exec(bracket[sql] ?? sql)) as typeof db.exec;
  const mem = new Memory({ driver, policy: POLICY, checkpointKey: null });
  await principals(mem);
  exec('SAVEPOINT root');
  const { record } = await mem.write({ tenant: T, scope: 'v', principal: 'alice', content: 'pay vendor-8 amount 800' });
  assert.equal((await mem.authorize({ tenant: T, action: pay('vendor-8', 800), dependsOn: [record.id], context: 'declared' })).outcome, 'allow');
  exec('ROLLBACK TO root');
  await assert.rejects(mem.authorize({ tenant: T, action: pay('vendor-8', 800), dependsOn: [record.id], context: 'declared' }), /RECORD_NOT_FOUND|no record/);
  const again = await mem.write({ tenant: T, scope: 'v', principal: 'alice', content: 'pay vendor-9 amount 900' });
  assert.equal((await mem.authorize({ tenant: T, action: pay('vendor-9', 900), dependsOn: [again.record.id], context: 'declared' })).outcome, 'allow');
  exec('RELEASE root');
  assert.ok((await mem.verifyAudit({ tenant: T })).ok);
  await mem.close();
});

test("group commit: confirm, corroborate and delete judge their principal inside their own transaction, never by a batch member's uncommitted row", async () => {
  // Reads made outside a transaction see the open batch's uncommitted writes. A principal row
  // inserted by a batch member that then rolls back (to its savepoint, or with a failed COMMIT)
  // must not let anyone confirm, corroborate or delete in its name.
  const { dir, done } = scratchDir();
  try {
    const mem = open(join(dir, 'd.db'), { group: true });
    await principals(mem);
    const driver = mem.driver as SqliteDriver;
    const { record: page } = await mem.write({ tenant: T, scope: 'v', principal: 'web', content: 'pay vendor-4 amount 400', source: 'https://evil.example/p' });
    const { record: erp } = await mem.write({ tenant: T, scope: 'v', principal: 'erp1', content: 'pay vendor-5 amount 500', source: 'erp://a/5' });
    const ghost = (id: string, kind: 'user' | 'tool', maxAuthority: 'user_confirmed' | 'trusted_tool_verified') => {
      let release = (): void => undefined;
      const gate = new Promise<void>((r) => (release = r));
      // a member of the batch that registers `id`, then fails: its savepoint is rolled back
      const member = driver.transaction(T, async (tx) => {
        await tx.insertPrincipal({ tenant: T, id, kind, maxAuthority, domain: `ghost-${id}`, createdAt: new Date().toISOString() });
        await gate;
        throw new Error('registration failed');
      });
      return {
        member: member.then(
          () => assert.fail('the member should fail'),
          () => undefined,
        ),
        release,
      };
    };
    const settle = () => new Promise((r) => setImmediate(r));

    // confirm in the name of a user row that is never committed
    const g1 = ghost('mallory', 'user', 'user_confirmed');
    await settle();
    const confirmed = mem.confirm({ tenant: T, principal: 'mallory', action: pay('vendor-4', 400) });
    await settle();
    g1.release();
    await g1.member;
    await assert.rejects(confirmed, (e: Error & { code?: string }) => e.code === 'UNKNOWN_PRINCIPAL');
    // mallory is then registered for real, as an agent: no confirmation of hers may exist
    await mem.registerPrincipal({ tenant: T, id: 'mallory', kind: 'agent', domain: 'agent-runtime' });
    const d = await mem.authorize({ tenant: T, action: pay('vendor-4', 400), dependsOn: [page.id], context: 'declared' });
    assert.equal(d.outcome, 'deny', 'an agent got a confirmation through an uncommitted user row');

    // corroborate in the name of a tool row that is never committed
    const g2 = ghost('erp9', 'tool', 'trusted_tool_verified');
    await settle();
    const corroborated = mem.corroborate({ tenant: T, recordId: erp.id, principal: 'erp9', evidence: 'erp://b/5' });
    await settle();
    g2.release();
    await g2.member;
    await assert.rejects(corroborated, (e: Error & { code?: string }) => e.code === 'UNKNOWN_PRINCIPAL');

    // delete in the name of a principal row that is never committed
    const g3 = ghost('eve', 'user', 'user_confirmed');
    await settle();
    const deleted = mem.delete({ tenant: T, id: erp.id, principal: 'eve' });
    await settle();
    g3.release();
    await g3.member;
    await assert.rejects(deleted, (e: Error & { code?: string }) => e.code === 'UNKNOWN_PRINCIPAL');
    assert.equal((await mem.get({ tenant: T, id: erp.id })).status, 'active');
    assert.ok((await mem.verifyAudit({ tenant: T })).ok);
    await mem.close();
  } finally {
    done();
  }
});
