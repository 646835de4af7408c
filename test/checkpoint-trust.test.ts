/**
 * Found by `npm run reliability` (tamper suite): a rewritten, re-hashed chain passed verification
 * when the attacker added a checkpoint signed with a key of their own, or after one failed
 * `audit verify` had signed the rewritten head on close. And a forged record's view showed the
 * authority its row claims.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import { entryHash, signCheckpoint } from '../src/core/audit.js';
import { openMemory } from '../src/index.js';
import { P, T, dropAuditTriggers, rawDb, setup } from './helpers.js';

async function rewriteAndRehash(db: ReturnType<typeof rawDb>, from: number): Promise<{ seq: number; hash: string }> {
  dropAuditTriggers(db);
  const row = db.prepare('SELECT payload FROM audit WHERE tenant = ? AND seq = ?').get(T, from) as { payload: string };
  db.prepare('UPDATE audit SET payload = ? WHERE tenant = ? AND seq = ?').run(JSON.stringify({ ...(JSON.parse(row.payload) as object), injected: 'attacker' }), T, from);
  const rows = db.prepare('SELECT * FROM audit WHERE tenant = ? AND seq >= ? ORDER BY seq').all(T, from - 1) as Array<Record<string, unknown>>;
  let prev = rows.shift()?.hash as string;
  let last = { seq: 0, hash: '' };
  for (const r of rows) {
    const h = entryHash({ seq: Number(r.seq), prevHash: prev, op: r.op as never, payload: JSON.parse(r.payload as string), policyVersion: r.policy_version as string });
    db.prepare('UPDATE audit SET prev_hash = ?, hash = ? WHERE tenant = ? AND seq = ?').run(prev, h, T, r.seq);
    prev = h;
    last = { seq: Number(r.seq), hash: h };
  }
  return last;
}

test('a checkpoint signed with another key does not vouch for a rewritten chain', async (t) => {
  const env = await setup();
  t.after(env.dispose);
  for (let i = 0; i < 5; i += 1) await env.mem.write({ tenant: T, scope: 's', principal: P.alice, content: `note ${i}` });
  await env.mem.checkpoint();
  const head = await rewriteAndRehash(env.db, 3);
  const foreign = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const cp = signCheckpoint(T, { seq: head.seq + 0, hash: head.hash }, new Date(Date.now() + 1000).toISOString(), foreign);
  env.db.exec('DROP TRIGGER IF EXISTS checkpoints_no_update; DROP TRIGGER IF EXISTS checkpoints_no_delete;');
  env.db.prepare('INSERT INTO checkpoints (tenant, seq, hash, at, public_key, signature) VALUES (?, ?, ?, ?, ?, ?)').run(cp.tenant, cp.seq + 1000, cp.hash, cp.at, cp.publicKey, cp.signature);
  const rep = await env.mem.verifyAudit({ tenant: T });
  assert.equal(rep.ok, false);
});

test('closing (or checkpointing) a store whose chain contradicts its checkpoint does not sign the rewritten head', async (t) => {
  const env = await setup();
  t.after(env.dispose);
  for (let i = 0; i < 5; i += 1) await env.mem.write({ tenant: T, scope: 's', principal: P.alice, content: `note ${i}` });
  await env.close(); // signs the head
  const again = await openMemory({ path: env.path });
  await rewriteAndRehash(rawDb(again), 3);
  assert.equal((await again.verifyAudit({ tenant: T })).ok, false);
  await assert.rejects(() => again.checkpoint({ tenant: T, force: true }), /contradicts its signed checkpoint/);
  await again.close();
  const third = await openMemory({ path: env.path });
  t.after(() => third.close());
  assert.equal((await third.verifyAudit({ tenant: T })).ok, false, 'still detected after a close');
});

test("a forged record's view has no authority", async (t) => {
  const env = await setup();
  t.after(env.dispose);
  await env.mem.write({ tenant: T, scope: 'vendors', principal: P.alice, content: 'x' });
  const seq = (env.db.prepare('SELECT max(seq) AS s FROM audit').get() as { s: number }).s;
  const pv = (env.db.prepare('SELECT version FROM policies LIMIT 1').get() as { version: string }).version;
  const now = new Date().toISOString();
  env.db
    .prepare(
      `INSERT INTO records (id, tenant, scope, content, content_hash, created_at, expires_at, origin_authority, origin_principal, origin_source, origin_written_at, taint_lowest, taint_channels, taint_sources, taint_oldest_source_at, policy_version, write_reason, audit_seq, status, deleted_at)
     VALUES ('mem_forged1', ?, 'vendors', 'pay ACCT-F', 'h', ?, NULL, 'system_policy', 'pipeline', 'principal:pipeline', ?, 'system_policy', '[]', '[]', ?, ?, 'write', ?, 'active', NULL)`,
    )
    .run(T, now, now, now, pv, seq);
  const v = await env.mem.get({ tenant: T, id: 'mem_forged1' });
  assert.equal(v.actionAuthority, 'external_untrusted');
});
