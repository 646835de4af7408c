/**
 * Principals and tokens are in the chain (docs/design.md § Audit log: every row that can grant
 * authority or identity is checked against the chain). Rows inserted or altered by raw SQL —
 * under the API, as an attacker with the database file would — are no principal and no token:
 * the gate and authentication refuse them and `audit verify` names them.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TokenService, tokenHash } from '../../src/server/tokens.js';
import { P, T, expectCode } from '../helpers.js';
import { type Env, type StoreFactory, setupWith } from './common.js';

const NOW = '2025-06-01T00:00:00.000Z';
const SECRET = `mat_${'A'.repeat(43)}`;

/** Insert a principal row by raw SQL (no registration entry). */
async function forgePrincipal(env: Env, id: string, kind: string, maxAuthority: string, domain: string, tenant = T): Promise<void> {
  await env.raw.query('INSERT INTO principals (tenant, id, kind, max_authority, domain, created_at) VALUES (?, ?, ?, ?, ?, ?)', [tenant, id, kind, maxAuthority, domain, NOW]);
}

/** Insert a token row by raw SQL (no token_issue entry). */
async function forgeToken(env: Env, id: string, tenant: string | null, principalId: string | null, secret = SECRET): Promise<void> {
  await env.raw.query('INSERT INTO tokens (id, tenant, principal_id, hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL)', [id, tenant, principalId, tokenHash(secret), NOW]);
}

async function rejects401(ts: TokenService, secret: string): Promise<void> {
  await assert.rejects(ts.authenticate(secret), (e: Error & { code?: string; status?: number }) => e.code === 'UNAUTHENTICATED', 'the token must not authenticate');
}

async function badOf(env: Env, tenant: string): Promise<Array<{ id: string; problem: string }>> {
  const report = await env.mem.verifyAudit({});
  assert.equal(report.ok, false, 'verify must fail');
  return [...(report.tenants.find((t) => t.tenant === tenant)?.records.bad ?? [])];
}

const PAY = { type: 'pay', args: { to: 'ACCT-EVIL', amount: '9000' } };

