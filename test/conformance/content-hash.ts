/**
 * Keyed content hashes (src/core/content-hash.ts; docs/design.md § Deletion, retention, privacy): a
 * deleted record keeps its hash, so the hash must not let anyone guess low-entropy content from
 * an audit export. New records carry `hmac-sha256:` + HMAC-SHA-256 under the tenant's random
 * key, stored outside the audit chain; verification uses the key. A record's typed claims
 * (docs/design.md § Claims and intent) are covered by the same hash and erased with the content.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sha256Hex } from '../../src/core/canonical.js';
import { hashedBody } from '../../src/core/claims.js';
import { contentHashOf } from '../../src/core/content-hash.js';
import { P, T, registerCast } from '../helpers.js';
import { type StoreFactory, expectImmutable, setupWith } from './common.js';

export function contentHash(f: StoreFactory): void {
  test('a deleted record keeps only a keyed hash: no plain SHA-256 of its content in the audit chain or the row', async (t) => {
    const env = await setupWith(f);
    t.after(env.dispose);
    const { mem } = env;
    const content = 'balance: 500';
    const rec = (await mem.write({ tenant: T, scope: 'acct', principal: P.bank, content, source: 'bankapi:acct' })).record;
    assert.match(rec.contentHash, /^hmac-sha256:[0-9a-f]{64}$/);
    assert.notEqual(rec.contentHash, sha256Hex(content));
    await mem.delete({ tenant: T, id: rec.id });
    const [row] = await mem.driver.getRecords(T, [rec.id]);
    assert.equal(row?.content, null);
    assert.equal(row?.contentHash, rec.contentHash, 'the hash is kept');
    const head = (await mem.driver.auditHead(T))?.seq ?? 0;
    const exported = JSON.stringify(await mem.driver.auditRange(T, 1, head));
    assert.ok(exported.includes(rec.contentHash), 'write and delete entries carry the keyed hash');
    assert.ok(!exported.includes(sha256Hex(content)), 'no plain SHA-256 of the content in the export');
    // guessing needs the key, which is not in the chain
    const key = await mem.driver.tenantContentKey(T);
    assert.match(String(key), /^[0-9a-f]{64}$/);
    assert.ok(!exported.includes(String(key)), 'the key is not in the audit chain');
    assert.equal(contentHashOf(content, key), rec.contentHash);
    assert.equal((await mem.verifyAudit({ tenant: T })).ok, true);
  });

  test('each tenant has its own key, stable across writes; the key row is never updated; verification checks content with it', async (t) => {
    const env = await setupWith(f);
    t.after(env.dispose);
    const { mem, raw } = env;
    await registerCast(mem, 'globex');
    const a = (await mem.write({ tenant: T, scope: 's', principal: P.bank, content: 'same text', source: 'bankapi:a' })).record;
    const b = (await mem.write({ tenant: T, scope: 's', principal: P.bank, content: 'same text', source: 'bankapi:b' })).record;
    const g = (await mem.write({ tenant: 'globex', scope: 's', principal: P.bank, content: 'same text', source: 'bankapi:a' })).record;
    assert.equal(a.contentHash, b.contentHash, 'one key per tenant');
    assert.notEqual(a.contentHash, g.contentHash, 'another tenant, another key: equal content is not linkable across tenants');
    await expectImmutable(() => raw.query('UPDATE tenant_keys SET content_key = ? WHERE tenant = ?', ['0'.repeat(64), T]), 'UPDATE tenant_keys');
    assert.equal((await mem.verifyAudit({ tenant: T })).ok, true);
    // a row whose content no longer matches its keyed hash is reported
    await env.raw.dropTriggers('records', ['update']);
    await raw.query('UPDATE records SET content = ? WHERE id = ?', ['other text', a.id]);
    const report = await mem.verifyAudit({ tenant: T });
    assert.equal(report.ok, false);
    assert.ok(JSON.stringify(report).includes(a.id));
  });

  test('typed claims: stored and read back as written, covered by the keyed hash, immutable, erased with the content by delete', async (t) => {
    const env = await setupWith(f);
    t.after(env.dispose);
    const { mem, raw } = env;
    const content = 'Vendor master: Kestrel Tools is paid to KESTREL-AP-01.';
    const claims = [
      { subject: 'Kestrel Tools', field: 'payee_account', value: 'KESTREL-AP-01' },
      { subject: 'Kestrel Tools', field: 'email_address', value: 'ap@kestrel.example' },
    ];
    const a = (await mem.write({ tenant: T, scope: 'vendors', principal: P.bank, content, source: 'bankapi:kestrel', claims })).record;
    const b = (
      await mem.write({
        tenant: T,
        scope: 'vendors',
        principal: P.bank,
        content,
        source: 'bankapi:kestrel-2',
        claims: [{ subject: 'Kestrel Tools', field: 'payee_account', value: 'KESTREL-ERASE-9' }],
      })
    ).record;
    const plain = (await mem.write({ tenant: T, scope: 'vendors', principal: P.bank, content, source: 'bankapi:kestrel-3' })).record;
    assert.deepEqual(a.claims, claims);
    assert.deepEqual((await mem.get({ tenant: T, id: a.id })).claims, claims, 'read back in order, as written');
    assert.deepEqual((await mem.driver.getRecords(T, [a.id]))[0]?.claims, claims);
    assert.equal(plain.claims, undefined, 'a record without claims has none');
    const key = await mem.driver.tenantContentKey(T);
    assert.equal(a.contentHash, contentHashOf(hashedBody(content, claims), key), 'the hash covers content and claims');
    assert.equal(plain.contentHash, contentHashOf(content, key), 'without claims, the hash of the content alone');
    assert.notEqual(a.contentHash, plain.contentHash);
    await expectImmutable(() => raw.query('UPDATE records SET claims = ? WHERE id = ?', [JSON.stringify([{ ...claims[0], value: 'ACCT-EVIL-9' }]), a.id]), 'UPDATE records.claims');
    // delete erases the claims with the content; the hash stays and still verifies
    await mem.delete({ tenant: T, id: b.id });
    const [erased] = await mem.driver.getRecords(T, [b.id]);
    assert.deepEqual([erased?.content, erased?.claims, erased?.contentHash], [null, undefined, b.contentHash]);
    assert.equal((await mem.get({ tenant: T, id: b.id })).claims, undefined);
    const head = (await mem.driver.auditHead(T))?.seq ?? 0;
    assert.ok(!JSON.stringify(await mem.driver.auditRange(T, 1, head)).includes('KESTREL-ERASE-9'), 'the audit log holds no claim value');
    assert.equal((await mem.verifyAudit({ tenant: T })).ok, true);
    // a claim changed outside the API no longer matches the hash
    await raw.dropTriggers('records', ['update']);
    await raw.query('UPDATE records SET claims = ? WHERE id = ?', [JSON.stringify([{ ...claims[0], value: 'ACCT-EVIL-9' }, claims[1]]), a.id]);
    const report = await mem.verifyAudit({ tenant: T });
    assert.equal(report.ok, false);
    assert.ok(JSON.stringify(report).includes(a.id), 'the report names the record');
    await env.close();
    assert.deepEqual(await raw.residue(['KESTREL-ERASE-9']), [], 'the erased claim value is nowhere in the stored data');
  });
}
