/**
 * Registering a principal is idempotent when it exists with the same kind, domain and ceiling
 * (library, CLI `--if-not-exists`, HTTP 200 vs 201), and never changes an existing principal: any
 * difference is PRINCIPAL_EXISTS naming it, and a row altered outside the API is not "the same".
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { openMemory } from '../src/api/open.js';
import { MemauthError } from '../src/core/errors.js';
import { SqliteDriver } from '../src/store/sqlite/driver.js';
import { startServer } from '../src/server/http.js';
import { CLI, cleanEnv, expectError, expectStatus, http, tempDir } from './server-helpers.js';

const exists = (differs: string[]) => (e: unknown) =>
  e instanceof MemauthError && e.code === 'PRINCIPAL_EXISTS' && JSON.stringify(Object.keys((e.details.differs as object | undefined) ?? {}).sort()) === JSON.stringify(differs);

test('library: the same registration twice returns the existing principal; any difference refuses and changes nothing', async () => {
  const dir = tempDir();
  const mem = await openMemory({ path: join(dir, 'm.db') });
  try {
    const tenant = 'acme';
    const first = await mem.ensurePrincipal({ tenant, id: 'browser', kind: 'tool', domain: 'Browser', maxAuthority: 'model_inferred' });
    assert.equal(first.created, true);
    const head = (await mem.verifyAudit({ tenant })).tenants[0]?.chain.entries;
    const again = await mem.ensurePrincipal({ tenant, id: 'browser', kind: 'tool', domain: 'browser ', maxAuthority: 'model_inferred' });
    assert.deepEqual(again, { principal: first.principal, created: false }, 'the canonical domain is compared');
    assert.deepEqual(await mem.registerPrincipal({ tenant, id: 'browser', kind: 'tool', domain: 'browser', maxAuthority: 'model_inferred' }), first.principal);
    assert.equal((await mem.verifyAudit({ tenant })).tenants[0]?.chain.entries, head, 'nothing audited');
    // the default ceiling of a tool is higher than this one's: a raise, refused
    await assert.rejects(mem.registerPrincipal({ tenant, id: 'browser', kind: 'tool', domain: 'browser' }), exists(['maxAuthority']));
    await assert.rejects(mem.registerPrincipal({ tenant, id: 'browser', kind: 'user', domain: 'other', maxAuthority: 'model_inferred' }), exists(['domain', 'kind']));
    await assert.rejects(mem.registerPrincipal({ tenant, id: 'browser', kind: 'tool', domain: 'other', maxAuthority: 'model_inferred' }), /domain "browser", not "other"/);
    const [p] = await mem.listPrincipals({ tenant });
    assert.deepEqual(p, first.principal);
  } finally {
    await mem.close();
  }
  // a row raised outside the API is not the registered principal: re-registering with the raised values is refused
  const d = SqliteDriver.open({ path: join(dir, 'm.db') });
  d.unsafeDatabase().exec('DROP TRIGGER principals_no_update');
  d.unsafeDatabase().prepare("UPDATE principals SET max_authority = 'trusted_tool_verified' WHERE id = 'browser'").run();
  d.unsafeDatabase().close();
  const mem2 = await openMemory({ path: join(dir, 'm.db') });
  try {
    await assert.rejects(mem2.registerPrincipal({ tenant: 'acme', id: 'browser', kind: 'tool', domain: 'browser' }), /does not match its registration/);
  } finally {
    await mem2.close();
  }
});

test('CLI: principal add --if-not-exists exits 0 on the same registration; without it, or with a difference, PRINCIPAL_EXISTS', () => {
  const dir = tempDir();
  const run = (args: readonly string[]) => spawnSync(process.execPath, [CLI, '--db', 'm.db', '--tenant', 'acme', ...args], { cwd: dir, env: cleanEnv(), input: '', encoding: 'utf8' });
  assert.equal(run(['init']).status, 0);
  const add = ['principal', 'add', 'bot', '--kind', 'agent', '--domain', 'agents'];
  assert.equal(run(add).status, 0);
  const twice = run(add);
  assert.equal(twice.status, 2);
  assert.match(twice.stderr, /PRINCIPAL_EXISTS.*--if-not-exists/);
  const ok = run([...add, '--if-not-exists', '--json']);
  assert.equal(ok.status, 0, ok.stderr);
  assert.equal(JSON.parse(ok.stdout).created, false);
  const other = run(['principal', 'add', 'bot', '--kind', 'agent', '--domain', 'elsewhere', '--if-not-exists']);
  assert.equal(other.status, 2);
  assert.match(other.stderr, /PRINCIPAL_EXISTS.*domain "agents", not "elsewhere"/);
});

test('HTTP: POST /v1/principals is 201 with a token, then 200 with the existing principal and no token; a difference is 409', async () => {
  const dir = tempDir();
  const srv = await startServer({ config: { db: join(dir, 'm.db'), port: 0, logLevel: 'silent' } });
  try {
    const admin = srv.adminToken?.token as string;
    const body = { tenant: 'acme', id: 'crm', kind: 'tool', domain: 'crm.example' };
    const first = await http(srv.url, 'POST', '/v1/principals', { token: admin, body });
    expectStatus(first, 201);
    assert.equal(first.body.created, true);
    assert.match(first.body.token.token, /^mat_/);
    const again = await http(srv.url, 'POST', '/v1/principals', { token: admin, body });
    expectStatus(again, 200);
    assert.deepEqual(again.body, { principal: first.body.principal, token: null, created: false });
    const raised = await http(srv.url, 'POST', '/v1/principals', { token: admin, body: { ...body, kind: 'system' } });
    expectError(raised, 409, 'PRINCIPAL_EXISTS');
    assert.deepEqual(raised.body.details.differs, { kind: { existing: 'tool', requested: 'system' }, maxAuthority: { existing: 'trusted_tool_verified', requested: 'system_policy' } });
    // a principal token cannot register at all (admin only)
    expectStatus(await http(srv.url, 'POST', '/v1/principals', { token: first.body.token.token, body }), 403);
  } finally {
    await srv.close();
  }
});
