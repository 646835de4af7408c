/**
 * Every command of the BUILT CLI opens the store that `--database sqlite:FILE` (or a plain path, or
 * $DATABASE_URL) names — `serve`, `mcp` and `token` included — never `./memauth.db` behind the
 * operator's back. Real processes on real SQLite files in a temp directory.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, cleanEnv, startServerProcess, tempDir } from './server-helpers.js';

function cli(cwd: string, args: readonly string[], env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, env: cleanEnv(env), input: '', encoding: 'utf8', timeout: 120_000 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

for (const form of ['sqlite:', '', 'env:'] as const) {
  test(`init, principal, token, mcp and serve all use ${form === 'env:' ? '$DATABASE_URL=sqlite:FILE' : `--database ${form}FILE`}`, async () => {
    const dir = tempDir();
    const file = join(dir, 'store.db');
    const where = form === 'env:' ? [] : ['--database', `${form}${file}`];
    const env: Record<string, string> = form === 'env:' ? { DATABASE_URL: `sqlite:${file}` } : {};
    const run = (args: readonly string[], extra: Record<string, string> = {}) => cli(dir, [...where, ...args], { ...env, ...extra });
    assert.equal(run(['init']).status, 0);
    assert.ok(existsSync(file));
    assert.equal(run(['--tenant', 'acme', 'principal', 'add', 'bot', '--kind', 'agent', '--domain', 'agents']).status, 0);
    const created = run(['--tenant', 'acme', 'token', 'create', '--principal', 'bot', '--json']);
    assert.equal(created.status, 0, created.stderr);
    const issued = JSON.parse(created.stdout) as { token: string; info: { id: string } };
    const listed = run(['--tenant', 'acme', 'token', 'list', '--json']);
    assert.equal(listed.status, 0, listed.stderr);
    assert.deepEqual(
      (JSON.parse(listed.stdout) as { tokens: Array<{ id: string }> }).tokens.map((t) => t.id),
      [issued.info.id],
    );
    const mcp = run(['mcp'], { MEMAUTH_TOKEN: issued.token });
    assert.equal(mcp.status, 0, mcp.stderr);
    assert.match(mcp.stderr, new RegExp(`agent bot in tenant acme on ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    const srv = await startServerProcess({ cwd: dir, args: [...where, '--port', '0', '--log-level', 'warn'], env });
    try {
      assert.match(srv.stdout(), new RegExp(`\\(db ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')};`));
      assert.equal(srv.adminToken, null, 'the admin token of the named store already exists (created by init)');
    } finally {
      assert.equal(await srv.stop(), 0);
    }
    assert.ok(!existsSync(join(dir, 'memauth.db')), 'no ./memauth.db was opened');
  });
}

test('a missing store named by --database is refused by mcp and token (no ./memauth.db fallback)', () => {
  const dir = tempDir();
  const missing = join(dir, 'missing.db');
  for (const args of [['mcp'], ['token', 'list']]) {
    const r = cli(dir, ['--database', `sqlite:${missing}`, ...args], { MEMAUTH_TOKEN: 'mat_x' });
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /INVALID_ARGUMENT.*missing\.db does not exist/);
  }
  assert.ok(!existsSync(missing) && !existsSync(join(dir, 'memauth.db')));
});

test('serve on a port already in use: one line naming the fix (--port 0), exit 2', async () => {
  const dir = tempDir();
  const { createServer } = await import('node:net');
  const busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  const port = String((busy.address() as { port: number }).port);
  try {
    const r = await new Promise<{ status: number | null; stderr: string }>((resolve) => {
      const p = spawn(process.execPath, [CLI, '--db', join(dir, 'm.db'), 'serve', '--port', port], { cwd: dir, env: cleanEnv() });
      let stderr = '';
      p.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      p.on('exit', (status: number | null) => resolve({ status, stderr }));
    });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`^error INVALID_ARGUMENT: port ${port} on 127\\.0\\.0\\.1 is already in use: .*--port 0`, 'm'));
  } finally {
    busy.close();
  }
});
