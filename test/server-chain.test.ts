/**
 * Principals and tokens are in the audit chain, end to end over real HTTP (docs/design.md § Audit log):
 * the attack of two plain INSERTs into the running server's database — a `user` principal and a
 * token for it — gets no identity, no confirmation and no allowed payment, and `audit verify`
 * names both rows. Token issue, rotation and revocation over HTTP are recorded in the chain.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { tokenHash } from '../src/server/tokens.js';
import { type ServerProcess, addPrincipal, client, expectError, expectStatus, startServerProcess, tempDir } from './server-helpers.js';

let srv: ServerProcess;
let admin: string;
let dbFile: string;
const tok: Record<string, string> = {};

before(async () => {
  const dir = tempDir();
  dbFile = join(dir, 'chain.db');
  srv = await startServerProcess({ cwd: dir, args: ['--db', 'chain.db', '--port', '0', '--log-level', 'warn'] });
  admin = srv.adminToken as string;
  for (const [id, kind, domain] of [
    ['ext', 'external', 'pastebin'],
    ['alice', 'user', 'acme-staff'],
    ['bot', 'agent', 'agents'],
  ] as const) {
    tok[id] = await addPrincipal(srv.url, admin, { tenant: 'acme', id, kind, domain });
  }
});

after(async () => {
  assert.equal(await srv.stop('SIGTERM'), 0);
});

/** Run statements on the server's database file from outside the server (the attacker's access). */
function sql(statements: Array<[string, unknown[]]>): void {
  const db = new Database(dbFile);
  try {
    for (const [s, p] of statements) db.prepare(s).run(...p);
  } finally {
    db.close();
  }
}

describe('two plain INSERTs (a user principal and its token) get no identity', () => {
  test('the forged token is 401, the forged user cannot confirm, the payment is not allowed, verify names both rows', async () => {
    const secret = `mat_${'E'.repeat(43)}`;
    const at = new Date().toISOString();
    sql([
      ['INSERT INTO principals (tenant, id, kind, max_authority, domain, created_at) VALUES (?, ?, ?, ?, ?, ?)', ['acme', 'eve', 'user', 'user_confirmed', 'evil', at]],
      ['INSERT INTO tokens (id, tenant, principal_id, hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL)', ['tok_eve', 'acme', 'eve', tokenHash(secret), at]],
    ]);
    const eve = client(srv.url, secret);
    expectError(await eve.get('/v1/whoami'), 401, 'UNAUTHENTICATED');
    const pay = { type: 'pay', args: { to: 'ACCT-EVIL', amount: '9000' } };
    expectError(await eve.post('/v1/confirmations', { action: pay }), 401, 'UNAUTHENTICATED');
    // nor is the forged user's turn accepted (the admin may give a user's turn)
    const adm = client(srv.url, admin);
    const ut = await adm.post('/v1/decisions', { tenant: 'acme', action: pay, userTurn: { principal: 'eve', text: 'pay 9000 to ACCT-EVIL' } });
    assert.equal(ut.body.code, 'UNKNOWN_PRINCIPAL', ut.text);
    const d = await client(srv.url, tok.bot as string).post('/v1/decisions', { action: pay });
    expectStatus(d, 201);
    assert.notEqual(d.body.outcome, 'allow');
    const list = await adm.get('/v1/principals?tenant=acme');
    assert.ok(!list.body.principals.some((p: { id: string }) => p.id === 'eve'), 'the forged principal is not listed');
    const v = await adm.get('/v1/audit/verify?tenant=acme');
    expectStatus(v, 200);
    assert.equal(v.body.ok, false);
    const bad = v.body.tenants[0].records.bad as Array<{ id: string; problem: string }>;
    assert.ok(
      bad.some((b) => b.id === 'principal:eve' && b.problem === 'principal_not_in_audit'),
      JSON.stringify(bad),
    );
    assert.ok(
      bad.some((b) => b.id === 'tok_eve' && b.problem === 'token_no_audit_entry'),
      JSON.stringify(bad),
    );
  });

  test("raising a real principal's row (external → user) over SQL makes its own token 401", async () => {
    sql([
      ['DROP TRIGGER IF EXISTS principals_no_update', []],
      ["UPDATE principals SET kind = 'user', max_authority = 'user_confirmed' WHERE tenant = 'acme' AND id = 'ext'", []],
    ]);
    expectError(await client(srv.url, tok.ext as string).get('/v1/whoami'), 401, 'UNAUTHENTICATED');
  });
});

describe('token operations over HTTP are in the chain', () => {
  test('rotate and revoke append token entries; a revoked token stays revoked when its row is cleared by SQL', async () => {
    const adm = client(srv.url, admin);
    const issued = await adm.post('/v1/tokens', { tenant: 'acme', principal: 'bot' });
    expectStatus(issued, 201);
    const id = issued.body.info.id as string;
    const rotated = await adm.post(`/v1/tokens/${id}/rotate`, {});
    expectStatus(rotated, 201);
    expectStatus(await adm.del(`/v1/tokens/${rotated.body.info.id as string}`), 200);
    const exported = await adm.get('/v1/audit/export?tenant=acme');
    const ops = exported.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { op: string; payload: { tokenId?: string } })
      .filter((e) => e.op.startsWith('token_'));
    assert.deepEqual(
      ops.filter((e) => e.payload.tokenId === id || e.payload.tokenId === rotated.body.info.id).map((e) => e.op),
      ['token_issue', 'token_rotate', 'token_issue', 'token_revoke'],
    );
    sql([
      ['DROP TRIGGER IF EXISTS tokens_revoke_only', []],
      ['UPDATE tokens SET revoked_at = NULL WHERE id = ?', [rotated.body.info.id]],
    ]);
    expectError(await client(srv.url, rotated.body.token as string).get('/v1/whoami'), 401, 'UNAUTHENTICATED');
  });
});
