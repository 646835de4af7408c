/**
 * Keyed content hashes (src/core/content-hash.ts; docs/design.md § Deletion, retention, privacy): a
 * deleted record keeps its hash, so the hash must not let anyone guess low-entropy content from
 * an audit export. New records carry `hmac-sha256:` + HMAC-SHA-256 under the tenant's random
 * key, stored outside the audit chain; verification uses the key.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sha256Hex } from '../../src/core/canonical.js';
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
}
