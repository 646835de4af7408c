/**
 * A transaction that cannot BEGIN because the connection is already inside one its
 * caller opened on the raw handle (`unsafeDatabase()`, for tools and migrations) must fail
 * without rolling that caller's transaction back — the driver did not open it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { SqliteDriver } from '../src/index.js';
import { T, tempDir } from './helpers.js';

for (const groupCommit of [false, true]) {
  test(`sqlite${groupCommit ? ' (group commit)' : ''}: a failed BEGIN inside the raw handle's own transaction leaves that transaction open, with its writes`, async (t) => {
    const dir = tempDir();
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const d = SqliteDriver.open({ path: path.join(dir, 'f.db'), groupCommit });
    t.after(() => d.close());
    const db = d.unsafeDatabase();
    db.exec('BEGIN');
    db.prepare('INSERT INTO tokens (id, tenant, principal_id, hash, created_at, revoked_at) VALUES (?, NULL, NULL, ?, ?, NULL)').run('tok_raw', 'h'.repeat(64), '2026-01-01T00:00:00.000Z');
    await assert.rejects(d.transaction(T, async (tx) => tx.listPrincipals(T)));
    assert.equal(db.inTransaction, true, "the raw handle's transaction was rolled back by the driver");
    assert.equal((db.prepare("SELECT count(*) AS n FROM tokens WHERE id = 'tok_raw'").get() as { n: number }).n, 1);
    db.exec('COMMIT');
  });
}
