/**
 * The bound on the matches a lexical search ranks (src/store/search-budget.ts), on either driver:
 * a word matching more than RANKED_MATCHES records of the scope is not scored (BM25 on SQLite,
 * `ts_rank` on PostgreSQL) — its matches come newest first, after the ranked matches of the
 * query's rarer words — and the choice depends on the tenant's own records only.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { StorageDriver } from '../../src/store/driver.js';
import { RANKED_MATCHES } from '../../src/store/search-budget.js';
import { T } from '../helpers.js';
import type { StoreFactory } from './common.js';

const AT = Date.parse('2026-01-01T00:00:00.000Z');
const NOW = '2026-06-01T00:00:00.000Z';

/** One active record `id` of `tenant`/s0 written `j` seconds after AT (newest = highest j). */
function recordOf(id: string, content: string, tenant: string, j: number, expiresAt: string | null = null) {
  const at = new Date(AT + j * 1000).toISOString();
  return {
    formatVersion: 1 as const,
    id,
    tenant,
    scope: 's0',
    content,
    contentHash: 'x',
    createdAt: at,
    expiresAt,
    origin: { authority: 'user_confirmed' as const, principalId: 'p', sourceRef: 's', writtenAt: at },
    derivedFrom: [],
    taint: { lowestAuthority: 'user_confirmed' as const, channels: [], sources: [], oldestSourceAt: at },
    audit: { policyVersion: 'v', writeReason: 'w', seq: 1 },
    status: 'active' as const,
  };
}

/** Insert `count` records of `tenant`, the j-th `recordOf(name(j), text(j))`, 500 per transaction. */
async function load(d: StorageDriver, tenant: string, count: number, name: (j: number) => string, text: (j: number) => string): Promise<void> {
  for (let i = 0; i < count; i += 500)
    await d.transaction(tenant, async (tx) => {
      for (let j = i; j < Math.min(count, i + 500); j++) await tx.insertRecord(recordOf(name(j), text(j), tenant, j));
    });
}

/** The bound's cases, against the factory's store. */
export function searchBudget(f: StoreFactory): void {
  test('a word in more records than the bound comes newest first, after the ranked rarer words, whatever other tenants hold', { timeout: 120_000 }, async (t) => {
    const env = await f.open();
    t.after(env.dispose);
    const d = env.mem.driver;
    const ids = async (tenant: string, q: string, limit: number): Promise<string[]> => (await d.search(tenant, 's0', q, limit, NOW)).map((h) => h.record.id);
    const n = RANKED_MATCHES + 40;
    const name = (i: number): string => `mem_${String(i).padStart(6, '0')}`;
    await load(d, T, n, name, (j) => (j === 10 ? 'common rare rare' : j === 20 ? 'common rare' : `common item${j}`));
    // the newest record has expired: the newest-first fill skips it
    await d.transaction(T, async (tx) => tx.insertRecord(recordOf('mem_expired', 'common latest', T, n, '2020-01-01T00:00:00.000Z')));
    const newest = [n - 1, n - 2, n - 3].map(name);
    assert.deepEqual(await ids(T, 'common', 3), newest);
    assert.deepEqual(
      (await d.search(T, 's0', 'common', 3, NOW)).map((h) => h.score),
      [0, 0, 0],
    );
    // the rare word is ranked (more occurrences first), the common word fills the rest
    const mixed = [name(10), name(20), name(n - 1), name(n - 2)];
    assert.deepEqual(await ids(T, 'common rare', 4), mixed);
    assert.deepEqual(await ids(T, 'rare', 5), [name(10), name(20)]);
    const scores = (await d.search(T, 's0', 'common rare', 4, NOW)).map((h) => h.score);
    assert.ok((scores[0] as number) > (scores[1] as number) && (scores[1] as number) > 0, `ranked scores ${scores.join(', ')}`);
    assert.deepEqual(scores.slice(2), [0, 0]);
    // within the bound the word is ranked: item7 matches one record
    assert.deepEqual(await ids(T, `item7 common`, 2), [name(7), name(n - 1)]);
    // another tenant where 'rare' is in more records than the bound changes nothing here
    await load(
      d,
      'other',
      RANKED_MATCHES + 10,
      (j) => `mem_o${j}`,
      () => 'rare common',
    );
    assert.deepEqual(await ids(T, 'common rare', 4), mixed);
    assert.deepEqual(await ids('other', 'rare', 2), ['mem_o' + (RANKED_MATCHES + 9), 'mem_o' + (RANKED_MATCHES + 8)]);
  });
}
