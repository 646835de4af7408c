/**
 * The SQLite driver's bound on the matches a search ranks (src/store/sqlite/native.ts): a word
 * matching more than RANKED_MATCHES records of the scope is not scored by BM25 — its matches come
 * newest first, after the ranked matches of the query's rarer words — and the choice depends on the
 * tenant's own index only.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { SqliteDriver } from '../src/store/sqlite/driver.js';
import { RANKED_MATCHES } from '../src/store/sqlite/native.js';
import { T, tempDir } from './helpers.js';

const AT = '2026-01-01T00:00:00.000Z';
const NOW = '2026-06-01T00:00:00.000Z';

/** One active record `id` of `tenant`/s0 (rowids follow insertion order). */
function recordOf(id: string, content: string, tenant = T, expiresAt: string | null = null) {
  return {
    formatVersion: 1 as const,
    id,
    tenant,
    scope: 's0',
    content,
    contentHash: 'x',
    createdAt: AT,
    expiresAt,
    origin: { authority: 'user_confirmed' as const, principalId: 'p', sourceRef: 's', writtenAt: AT },
    derivedFrom: [],
    taint: { lowestAuthority: 'user_confirmed' as const, channels: [], sources: [], oldestSourceAt: AT },
    audit: { policyVersion: 'v', writeReason: 'w', seq: 1 },
    status: 'active' as const,
  };
}

/** Insert `count` records of `tenant`, the j-th `recordOf(name(j), text(j))`, 500 per transaction. */
async function load(d: SqliteDriver, tenant: string, count: number, name: (j: number) => string, text: (j: number) => string): Promise<void> {
  for (let i = 0; i < count; i += 500)
    await d.transaction(tenant, async (tx) => {
      for (let j = i; j < Math.min(count, i + 500); j++) await tx.insertRecord(recordOf(name(j), text(j), tenant));
    });
}

const ids = async (d: SqliteDriver, tenant: string, q: string, limit: number): Promise<string[]> => (await d.search(tenant, 's0', q, limit, NOW)).map((h) => h.record.id);

test('a word in more records than the bound comes newest first, after the ranked rarer words, whatever other tenants hold', async (t) => {
  const dir = tempDir();
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const d = SqliteDriver.open({ path: path.join(dir, 'budget.db') });
  t.after(() => d.close());
  const n = RANKED_MATCHES + 40;
  const name = (i: number): string => `mem_${String(i).padStart(6, '0')}`;
  await load(d, T, n, name, (j) => (j === 10 ? 'common rare rare' : j === 20 ? 'common rare' : `common item${j}`));
  // the newest record has expired: the newest-first fill skips it
  await d.transaction(T, async (tx) => tx.insertRecord(recordOf('mem_expired', 'common latest', T, '2020-01-01T00:00:00.000Z')));
  const newest = [n - 1, n - 2, n - 3].map(name);
  assert.deepEqual(await ids(d, T, 'common', 3), newest);
  assert.deepEqual(
    (await d.search(T, 's0', 'common', 3, NOW)).map((h) => h.score),
    [0, 0, 0],
  );
  // the rare word is ranked by BM25 (more occurrences first), the common word fills the rest
  const mixed = [name(10), name(20), name(n - 1), name(n - 2)];
  assert.deepEqual(await ids(d, T, 'common rare', 4), mixed);
  assert.deepEqual(await ids(d, T, 'rare', 5), [name(10), name(20)]);
  // within the bound the word is ranked: item7 matches one record
  assert.deepEqual(await ids(d, T, `item7 common`, 2), [name(7), name(n - 1)]);
  // another tenant where 'rare' is in more records than the bound changes nothing here
  await load(
    d,
    'other',
    RANKED_MATCHES + 10,
    (j) => `mem_o${j}`,
    () => 'rare common',
  );
  assert.deepEqual(await ids(d, T, 'common rare', 4), mixed);
  assert.deepEqual(await ids(d, 'other', 'rare', 2), ['mem_o' + (RANKED_MATCHES + 9), 'mem_o' + (RANKED_MATCHES + 8)]);
});
