/**
 * The SQLite driver's per-tenant full-text indexes (src/store/sqlite/search-index.ts): migration 5
 * from the shared index of a version-4 file, the lazy creation of a tenant's table rolled back
 * with its transaction (alone and inside a group commit), the change token the read cache relies
 * on, and tenant names that look like SQL or like index tables.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { MemoryRecord } from '../src/core/types.js';
import { SqliteDriver, scopeKeyOf } from '../src/store/sqlite/driver.js';
import { MIGRATIONS } from '../src/store/sqlite/schema.js';
import { T, tempDir } from './helpers.js';

const AT = '2026-01-01T00:00:00.000Z';
let n = 0;
const rec = (tenant: string, scope: string, content: string): MemoryRecord => ({
  formatVersion: 1,
  id: `mem_${String(++n).padStart(6, '0')}`,
  tenant,
  scope,
  content,
  contentHash: 'x',
  createdAt: AT,
  expiresAt: null,
  origin: { authority: 'user_confirmed', principalId: 'p', sourceRef: 's', writtenAt: AT },
  derivedFrom: [],
  taint: { lowestAuthority: 'user_confirmed', channels: [], sources: [], oldestSourceAt: AT },
  audit: { policyVersion: 'v', writeReason: 'w', seq: 1 },
  status: 'active',
});

const hits = async (d: SqliteDriver, tenant: string, scope: string, q: string): Promise<string[]> => (await d.search(tenant, scope, q, 100, AT)).map((h) => `${h.record.content} ${h.score}`);

const tables = (db: Database.Database): string[] => db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name").pluck().all() as string[];

const TEXTS: ReadonlyArray<readonly [string, string, string]> = [
  [T, 's', 'alpha alpha ledger'],
  [T, 's', 'beta beta ledger'],
  [T, 's', 'alpha beta'],
  [T, 'o', 'alpha in another scope'],
  ['globex', 's', 'alpha alpha alpha omega'],
  ['globex', 's', 'alpha omega'],
  ['globex', 's', 'alpha erased secret'],
];

test("migration 5 moves each tenant's entries from the shared index into its own table; scores equal those of a fresh store", async (t) => {
  const dir = tempDir();
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'v4.db');
  const d = SqliteDriver.open({ path: file });
  await d.transaction(T, async (tx) => {
    for (const [tenant, scope, content] of TEXTS) await tx.insertRecord(rec(tenant, scope, content));
  });
  const erased = (await d.listRecords('globex', { limit: 10 })).find((r) => r.content === 'alpha erased secret') as MemoryRecord;
  await d.transaction('globex', async (tx) => tx.eraseRecord('globex', erased.id, AT));
  const fresh: Record<string, string[]> = {};
  for (const [tenant, scope, q] of [
    [T, 's', 'alpha beta'],
    [T, 's', 'alpha'],
    [T, 'o', 'alpha'],
    ['globex', 's', 'alpha omega'],
    ['globex', 's', 'erased'],
  ] as const)
    fresh[`${tenant}/${scope}/${q}`] = await hits(d, tenant, scope, q);
  await d.close();
  // back to the version-4 layout: one shared records_fts keyed by tenant and scope
  const db = new Database(file);
  const regs = db.prepare('SELECT id FROM search_indexes').pluck().all() as number[];
  db.exec('DROP TRIGGER search_indexes_no_delete; DROP TRIGGER search_indexes_no_update; DROP TABLE search_indexes;');
  for (const id of regs) db.exec(`DROP TABLE records_fts_${id}`);
  db.exec(`CREATE VIRTUAL TABLE records_fts USING fts5 (content, scope_key, tokenize = 'unicode61 remove_diacritics 2');
    INSERT INTO records_fts (records_fts, rank) VALUES ('secure-delete', 1);
    INSERT INTO records_fts (rowid, content, scope_key) SELECT rowid, content, 'k' || lower(hex(tenant)) || 'x' || lower(hex(scope)) FROM records WHERE content IS NOT NULL;`);
  // and without what the migrations after 4 added (session owners, usable_by, the audit op index, tenant keys, session logs, claims, versions, the session index of decisions, the decisions' action type)
  db.exec(`DROP TRIGGER sessions_no_update; ALTER TABLE sessions DROP COLUMN owner; ALTER TABLE confirmations DROP COLUMN usable_by;
    DROP INDEX audit_op; DROP TRIGGER tenant_keys_no_update; DROP TABLE tenant_keys;
    DROP TABLE session_log; DROP TRIGGER records_session_context_immutable; ALTER TABLE records DROP COLUMN session_context;
    DROP TRIGGER records_claims_erase_only; ALTER TABLE records DROP COLUMN claims;
    DROP TRIGGER records_version_immutable; DROP INDEX records_version_of; ALTER TABLE records DROP COLUMN version_of; ALTER TABLE records DROP COLUMN supersedes;
    DROP INDEX decisions_session; DROP INDEX decisions_session_action; ALTER TABLE decisions DROP COLUMN action_type; ALTER TABLE decisions DROP COLUMN context_waived;`);
  db.pragma('user_version = 4');
  db.close();

  const m = SqliteDriver.open({ path: file });
  t.after(() => m.close());
  const raw = m.unsafeDatabase();
  assert.equal(Number(raw.pragma('user_version', { simple: true })), MIGRATIONS.length);
  assert.deepEqual(tables(raw), ['records_fts_1', 'records_fts_2'], 'the shared index is gone; one table per tenant');
  assert.deepEqual(raw.prepare('SELECT id, tenant FROM search_indexes ORDER BY id').all(), [
    { id: 1, tenant: T },
    { id: 2, tenant: 'globex' },
  ]);
  for (const [k, v] of Object.entries(fresh)) {
    const [tenant, scope, q] = k.split('/') as [string, string, string];
    assert.deepEqual(await hits(m, tenant, scope, q), v, k);
  }
  assert.equal(m.searchIndexTable(T), 'records_fts_1');
  const own = raw
    .prepare(`SELECT count(*) FROM ${m.searchIndexTable('globex') as string} WHERE ${m.searchIndexTable('globex') as string} MATCH 'erased'`)
    .pluck()
    .get();
  assert.equal(own, 0, 'an erased record is not indexed again');
  const foreign = raw.prepare("SELECT count(*) FROM records_fts_1 WHERE records_fts_1 MATCH 'omega'").pluck().get();
  assert.equal(foreign, 0, "another tenant's words are not in the tenant's table");
});

for (const groupCommit of [false, true]) {
  test(`a tenant's index table is created before its first transaction: one that fails leaves it empty, and the next write fills it${groupCommit ? ' (group commit)' : ''}`, async (t) => {
    const dir = tempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const d = SqliteDriver.open({ path: path.join(dir, 'lazy.db'), groupCommit });
    t.after(() => d.close());
    const write = (tenant: string, content: string, fail = false) =>
      d.transaction(tenant, async (tx) => {
        await tx.insertRecord(rec(tenant, 's', content));
        if (fail) throw new Error(`boom ${content}`);
      });
    const results = await Promise.allSettled([write('new', 'first lost', true), write('new', 'second kept'), write('other', 'third lost', true), write('new', 'fourth kept')]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'fulfilled', 'rejected', 'fulfilled'],
    );
    assert.deepEqual((await hits(d, 'new', 's', 'lost kept')).map((h) => h.split(' ').slice(0, 2).join(' ')).sort(), ['fourth kept', 'second kept']);
    // created before the transaction (group commit: before its savepoint; SQLite cannot roll back
    // to a savepoint past the creation of an FTS5 table written in it): it stays, empty
    assert.equal(d.searchIndexTable('other'), 'records_fts_2');
    assert.equal(d.unsafeDatabase().prepare('SELECT count(*) FROM records_fts_2').pluck().get(), 0);
    await write('other', 'fifth kept');
    assert.deepEqual(await hits(d, 'other', 's', 'kept'), [(await hits(d, 'other', 's', 'fifth'))[0]]);
    assert.deepEqual(tables(d.unsafeDatabase()), ['records_fts_1', 'records_fts_2']);
  });
}

test("group commit: a transaction that creates another tenant's index and fails rolls its whole batch back (DATABASE_LOCKED), and the store works on", async (t) => {
  const dir = tempDir();
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const d = SqliteDriver.open({ path: path.join(dir, 'cross.db'), groupCommit: { maxOps: 16, maxDelayMs: 20 } });
  t.after(() => d.close());
  const ok = (content: string) => d.transaction(T, async (tx) => tx.insertRecord(rec(T, 's', content)));
  const results = await Promise.allSettled([
    ok('before kept'),
    d.transaction(T, async (tx) => {
      await tx.insertRecord(rec('elsewhere', 's', 'foreign lost'));
      throw new Error('boom');
    }),
    ok('after kept'),
  ]);
  assert.equal(results[1]?.status, 'rejected');
  assert.match(String((results[1] as PromiseRejectedResult).reason), /boom/);
  // one batch: the write before is refused with a retryable error, the one after runs in the next batch
  assert.deepEqual(
    results.map((r) => r.status),
    ['rejected', 'rejected', 'fulfilled'],
  );
  assert.equal(((results[0] as PromiseRejectedResult).reason as { code?: string }).code, 'DATABASE_LOCKED', String((results[0] as PromiseRejectedResult).reason));
  await ok('later kept');
  await d.transaction('elsewhere', async (tx) => tx.insertRecord(rec('elsewhere', 's', 'elsewhere kept')));
  const kept = await hits(d, T, 's', 'kept');
  assert.ok(kept.some((h) => h.startsWith('later kept')));
  assert.equal(kept.length, results.filter((r) => r.status === 'fulfilled').length + 1, 'exactly the acknowledged writes are there');
  assert.deepEqual(
    (await hits(d, 'elsewhere', 's', 'lost kept')).map((h) => h.split(' ').slice(0, 2).join(' ')),
    ['elsewhere kept'],
  );
});

test('the change token moves with a first write into a new tenant and stays put across idle transactions (FTS5 flushes set aside)', async (t) => {
  const dir = tempDir();
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const d = SqliteDriver.open({ path: path.join(dir, 'token.db'), groupCommit: true });
  t.after(() => d.close());
  const token = (): Promise<string> => d.transaction(T, async () => d.changeToken());
  const t0 = await token();
  let inBody = '';
  await d.transaction('fresh', async (tx) => {
    await tx.insertRecord(rec('fresh', 's', 'first words of a fresh tenant'));
    inBody = d.changeToken();
  });
  assert.notEqual(inBody, t0, 'the write (and the table it created) changed the token');
  assert.equal(await token(), inBody, 'nothing but the commit flush happened after the body: the token is what the body ended with');
  assert.equal(await token(), inBody);
});

test('tenant names that look like SQL or like index tables reach no SQL identifier and stay apart', async (t) => {
  const dir = tempDir();
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const d = SqliteDriver.open({ path: path.join(dir, 'names.db') });
  t.after(() => d.close());
  const names = ['records_fts_1', 'records_fts', '"; DROP TABLE records; --', "x') OR 1=1 --", 'search_indexes', 'Zürich ☃ tenant', 'records_fts_2_data'];
  await d.transaction(T, async (tx) => {
    for (const [i, tenant] of names.entries()) await tx.insertRecord(rec(tenant, 's', `shared word ${i} own${i}`));
  });
  for (const [i, tenant] of names.entries()) {
    const found = await hits(d, tenant, 's', 'shared word');
    assert.equal(found.length, 1, tenant);
    assert.match(found[0] as string, new RegExp(`own${i}`), tenant);
    assert.match(d.searchIndexTable(tenant) as string, /^records_fts_[0-9]+$/);
    assert.equal(scopeKeyOf(tenant, 's').startsWith('k'), true);
  }
  // plus the (empty) table of the transaction's own tenant, created before it
  assert.equal(tables(d.unsafeDatabase()).length, names.length + 1);
});
