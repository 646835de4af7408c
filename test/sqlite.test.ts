/**
 * The SQLite driver: the whole conformance suite (test/conformance/) on real SQLite files, then
 * what only a file database has — corrupted, foreign and future-version files.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { openMemory } from '../src/index.js';
import { SqliteDriver, ftsQuery, scopeKeyOf } from '../src/store/sqlite/driver.js';
import { runConformance } from './conformance/index.js';
import { P, T, expectCode, tempDir } from './helpers.js';
import { sqliteStore } from './support/stores.js';

runConformance(sqliteStore);

describe('[sqlite] corrupted database files', () => {
  test('a file of random bytes → DATABASE_CORRUPT', async (t) => {
    const dir = tempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'random.db');
    fs.writeFileSync(file, crypto.randomBytes(16384));
    await expectCode(() => openMemory({ path: file }), 'DATABASE_CORRUPT');
  });

  test('a good database whose header is overwritten → DATABASE_CORRUPT', async (t) => {
    const dir = tempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'good.db');
    const mem = await openMemory({ path: file });
    await mem.registerPrincipal({ tenant: T, id: P.alice, kind: 'user', domain: 'alice' });
    await mem.write({ tenant: T, scope: 'n', principal: P.alice, content: 'some content' });
    await mem.close();
    assert.equal(fs.existsSync(`${file}-wal`), false, 'WAL checkpointed on close');
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, crypto.randomBytes(100), 0, 100, 0);
    fs.closeSync(fd);
    await expectCode(() => openMemory({ path: file }), 'DATABASE_CORRUPT');
  });

  test('a good database whose pages are overwritten → DATABASE_CORRUPT', async (t) => {
    const dir = tempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'good.db');
    const mem = await openMemory({ path: file });
    await mem.registerPrincipal({ tenant: T, id: P.alice, kind: 'user', domain: 'alice' });
    for (let i = 0; i < 50; i++) await mem.write({ tenant: T, scope: 'n', principal: P.alice, content: `some content ${i}` });
    await mem.close();
    const size = fs.statSync(file).size;
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, crypto.randomBytes(size - 4096), 0, size - 4096, 4096);
    fs.closeSync(fd);
    await expectCode(async () => {
      const m = await openMemory({ path: file });
      try {
        await m.verifyAudit({});
      } finally {
        await m.close();
      }
    }, 'DATABASE_CORRUPT');
  });

  test('a database from a newer memauth (schema version ahead) → DATABASE_CORRUPT', async (t) => {
    const dir = tempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'newer.db');
    const db = new Database(file);
    db.pragma('user_version = 99');
    db.close();
    await expectCode(() => openMemory({ path: file }), 'DATABASE_CORRUPT');
  });

  test("another application's SQLite database (conflicting tables) → DATABASE_CORRUPT, not a raw SQLite error", async (t) => {
    // open.ts: "@throws MemauthError DATABASE_CORRUPT (not a memauth database, or corrupted)"
    const dir = tempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'foreign.db');
    const db = new Database(file);
    db.exec("CREATE TABLE records (id INTEGER PRIMARY KEY, title TEXT); INSERT INTO records (title) VALUES ('someone else''s data');");
    db.close();
    await expectCode(() => openMemory({ path: file }), 'DATABASE_CORRUPT');
    // and their data is untouched
    const check = new Database(file, { readonly: true });
    assert.deepEqual(check.prepare('SELECT title FROM records').all(), [{ title: "someone else's data" }]);
    check.close();
  });
});

describe('[sqlite] several stores on one file in one process', () => {
  for (const groupCommit of [false, true]) {
    test(`interleaved transactions of two stores on one file all commit, none DATABASE_LOCKED (groupCommit ${groupCommit})`, { timeout: 60_000 }, async (t) => {
      const dir = tempDir();
      t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
      const file = path.join(dir, 'shared.db');
      const a = await openMemory({ path: file, groupCommit });
      // the same file under another spelling of its path
      const b = await openMemory({ path: path.join(dir, '.', 'shared.db'), groupCommit });
      t.after(async () => {
        await a.close();
        await b.close();
      });
      await a.registerPrincipal({ tenant: T, id: P.alice, kind: 'user', domain: 'alice' });
      // each transaction holds the write lock across awaits: before the shared lane, b's BEGIN
      // IMMEDIATE blocked the one thread until busy_timeout while a waited for its own turn
      const writes = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).write({ tenant: T, scope: 'n', principal: P.alice, content: `note ${i}` }));
      const exports = [(a.driver as SqliteDriver).exportRows(async () => undefined)];
      const results = await Promise.allSettled([...writes, ...exports]);
      const failed = results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason));
      assert.deepEqual(failed, []);
      const listed = await b.list({ tenant: T, limit: 1000 });
      assert.equal(listed.length, 40);
      const report = await a.verifyAudit({ tenant: T });
      assert.equal(report.ok, true, JSON.stringify(report));
    });
  }

  test('a transaction on one store waiting for another store on the same file inside its own transaction fails DATABASE_LOCKED instead of hanging', { timeout: 60_000 }, async (t) => {
    const dir = tempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'nested.db');
    const a = await openMemory({ path: file });
    const b = await openMemory({ path: file });
    t.after(async () => {
      await a.close();
      await b.close();
    });
    await a.registerPrincipal({ tenant: T, id: P.alice, kind: 'user', domain: 'alice' });
    await expectCode(() => a.driver.transaction(T, async () => b.driver.transaction(T, async () => 1)), 'DATABASE_LOCKED');
    // and both stores still work afterwards
    await a.write({ tenant: T, scope: 'n', principal: P.alice, content: 'after a' });
    await b.write({ tenant: T, scope: 'n', principal: P.alice, content: 'after b' });
    assert.equal((await a.list({ tenant: T })).length, 2);
  });
});

describe('[sqlite] search ranks a window of the best matches, exactly', () => {
  // The driver looks up only the best few index matches in `records` and widens the window when
  // it cannot prove the answer (filtered rows, ties at its edge). The answer must be exactly the
  // one of ranking every match: compared here with that query on ties, expired, deleted and
  // other tenants' and scopes' rows.
  test('equals ranking every match, on ties, expired, deleted and foreign rows, in tenants of one and of two scopes', async (t) => {
    const dir = tempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const d = SqliteDriver.open({ path: path.join(dir, 'rank.db') });
    t.after(() => d.close());
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`);
    let seed = 7;
    const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const pick = (): string => words[Math.floor(rnd() * words.length)] as string;
    const at = '2026-01-01T00:00:00.000Z';
    const ids: string[] = [];
    await d.transaction(T, async (tx) => {
      for (let i = 0; i < 3000; i++) {
        // every fifth text is the same: hundreds of equal scores
        const content = i % 5 === 0 ? 'w1 w2 w3' : Array.from({ length: 1 + Math.floor(rnd() * 6) }, pick).join(' ');
        const expiresAt = rnd() < 0.3 ? (rnd() < 0.5 ? '2020-01-01T00:00:00.000Z' : '2099-01-01T00:00:00.000Z') : null;
        const id = `mem_${String(Math.floor(rnd() * 1e9)).padStart(9, '0')}_${i}`;
        ids.push(id);
        await tx.insertRecord({
          formatVersion: 1,
          id,
          // 'solo' has one scope: its searches match the words alone (no scope key in the MATCH)
          tenant: i % 4 === 3 ? 'solo' : rnd() < 0.8 ? T : 'other',
          scope: i % 4 === 3 ? 's0' : rnd() < 0.7 ? 's0' : 's1',
          content,
          contentHash: 'x',
          createdAt: at,
          expiresAt,
          origin: { authority: 'user_confirmed', principalId: 'p', sourceRef: 's', writtenAt: at },
          derivedFrom: [],
          taint: { lowestAuthority: 'user_confirmed', channels: [], sources: [], oldestSourceAt: at },
          audit: { policyVersion: 'v', writeReason: 'w', seq: 1 },
          status: 'active',
        });
      }
    });
    await d.transaction(T, async (tx) => {
      for (let i = 0; i < ids.length; i += 7) await tx.eraseRecord(T, ids[i] as string, at);
    });
    await d.transaction('solo', async (tx) => {
      for (let i = 3; i < ids.length; i += 28) await tx.eraseRecord('solo', ids[i] as string, at);
    });
    // each tenant's own index table (search-index.ts)
    const every = (tenant: string) => {
      const fts = d.searchIndexTable(tenant) as string;
      return d.unsafeDatabase().prepare(
        `SELECT r.id, bm25(${fts}, 1.0, 0.0) AS score FROM ${fts} JOIN records r ON r.rowid = ${fts}.rowid
         WHERE ${fts} MATCH ? AND r.tenant = ? AND r.scope = ? AND r.status = 'active' AND (r.expires_at IS NULL OR r.expires_at > ?)
         ORDER BY score, r.id LIMIT ?`,
      );
    };
    const now = '2026-06-01T00:00:00.000Z';
    const cases: Array<[string, string, string, number]> = [];
    for (const tenant of [T, 'solo']) for (const q of ['w1 w2 w3', 'w1', 'w2 w9']) for (const limit of [1, 2, 5, 20, 1000]) cases.push([tenant, 's0', q, limit]);
    for (let k = 0; k < 150; k++)
      cases.push([
        k % 3 === 2 ? 'solo' : rnd() < 0.8 ? T : 'other',
        rnd() < 0.5 ? 's0' : 's1',
        Array.from({ length: 1 + Math.floor(rnd() * 3) }, pick).join(' '),
        [1, 3, 10, 50, 1000][k % 5] as number,
      ]);
    for (const [tenant, scope, q, limit] of cases) {
      const expected = (
        every(tenant).all(`scope_key : "${scopeKeyOf(tenant, scope)}" AND content : (${ftsQuery(q) as string})`, tenant, scope, now, limit) as Array<{ id: string; score: number }>
      ).map((r) => `${r.id} ${-r.score}`);
      const got = (await d.search(tenant, scope, q, limit, now)).map((h) => `${h.record.id} ${h.score}`);
      assert.deepEqual(got, expected, `${tenant}/${scope} "${q}" limit ${limit}`);
    }
  });
});

describe('[sqlite] options', () => {
  test('mmapSizeMiB sets the memory map (off unless asked)', async (t) => {
    const dir = tempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const off = SqliteDriver.open({ path: path.join(dir, 'off.db') });
    assert.equal(Number(off.unsafeDatabase().pragma('mmap_size', { simple: true })), 0);
    await off.close();
    const on = SqliteDriver.open({ path: path.join(dir, 'on.db'), mmapSizeMiB: 64 });
    assert.equal(Number(on.unsafeDatabase().pragma('mmap_size', { simple: true })), 64 * 1024 * 1024);
    await on.close();
  });
});
