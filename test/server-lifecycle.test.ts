/**
 * The server's life cycle as an operator sees it: `npm start` on a fresh directory, the admin
 * token printed once, configuration from flags > environment > config file > defaults, and a
 * graceful shutdown on SIGTERM that loses nothing it acknowledged.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { resolveConfig } from '../src/server/config.js';
import { SqliteDriver } from '../src/store/sqlite/driver.js';
import { CLI, addPrincipal, cleanEnv, client, expectError, expectStatus, http, startServerProcess, tempDir } from './server-helpers.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('npm start', () => {
  test('serves the API, the OpenAPI document and MCP on a fresh database; the admin token is printed once', async () => {
    const script = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start;
    assert.equal(script, 'node dist/src/cli/main.js serve');
    const dir = tempDir();
    const db = join(dir, 'memauth.db');
    // the real `npm start` (in the package directory), pointed at a temp database through the environment
    const proc = spawn('npm', ['start', '--silent', '--', '--port', '0', '--log-level', 'warn'], { cwd: ROOT, env: cleanEnv({ MEMAUTH_DB: db }), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    let err = '';
    proc.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    proc.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
    const url = await new Promise<string>((resolve, reject) => {
      proc.stdout.on('data', () => {
        const m = /memauth listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1] as string);
      });
      void exited.then((code) => reject(new Error(`npm start exited ${code}: ${out} ${err}`)));
    });
    try {
      const admin = /memauth admin token: (mat_\S+)/.exec(out)?.[1];
      assert.ok(admin, `admin token printed: ${out}`);
      assert.ok(existsSync(db));
      expectStatus(await http(url, 'GET', '/healthz'), 200);
      const doc = await http(url, 'GET', '/openapi.json');
      assert.equal(doc.body.openapi, '3.1.0');
      expectStatus(await http(url, 'GET', '/v1/whoami', { token: admin as string }), 200);
      expectError(await http(url, 'POST', '/mcp', { body: {} }), 401, 'UNAUTHENTICATED');
      // only the hash is stored
      const d = SqliteDriver.open({ path: db, readonly: true });
      const rows = d.unsafeDatabase().prepare('SELECT hash FROM tokens').all() as Array<{ hash: string }>;
      d.unsafeDatabase().close();
      assert.equal(rows.length, 1);
      assert.ok(!readFileSync(db).includes(Buffer.from(admin as string)), 'the token text is not in the database file');
    } finally {
      process.kill(-(proc.pid as number), 'SIGTERM');
      await exited;
    }
    // a second start on the same database prints no token
    const again = await startServerProcess({ cwd: dir, args: ['--db', db, '--port', '0', '--log-level', 'warn'] });
    assert.equal(again.adminToken, null);
    assert.ok(!again.stdout().includes('mat_'));
    assert.equal(await again.stop(), 0);
  });
});

describe('memauth init and memauth token (offline, on the database file)', () => {
  test('init prints the admin token once; token create/list/revoke; mcp refuses a revoked token', () => {
    const dir = tempDir();
    const run = (args: string[]): { status: number | null; stdout: string; stderr: string } => {
      const r = spawnSync(process.execPath, [CLI, '--db', join(dir, 'm.db'), ...args], { cwd: dir, env: cleanEnv(), input: '', encoding: 'utf8' });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    const init = run(['init', '--json']);
    assert.equal(init.status, 0, init.stderr);
    assert.match(JSON.parse(init.stdout).adminToken, /^mat_[A-Za-z0-9_-]{43}$/);
    assert.equal(JSON.parse(run(['init', '--json']).stdout).adminToken, null, 'shown once');
    assert.equal(run(['--tenant', 'acme', 'principal', 'add', 'bot', '--kind', 'agent', '--domain', 'agents']).status, 0);
    const created = run(['--tenant', 'acme', 'token', 'create', '--principal', 'bot', '--json']);
    assert.equal(created.status, 0, created.stderr);
    const issued = JSON.parse(created.stdout) as { token: string; info: { id: string; principal: string } };
    assert.equal(issued.info.principal, 'bot');
    const listed = JSON.parse(run(['--tenant', 'acme', 'token', 'list', '--json']).stdout) as { tokens: Array<{ id: string }> };
    assert.deepEqual(
      listed.tokens.map((t) => t.id),
      [issued.info.id],
    );
    assert.ok(!JSON.stringify(listed).includes(issued.token));
    const unknown = run(['--tenant', 'acme', 'token', 'create', '--principal', 'ghost']);
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /UNKNOWN_PRINCIPAL/);
    assert.equal(run(['token', 'revoke', issued.info.id]).status, 0);
    const again = run(['token', 'revoke', issued.info.id]);
    assert.equal(again.status, 2);
    assert.match(again.stderr, /TOKEN_REVOKED/);
    const mcp = spawnSync(process.execPath, [CLI, '--db', join(dir, 'm.db'), 'mcp'], { cwd: dir, env: cleanEnv({ MEMAUTH_TOKEN: issued.token }), input: '', encoding: 'utf8' });
    assert.equal(mcp.status, 2);
    assert.match(mcp.stderr, /UNAUTHENTICATED/);
    assert.equal(mcp.stdout, '', 'nothing but the protocol on stdout');
  });
});

describe('configuration: flags > environment > config file > defaults', () => {
  test('resolveConfig', () => {
    const dir = tempDir();
    const file = join(dir, 'memauth.json');
    writeFileSync(file, JSON.stringify({ port: 9000, host: '0.0.0.0', db: 'data/file.db', bodyLimit: '512kb', logLevel: 'warn' }));
    const c = resolveConfig({ flags: { port: '9100' }, env: { MEMAUTH_PORT: '9200', MEMAUTH_HOST: '127.0.0.2', MEMAUTH_BODY_LIMIT: '' }, configFile: file });
    assert.equal(c.port, 9100, 'flag over env');
    assert.equal(c.host, '127.0.0.2', 'env over file');
    assert.equal(c.db, join(dir, 'data/file.db'), 'file paths are relative to the file');
    assert.equal(c.bodyLimit, 512 * 1024, 'file over default; an empty env var is unset');
    assert.equal(c.logLevel, 'warn');
    assert.equal(c.maxContentChars, 1_000_000, 'default');
    const d = resolveConfig({ env: { MEMAUTH_CONFIG: file } });
    assert.equal(d.port, 9000);
    assert.deepEqual(resolveConfig({}), resolveConfig({ env: {} }));
    assert.equal(resolveConfig({}).host, '127.0.0.1');
    assert.equal(resolveConfig({}).port, 8787);
    assert.throws(() => resolveConfig({ flags: { port: 'eighty' } }), /--port: invalid port/);
    assert.throws(() => resolveConfig({ env: { MEMAUTH_BODY_LIMIT: 'lots' } }), /\$MEMAUTH_BODY_LIMIT/);
    writeFileSync(file, JSON.stringify({ prot: 1 }));
    assert.throws(
      () => resolveConfig({ configFile: file }),
      (e: Error & { code?: string }) => e.code === 'INVALID_ARGUMENT' && /prot/.test(e.message),
    );
  });

  test('a served process takes the database from the flag, else the environment, else the file; limits from the file', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'memauth.json'), JSON.stringify({ db: 'file.db', port: 0, bodyLimit: '1kb', logLevel: 'warn' }));
    const a = await startServerProcess({ cwd: dir, args: ['--config', 'memauth.json', '--db', 'flag.db'], env: { MEMAUTH_DB: join(dir, 'env.db') } });
    const t = await addPrincipal(a.url, a.adminToken as string, { tenant: 'acme', id: 'w', kind: 'user', domain: 'd' });
    expectError(await client(a.url, t).post('/v1/memories', { scope: 's', content: 'x'.repeat(2000) }), 413, 'BODY_TOO_LARGE');
    assert.equal(await a.stop(), 0);
    assert.ok(existsSync(join(dir, 'flag.db')) && !existsSync(join(dir, 'env.db')) && !existsSync(join(dir, 'file.db')));
    const b = await startServerProcess({ cwd: dir, args: ['--config', 'memauth.json'], env: { MEMAUTH_DB: join(dir, 'env.db') } });
    assert.equal(await b.stop(), 0);
    assert.ok(existsSync(join(dir, 'env.db')) && !existsSync(join(dir, 'file.db')));
    const c = await startServerProcess({ cwd: dir, args: [], env: { MEMAUTH_CONFIG: join(dir, 'memauth.json') } });
    assert.equal(await c.stop('SIGINT'), 0, 'SIGINT stops it cleanly too');
    assert.ok(existsSync(join(dir, 'file.db')));
  });
});

describe('graceful shutdown', () => {
  test('SIGTERM during concurrent writes: every acknowledged write is there after a restart', async (t) => {
    const dir = tempDir();
    const srv = await startServerProcess({ cwd: dir, args: ['--db', 'g.db', '--port', '0', '--log-level', 'warn'] });
    const token = await addPrincipal(srv.url, srv.adminToken as string, { tenant: 'acme', id: 'writer', kind: 'user', domain: 'd' });
    const N = 400;
    const acked = new Map<string, string>();
    let signalled = false;
    const outcomes: string[] = [];
    await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const content = `write number ${i} of the shutdown test`;
        try {
          const r = await http(srv.url, 'POST', '/v1/memories', { token, body: { scope: 'load', content } });
          if (r.status === 201) {
            acked.set(r.body.record.id as string, content);
            if (acked.size === 25 && !signalled) {
              signalled = true;
              srv.proc.kill('SIGTERM');
            }
            outcomes.push('201');
          } else {
            // refused after the signal: never a 500, never a half-done write
            expectError(r, 503, 'SHUTTING_DOWN');
            outcomes.push('503');
          }
        } catch {
          outcomes.push('connection refused or closed');
        }
      }),
    );
    assert.ok(signalled);
    assert.equal(await srv.stop(), 0, `clean exit\n${srv.stderr()}`);
    t.diagnostic(`acknowledged ${acked.size}, refused 503 ${outcomes.filter((o) => o === '503').length}, not connected ${outcomes.filter((o) => o.startsWith('conn')).length}`);
    const again = await startServerProcess({ cwd: dir, args: ['--db', 'g.db', '--port', '0', '--log-level', 'warn'] });
    try {
      const c = client(again.url, token);
      const list = await c.get('/v1/memories?scope=load&limit=10000');
      const stored = new Map<string, string>(list.body.records.map((r: { id: string; content: string }) => [r.id, r.content]));
      for (const [id, content] of acked) assert.equal(stored.get(id), content, `acknowledged write ${id} is stored`);
      assert.ok(stored.size <= N);
      const v = await c.get('/v1/audit/verify');
      assert.equal(v.body.ok, true, JSON.stringify(v.body));
      assert.equal(v.body.tenants[0].checkpoint?.ok, true, 'the shutdown wrote a signed checkpoint of the head');
    } finally {
      assert.equal(await again.stop(), 0);
    }
  });
});
