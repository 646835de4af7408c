/**
 * The bound on a record's chain of versions (docs/design.md § Memory record): every read of a
 * version judges its whole chain, so a chain holds at most `maxVersionsPerChain` versions (every
 * writer together, default 100): a principal superseding its own record again and again is
 * refused with VERSION_CHAIN_FULL, which says to write a new record. A writer below a current
 * version stops at half the room (TOO_MANY_VERSIONS), so the writers above it can still update.
 * The server reads the limit from MEMAUTH_MAX_VERSIONS_PER_CHAIN.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { type Memory, MemauthError, openMemory } from '../src/index.js';
import { resolveConfig } from '../src/server/config.js';
import { P, T, TEST_POLICY, registerCast, rmDir, tempDir } from './helpers.js';

async function open(t: { after: (fn: () => Promise<void>) => void }, maxVersionsPerChain?: number): Promise<Memory> {
  const dir = tempDir();
  const mem = await openMemory({ path: path.join(dir, 'm.db'), policy: TEST_POLICY, ...(maxVersionsPerChain !== undefined ? { maxVersionsPerChain } : {}) });
  t.after(async () => {
    await mem.close();
    rmDir(dir);
  });
  await registerCast(mem);
  return mem;
}

/** Supersede the current version `id` as `principal` until refused; the versions written and the refusal. */
async function flood(mem: Memory, id: string, principal: string, tries: number): Promise<{ written: number; error: MemauthError | null; last: string }> {
  let last = id;
  for (let i = 0; i < tries; i++) {
    try {
      last = (await mem.supersede({ tenant: T, id: last, principal, content: `payee ACCT-${principal}-${i}`, reason: 'again' })).record.id;
    } catch (e) {
      assert.ok(e instanceof MemauthError, String(e));
      return { written: i, error: e, last };
    }
  }
  return { written: tries, error: null, last };
}

test('a principal superseding its own record stops at the default limit of 100 versions, with an actionable code', async (t) => {
  const mem = await open(t);
  const root = (await mem.write({ tenant: T, scope: 'pay', principal: P.alice, content: 'payee ACCT-0' })).record.id;
  const r = await flood(mem, root, P.alice, 120);
  assert.equal(r.written, 99, 'the root and 99 versions');
  assert.equal(r.error?.code, 'VERSION_CHAIN_FULL');
  assert.equal((r.error?.details as { max: number }).max, 100);
  assert.match(r.error?.message ?? '', /new record/);
  const v = await mem.get({ tenant: T, id: root });
  assert.equal(v.id, r.last);
  assert.equal(v.versions?.history.length, 100);
});

test('a smaller limit: the owner fills it, a writer below stops at half, and the bad values are refused', async (t) => {
  const mem = await open(t, 6);
  const own = (await mem.write({ tenant: T, scope: 'pay', principal: P.alice, content: 'payee ACCT-1' })).record.id;
  const mine = await flood(mem, own, P.alice, 10);
  assert.equal(mine.written, 5);
  assert.equal(mine.error?.code, 'VERSION_CHAIN_FULL');

  const fact = (await mem.write({ tenant: T, scope: 'pay', principal: P.alice, content: 'rent to ACCT-ALICE' })).record.id;
  let page = fact;
  let code = '';
  for (let i = 0; i < 10 && code === ''; i++) {
    try {
      page = (await mem.supersede({ tenant: T, id: page, principal: P.mallory, content: `rent to ACCT-EVIL-${i}`, reason: 'spam' })).record.id;
    } catch (e) {
      code = (e as MemauthError).code;
    }
  }
  assert.equal(code, 'TOO_MANY_VERSIONS', 'the external writer stops at half the room');
  const fix = await mem.supersede({ tenant: T, id: fact, principal: P.alice, content: 'rent to ACCT-ALICE-2', reason: 'new account' });
  assert.equal(fix.conflict, false, 'the user, above it, still updates the record');

  for (const bad of [1, 2.5, 0, 1e9]) await assert.rejects(openMemory({ path: ':memory:', maxVersionsPerChain: bad }), (e: unknown) => (e as MemauthError).code === 'INVALID_ARGUMENT');
});

test('the server reads the limit from MEMAUTH_MAX_VERSIONS_PER_CHAIN', () => {
  assert.equal(resolveConfig({ env: {} }).maxVersionsPerChain, 100);
  assert.equal(resolveConfig({ env: { MEMAUTH_MAX_VERSIONS_PER_CHAIN: '20' } }).maxVersionsPerChain, 20);
  assert.throws(
    () => resolveConfig({ env: { MEMAUTH_MAX_VERSIONS_PER_CHAIN: '1' } }),
    (e: unknown) => (e as MemauthError).code === 'INVALID_ARGUMENT',
  );
});
