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
