/**
 * A corrupted SQLite file (real pages overwritten) is reported as DATABASE_CORRUPT by every CLI
 * command (exit 3) and HTTP request (500), /healthz fails with that code, and `audit verify` names
 * the tables that are broken instead of an unexpected error.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, openSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { openMemory } from '../src/api/open.js';
import { SqliteDriver } from '../src/store/sqlite/driver.js';
import { startServer } from '../src/server/http.js';
import { CLI, cleanEnv, expectError, expectStatus, http, tempDir } from './server-helpers.js';

/** A database with a principal, 20 records and a decision; the root page of each table. */
async function seeded(dir: string): Promise<{ db: string; roots: Record<string, number> }> {
  const db = join(dir, 'm.db');
  const mem = await openMemory({ path: db });
  await mem.registerPrincipal({ tenant: 'acme', id: 'u', kind: 'user', domain: 'd' });
  for (let i = 0; i < 20; i++) await mem.write({ tenant: 'acme', scope: 's', principal: 'u', content: `fact ${i} ${'x'.repeat(600)}` });
  await mem.authorize({ tenant: 'acme', action: { type: 'pay', args: { to: 'A' } } });
  await mem.close();
  const d = SqliteDriver.open({ path: db, readonly: true });
  const rows = d.unsafeDatabase().prepare("SELECT name, rootpage FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string; rootpage: number }>;
  const pageSize = d.unsafeDatabase().pragma('page_size', { simple: true }) as number;
  d.unsafeDatabase().close();
  assert.equal(pageSize, 4096);
  return { db, roots: Object.fromEntries(rows.map((r) => [r.name, r.rootpage])) };
}

/** Overwrite the root page of each named table with garbage. */
function smash(file: string, roots: Record<string, number>, tables: readonly string[]): void {
  const fd = openSync(file, 'r+');
  try {
    for (const t of tables) writeSync(fd, Buffer.alloc(4096, 0xa5), 0, 4096, ((roots[t] as number) - 1) * 4096);
  } finally {
    closeSync(fd);
  }
}

test('CLI: every command says DATABASE_CORRUPT (exit 3); audit verify names the broken tables', async () => {
  const dir = tempDir();
  const { db, roots } = await seeded(dir);
  smash(db, roots, ['records', 'audit']);
  const run = (args: readonly string[]) => spawnSync(process.execPath, [CLI, '--db', db, '--tenant', 'acme', ...args], { cwd: dir, env: cleanEnv(), input: '', encoding: 'utf8' });
  for (const args of [['list'], ['principal', 'list'], ['search', '--scope', 's', 'fact'], ['decisions'], ['audit', 'verify']]) {
    const r = run(args);
    assert.equal(r.status, 3, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /^error DATABASE_CORRUPT: /m, args.join(' '));
    assert.doesNotMatch(r.stderr, /unexpected error/);
  }
  const verify = run(['audit', 'verify', '--json']);
  const body = JSON.parse(verify.stdout) as { code: string; message: string; details: { tables: Array<{ table: string }> } };
  assert.equal(body.code, 'DATABASE_CORRUPT');
  assert.deepEqual(body.details.tables.map((t) => t.table).sort(), ['audit', 'records']);
  assert.match(body.message, /corrupted tables: audit/);
});

test('HTTP: requests are 500 DATABASE_CORRUPT and /healthz fails with it once a request found the corruption', async () => {
  const dir = tempDir();
  const { db, roots } = await seeded(dir);
  const audited = join(dir, 'schema.db');
  copyFileSync(db, audited);
  smash(db, roots, ['records']);
  const srv = await startServer({ config: { db, port: 0, logLevel: 'silent' }, ensureAdminToken: false });
  try {
    // the probe reads the audit chain, which is intact
    expectStatus(await http(srv.url, 'GET', '/healthz'), 200);
    const token = (await srv.memory.driver.listPrincipals('acme')).length;
    assert.equal(token, 1);
    const { TokenService } = await import('../src/server/tokens.js');
    const issued = await new TokenService(srv.memory.driver).issue({ tenant: 'acme', principal: 'u' });
    expectError(await http(srv.url, 'GET', '/v1/memories?scope=s', { token: issued.token }), 500, 'DATABASE_CORRUPT');
    expectError(await http(srv.url, 'GET', '/healthz'), 500, 'DATABASE_CORRUPT');
  } finally {
    await srv.close();
  }
  // the schema page itself: the server does not start, with the code
  smash(audited, { sqlite_schema: 1 }, ['sqlite_schema']);
  await assert.rejects(startServer({ config: { db: audited, port: 0, logLevel: 'silent' }, ensureAdminToken: false }), (e: { code?: string }) => e.code === 'DATABASE_CORRUPT');
});