/** The identity cases, against the factory's store. */
export function identity(f: StoreFactory): void {
  describe('forged principal and token rows (raw INSERT)', () => {
    test('a user principal and its token inserted by raw SQL: the forged user cannot confirm, the token cannot authenticate, verify names both', async (t) => {
      const env = await setupWith(f);
      t.after(env.dispose);
      const { mem } = env;
      await forgePrincipal(env, 'eve', 'user', 'user_confirmed', 'eve.example');
      await forgeToken(env, 'tok_forged1', T, 'eve');
      await expectCode(() => mem.confirm({ tenant: T, principal: 'eve', action: PAY }), 'UNKNOWN_PRINCIPAL');
      const d = await mem.authorize({ tenant: T, action: PAY });
      assert.notEqual(d.outcome, 'allow');
      await expectCode(() => mem.authorize({ tenant: T, action: PAY, userTurn: { principal: 'eve', text: 'pay 9000 to ACCT-EVIL' } }), 'UNKNOWN_PRINCIPAL');
      await expectCode(() => mem.write({ tenant: T, scope: 'chat', principal: 'eve', content: 'pay ACCT-EVIL' }), 'UNKNOWN_PRINCIPAL');
      assert.ok(!(await mem.listPrincipals({ tenant: T })).some((p) => p.id === 'eve'));
      await rejects401(new TokenService(mem.driver), SECRET);
      const bad = await badOf(env, T);
      assert.ok(
        bad.some((b) => b.id === 'principal:eve' && b.problem === 'principal_not_in_audit'),
        JSON.stringify(bad),
      );
      assert.ok(
        bad.some((b) => b.id === 'tok_forged1' && b.problem === 'token_no_audit_entry'),
        JSON.stringify(bad),
      );
    });

    test('a forged token for a registered principal, an admin token, and rows under a tenant with no chain are refused and reported', async (t) => {
      const env = await setupWith(f);
      t.after(env.dispose);
      const ts = new TokenService(env.mem.driver);
      await forgeToken(env, 'tok_alice', T, P.alice, `mat_${'B'.repeat(43)}`);
      await forgeToken(env, 'tok_admin', null, null, `mat_${'C'.repeat(43)}`);
      await forgePrincipal(env, 'boss', 'user', 'user_confirmed', 'boss', 'newco');
      await forgeToken(env, 'tok_newco', 'newco', 'boss', `mat_${'D'.repeat(43)}`);
      for (const c of 'BCD') await rejects401(ts, `mat_${c.repeat(43)}`);
      const report = await env.mem.verifyAudit({});
      const bad = report.tenants.flatMap((x) => x.records.bad.map((b) => `${x.tenant}/${b.id}/${b.problem}`));
      for (const want of [`${T}/tok_alice/token_no_audit_entry`, '(admin)/tok_admin/token_no_audit_entry', 'newco/principal:boss/principal_not_in_audit', 'newco/tok_newco/token_no_audit_entry'])
        assert.ok(bad.includes(want), `${want} in ${JSON.stringify(bad)}`);
    });
  });

  describe('altered principal rows (triggers dropped)', () => {
    test('raising kind or ceiling, or changing the domain, makes the principal unknown everywhere', async (t) => {
      const env = await setupWith(f);
      t.after(env.dispose);
      const { mem, raw } = env;
      const rec = (await mem.write({ tenant: T, scope: 'notes', principal: P.agent, content: 'Vendor ACME bank account is ACCT-1234' })).record;
      await raw.dropTriggers('principals', ['update']);
      await raw.query("UPDATE principals SET kind = 'user', max_authority = 'user_confirmed' WHERE tenant = ? AND id = ?", [T, P.mallory]);
      await raw.query("UPDATE principals SET domain = 'independent.example' WHERE tenant = ? AND id = ?", [T, P.bank2]);
      await raw.query("UPDATE principals SET domain = 'elsewhere.example' WHERE tenant = ? AND id = ?", [T, P.agent]);
      await expectCode(() => mem.confirm({ tenant: T, principal: P.mallory, action: PAY }), 'UNKNOWN_PRINCIPAL');
      await expectCode(() => mem.write({ tenant: T, scope: 'chat', principal: P.mallory, content: 'hello' }), 'UNKNOWN_PRINCIPAL');
      await expectCode(() => mem.corroborate({ tenant: T, recordId: rec.id, principal: P.bank2, evidence: 'https://bank.example/acct' }), 'UNKNOWN_PRINCIPAL');
      await expectCode(() => mem.delete({ tenant: T, id: rec.id, principal: P.mallory }), 'UNKNOWN_PRINCIPAL');
      // the writer's domain is unknown: no corroboration can lift its record (independence cannot be judged)
      await mem.corroborate({ tenant: T, recordId: rec.id, principal: P.bank, evidence: 'https://bank.example/acct' });
      const r = await mem.corroborate({ tenant: T, recordId: rec.id, principal: P.registry, evidence: 'https://registry.example/acct' });
      assert.equal(r.counted, false);
      assert.equal(r.rejection, 'lineage_unverified');
      const listed = (await mem.listPrincipals({ tenant: T })).map((p) => p.id);
      for (const id of [P.mallory, P.bank2, P.agent]) assert.ok(!listed.includes(id), id);
      const bad = await badOf(env, T);
      for (const id of [P.mallory, P.bank2, P.agent])
        assert.ok(
          bad.some((b) => b.id === `principal:${id}` && b.problem === 'principal_not_in_audit'),
          `${id}: ${JSON.stringify(bad)}`,
        );
    });
  });

  describe('tokens in the chain', () => {
    test('issue, rotate and revoke append token entries (never the secret); verify passes; replay is unaffected', async (t) => {
      const env = await setupWith(f);
      t.after(env.dispose);
      const ts = new TokenService(env.mem.driver);
      const a = await ts.issue({ tenant: T, principal: P.agent });
      const id = await ts.authenticate(a.token);
      assert.equal(id.kind, 'principal');
      const r = await ts.rotate(a.info.id);
      await rejects401(ts, a.token);
      assert.equal((await ts.authenticate(r.token)).kind, 'principal');
      await ts.revoke(r.info.id);
      await rejects401(ts, r.token);
      const admin = await ts.ensureAdmin();
      assert.ok(admin);
      assert.equal((await ts.authenticate(admin.token)).kind, 'admin');
      const entries = await env.mem.driver.auditRange(T, 1, 10_000);
      const ops = entries.map((e) => e.op).filter((o) => o.startsWith('token_'));
      assert.deepEqual(ops, ['token_issue', 'token_rotate', 'token_issue', 'token_revoke']);
      const text = JSON.stringify([...entries, ...(await env.mem.driver.auditRange('(admin)', 1, 100))]);
      for (const secret of [a.token, r.token, admin.token]) assert.ok(!text.includes(secret), 'no secret in the chain');
      const report = await env.mem.verifyAudit({});
      assert.equal(report.ok, true, report.tenants.map((x) => x.message).join('; '));
      assert.ok(
        report.tenants.some((x) => x.tenant === '(admin)'),
        'the admin chain is verified',
      );
    });

    test('clearing revoked_at by raw SQL does not bring a revoked token back; verify names it', async (t) => {
      const env = await setupWith(f);
      t.after(env.dispose);
      const ts = new TokenService(env.mem.driver);
      const a = await ts.issue({ tenant: T, principal: P.agent });
      await ts.revoke(a.info.id);
      await env.raw.dropTriggers('tokens', ['update']);
      await env.raw.query('UPDATE tokens SET revoked_at = NULL WHERE id = ?', [a.info.id]);
      await rejects401(ts, a.token);
      const bad = await badOf(env, T);
      assert.ok(
        bad.some((b) => b.id === a.info.id && b.problem === 'token_revocation_missing_from_row'),
        JSON.stringify(bad),
      );
    });

    test("a token re-pointed at another principal, or an issued token's principal altered, is refused", async (t) => {
      const env = await setupWith(f);
      t.after(env.dispose);
      const ts = new TokenService(env.mem.driver);
      const a = await ts.issue({ tenant: T, principal: P.mallory });
      const b = await ts.issue({ tenant: T, principal: P.agent });
      await env.raw.dropTriggers('tokens', ['update']);
      await env.raw.query('UPDATE tokens SET principal_id = ? WHERE id = ?', [P.alice, a.info.id]);
      await rejects401(ts, a.token);
      await env.raw.dropTriggers('principals', ['update']);
      await env.raw.query("UPDATE principals SET kind = 'tool', max_authority = 'trusted_tool_verified' WHERE tenant = ? AND id = ?", [T, P.agent]);
      await rejects401(ts, b.token);
      const bad = await badOf(env, T);
      assert.ok(
        bad.some((x) => x.id === a.info.id && x.problem === 'token_row_differs_from_audit'),
        JSON.stringify(bad),
      );
    });

    test('a token from before audited tokens is refused until an admin adopts it; adoption is recorded', async (t) => {
      const env = await setupWith(f);
      t.after(env.dispose);
      const ts = new TokenService(env.mem.driver);
      await forgeToken(env, 'tok_legacy', T, P.agent);
      await assert.rejects(ts.authenticate(SECRET), (e: Error & { details?: { reason?: string } }) => e.details?.reason === 'not_in_audit');
      const adopted = await ts.adopt();
      assert.deepEqual(
        adopted.map((x) => x.id),
        ['tok_legacy'],
      );
      assert.equal((await ts.authenticate(SECRET)).kind, 'principal');
      assert.deepEqual(await ts.adopt(), [], 'adopted once');
      const e = (await env.mem.driver.auditEntriesNaming(T, ['token_issue'], { field: 'tokenId', value: 'tok_legacy' }))[0];
      assert.equal(e?.payload.adopted, true);
      const report = await env.mem.verifyAudit({});
      assert.equal(report.ok, true, report.tenants.map((x) => x.message).join('; '));
    });
  });
}
