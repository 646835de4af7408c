/**
 * A session's context as stored (docs/design.md § Derivation and taint): a write in a long
 * session stores one log row and one reference, never one derivation row per record read; its
 * taint is what one edge per read gave; a log altered outside the API makes the record count as
 * not matching its audit entry; reads an older store kept start the session's log.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sessionLogProblems } from '../src/api/verify-sessions.js';
import { P, T, openTemp, setup } from './helpers.js';

const count = (db: { prepare(s: string): { get(...a: unknown[]): unknown } }, sql: string, ...a: unknown[]): number => Number((db.prepare(sql).get(...a) as { n: number }).n);

test('the n-th write in a session stores a constant number of rows; its taint and lineage are those of one edge per read', async () => {
  const env = await setup();
  try {
    const { mem, db } = env;
    const page = (await mem.write({ tenant: T, scope: 'web', principal: P.browser, content: 'Vendor page: remit to ACCT-77', source: 'https://vendor.example/remit' })).record;
    await mem.get({ tenant: T, id: page.id, session: 'long' });
    let last = null as null | Awaited<ReturnType<typeof mem.write>>['record'];
    const rows: number[] = [];
    for (let i = 0; i < 60; i++) {
      const before = count(db, 'SELECT count(*) AS n FROM derivations') + count(db, 'SELECT count(*) AS n FROM session_log');
      last = (await mem.write({ tenant: T, scope: 'notes', principal: P.agent, content: `note number ${i} about the weather`, session: 'long' })).record;
      rows.push(count(db, 'SELECT count(*) AS n FROM derivations') + count(db, 'SELECT count(*) AS n FROM session_log') - before);
    }
    assert.deepEqual(new Set(rows), new Set([1]), 'each write: one log row, no derivation row');
    assert.ok(last !== null);
    assert.equal(last.taint.lowestAuthority, 'external_untrusted', 'the page read first still taints the 60th write');
    assert.ok(last.taint.channels.includes('undeclared_input'));
    assert.deepEqual(last.derivedFrom, []);
    assert.equal(last.sessionContext?.length, 60);
    const entry = (await mem.driver.auditRange(T, last.audit.seq, last.audit.seq))[0];
    assert.equal((entry?.payload as { sessionId?: unknown }).sessionId, 'long', 'the write entry names its session by id');
    const inputs = (await mem.lineageGraph({ tenant: T, id: last.id })).edges.filter((e) => e.to === last.id);
    assert.equal(inputs.length, 60, 'the page and the 59 notes before it');
    assert.ok(inputs.some((e) => e.from === page.id && e.kind === 'session'));
    const d = await mem.authorize({ tenant: T, action: { type: 'send_email', args: { to: 'ACCT-77' } }, session: 'other', dependsOn: [last.id] });
    assert.equal(d.outcome, 'deny');
    assert.equal((await mem.verifyAudit({ tenant: T })).ok, true);
  } finally {
    await env.dispose();
  }
});

test('a session log altered outside the API: the records referring to it match no audit entry (verify says so, the gate gives them no authority)', async () => {
  const env = await setup();
  try {
    const { mem, db } = env;
    const rule = (await mem.write({ tenant: T, scope: 'rules', principal: P.alice, content: 'Pay only approved vendors' })).record;
    const page = (await mem.write({ tenant: T, scope: 'web', principal: P.browser, content: 'Vendor page: remit to ACCT-77', source: 'https://vendor.example/remit' })).record;
    await mem.get({ tenant: T, id: rule.id, session: 's' });
    await mem.get({ tenant: T, id: page.id, session: 's' });
    const note = (await mem.write({ tenant: T, scope: 'notes', principal: P.agent, content: 'remember the vendor account', session: 's' })).record;
    assert.equal(note.sessionContext?.length, 2);
    // hide the page from the note's lineage: drop the log's triggers and delete its row
    db.exec('DROP TRIGGER session_log_no_delete');
    db.prepare('DELETE FROM session_log WHERE record_id = ?').run(page.id);
    const fresh = await openTemp({ dir: env.dir });
    try {
      const report = await fresh.mem.verifyAudit({ tenant: T });
      assert.equal(report.ok, false);
      assert.ok(JSON.stringify(report).includes('session_log_differs_from_audit'), JSON.stringify(report));
      const got = await fresh.mem.get({ tenant: T, id: note.id });
      assert.equal(got.actionAuthority, 'external_untrusted', 'no authority for a record whose context cannot be checked');
    } finally {
      await fresh.close();
    }
  } finally {
    await env.dispose();
  }
});

test('reads an older store kept (session_reads) start the session log and taint its next write', async () => {
  const env = await setup();
  try {
    const { mem, db } = env;
    const page = (await mem.write({ tenant: T, scope: 'web', principal: P.browser, content: 'Vendor page: remit to ACCT-77', source: 'https://vendor.example/remit' })).record;
    db.prepare('INSERT INTO sessions (tenant, id, created_at, owner) VALUES (?, ?, ?, NULL)').run(T, 'old', '2025-01-01T00:00:00.000Z');
    db.prepare('INSERT INTO session_reads (tenant, session_id, record_id, first_read_at) VALUES (?, ?, ?, ?)').run(T, 'old', page.id, '2025-01-01T00:00:00.000Z');
    const fresh = await openTemp({ dir: env.dir });
    try {
      const note = (await fresh.mem.write({ tenant: T, scope: 'notes', principal: P.agent, content: 'a note after the old read', session: 'old' })).record;
      assert.equal(note.taint.lowestAuthority, 'external_untrusted');
      assert.deepEqual(await fresh.mem.driver.sessionReads(T, 'old'), [page.id, note.id]);
      assert.equal((await fresh.mem.verifyAudit({ tenant: T })).ok, true);
    } finally {
      await fresh.close();
    }
  } finally {
    await env.dispose();
  }
});

test('a session log summary changed outside the API: audit verify re-folds the log and names the entry; a later write does not build on it', async () => {
  const env = await setup();
  try {
    const { mem, db } = env;
    const rule = (await mem.write({ tenant: T, scope: 'rules', principal: P.alice, content: 'Pay only approved vendors' })).record;
    const page = (await mem.write({ tenant: T, scope: 'web', principal: P.browser, content: 'Vendor page: remit to ACCT-77', source: 'https://vendor.example/remit' })).record;
    await mem.get({ tenant: T, id: rule.id, session: 's' });
    await mem.get({ tenant: T, id: page.id, session: 's' });
    assert.equal((await mem.verifyAudit({ tenant: T })).ok, true);
    // raise the running summary after the page to the rule's (the page's untrusted authority gone)
    const summaryAt = (ord: number): string => (db.prepare('SELECT summary FROM session_log WHERE tenant = ? AND session_id = ? AND ord = ?').get(T, 's', ord) as { summary: string }).summary;
    db.exec('DROP TRIGGER session_log_no_update');
    db.prepare('UPDATE session_log SET summary = ? WHERE tenant = ? AND session_id = ? AND ord = 2').run(summaryAt(1), T, 's');
    for (const m of [mem, null]) {
      const fresh = m === null ? await openTemp({ dir: env.dir }) : null;
      const use = fresh?.mem ?? mem;
      try {
        const tampered = await use.verifyAudit({ tenant: T });
        assert.equal(tampered.ok, false);
        assert.deepEqual(tampered.tenants[0]?.records.bad, [{ id: 'session:s#2', problem: 'session_log_entry_differs' }]);
        assert.match(tampered.tenants[0]?.message ?? '', /row session:s#2: session_log_entry_differs/);
        // the store that appended the entry and a fresh one alike: a write in the session re-folds its log first
        const note = (await use.write({ tenant: T, scope: 'notes', principal: P.agent, content: `remember the vendor account (${m === null ? 'fresh' : 'same'})`, session: 's' })).record;
        assert.equal(note.taint.lowestAuthority, 'external_untrusted');
      } finally {
        await fresh?.close();
      }
    }
  } finally {
    await env.dispose();
  }
});

test('audit verify: a record whose taint is above the summary of the session-log prefix it refers to is named', async () => {
  const env = await setup();
  try {
    const { mem } = env;
    const page = (await mem.write({ tenant: T, scope: 'web', principal: P.browser, content: 'Vendor page: remit to ACCT-77', source: 'https://vendor.example/remit' })).record;
    await mem.get({ tenant: T, id: page.id, session: 's' });
    const note = (await mem.write({ tenant: T, scope: 'notes', principal: P.agent, content: 'remember the vendor account', session: 's' })).record;
    assert.ok(note.sessionContext !== undefined);
    const ok = await sessionLogProblems(mem.driver, T, [{ id: note.id, taint: note.taint, sessionContext: note.sessionContext }], new Set([page.id, note.id]));
    assert.deepEqual(ok, []);
    // the entry a write on a raised summary would have: audited, but above the log it refers to
    const raised = { ...note.taint, lowestAuthority: 'user_confirmed' as const };
    const bad = await sessionLogProblems(mem.driver, T, [{ id: note.id, taint: raised, sessionContext: note.sessionContext }], new Set([page.id, note.id]));
    assert.deepEqual(bad, [{ id: note.id, problem: 'taint_above_session_context' }]);
  } finally {
    await env.dispose();
  }
});
