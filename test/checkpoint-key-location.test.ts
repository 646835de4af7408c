/**
 * The checkpoint key outside the data directory (docs/design.md § Audit log: signed checkpoints):
 * `memauth init` and `memauth serve` warn in one line when the key sits beside the database,
 * and `MEMAUTH_CHECKPOINT_KEY` puts it elsewhere (SQLite as PostgreSQL).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { CLI, cleanEnv, startServerProcess, tempDir } from './server-helpers.js';

const WARNING = /^memauth: warning: the checkpoint key .* is beside the database;.*MEMAUTH_CHECKPOINT_KEY/m;

test('init warns when the checkpoint key is beside the database, and not when MEMAUTH_CHECKPOINT_KEY is elsewhere', () => {
  const dir = tempDir();
  const beside = spawnSync(process.execPath, [CLI, 'init', '--db', join(dir, 'a.db')], { env: cleanEnv(), encoding: 'utf8' });
  assert.equal(beside.status, 0, beside.stderr);
  assert.match(beside.stderr, WARNING);
  assert.equal(beside.stderr.split('\n').filter((l) => l.includes('warning')).length, 1, 'one line');
  mkdirSync(join(dir, 'data'));
  mkdirSync(join(dir, 'secrets'));
  const key = join(dir, 'secrets', 'checkpoint.key');
  const away = spawnSync(process.execPath, [CLI, 'init', '--db', join(dir, 'data', 'b.db')], { env: cleanEnv({ MEMAUTH_CHECKPOINT_KEY: key }), encoding: 'utf8' });
  assert.equal(away.status, 0, away.stderr);
  assert.doesNotMatch(away.stderr, WARNING);
  assert.ok(existsSync(key), 'the key is created where the variable says');
  assert.ok(!existsSync(join(dir, 'data', 'b.db.key')), 'no key beside the database');
  assert.match(away.stdout, new RegExp(`checkpoint key +${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
});

test('serve warns once when the checkpoint key is beside the database', async () => {
  const dir = tempDir();
  const srv = await startServerProcess({ cwd: dir });
  try {
    assert.match(srv.stderr(), WARNING);
  } finally {
    await srv.stop();
  }
});

test('a checkpoint key or checkpoint copy in a directory that does not exist: INVALID_ARGUMENT naming the directory, the directory not created', async () => {
  const dir = tempDir();
  const missing = join(dir, 'etc', 'memauth');
  const key = join(missing, 'checkpoint.key');
  for (const cmd of [['init'], ['serve', '--port', '0']]) {
    const r = spawnSync(process.execPath, [CLI, ...cmd, '--db', join(dir, 'a.db')], { env: cleanEnv({ MEMAUTH_CHECKPOINT_KEY: key }), encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 2, `${cmd[0]}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`error INVALID_ARGUMENT: cannot keep the checkpoint key in .*: directory ${missing.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} does not exist`), cmd[0]);
    assert.doesNotMatch(r.stderr, /unexpected error/);
  }
  assert.ok(!existsSync(missing));
  const lib = await import('../src/api/open.js');
  await assert.rejects(
    lib.openMemory({ path: ':memory:', checkpointFile: join(missing, 'checkpoints.jsonl') }),
    (e: { code?: string; details?: { field?: string } }) => e.code === 'INVALID_ARGUMENT' && e.details?.field === 'checkpointFile',
  );
  await assert.rejects(
    (async () => lib.checkpointKeyFromFile(dir))(),
    (e: { code?: string; message?: string }) => e.code === 'INVALID_ARGUMENT' && /cannot read or create the checkpoint key/.test(e.message ?? ''),
    'a directory named as the key file',
  );
});
