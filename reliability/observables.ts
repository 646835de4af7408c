/**
 * Cross-tenant observables (docs/design.md § Search and tenant isolation): many random tenants (names with
 * quotes, SQL, Unicode, look-alikes of index tables), a shared random vocabulary, random records
 * in several scopes; for one tenant A at a time, a transcript of its full search responses (hits,
 * order, scores; one- to five-word queries, random limits) and list pages is taken, then the
 * other tenants write and erase records with the same words, and A's transcript must be
 * byte-identical. Through the library on SQLite (read cache on and off); on PostgreSQL too when
 * MEMAUTH_TEST_PG_URL names a server (a throwaway schema, dropped afterwards).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { type Memory, openMemory } from '../src/index.js';
import { PostgresDriver } from '../src/store/postgres/index.js';
import { type Options, REL_POLICY, type SuiteResult, Tally, rmDir, rng, tempDir } from './common.js';
import { withPgClient } from '../test/support/postgres.js';

type Rng = ReturnType<typeof rng>;

const NAME_PARTS = ['acme', 'globex', "o'hara", '"; DROP TABLE records; --', 'records_fts_1', 'search_indexes', 'Zürich', '☃', 'k61x62', 'tenant with spaces', 'ACME', 'acme '];

/** `n` tenant names never used before in this store, some of them hostile to naive SQL. */
function tenantNames(r: Rng, n: number, used: Set<string>): string[] {
  const out: string[] = [];
  while (out.length < n) {
    const name = `${r.pick(NAME_PARTS)}${r.next() < 0.5 ? '' : `-${r.int(0, 9999)}`}`;
    if (used.has(name)) continue;
    used.add(name);
    out.push(name);
  }
  return out;
}

const text = (r: Rng, vocab: readonly string[], words: number): string => Array.from({ length: words }, () => (r.next() < 0.7 ? r.pick(vocab.slice(0, 8)) : r.pick(vocab))).join(' ');

/** Where two strings first differ, with a little context on both sides. */
function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i += 1;
  return `at ${i}: …${a.slice(Math.max(0, i - 60), i + 60)}… → …${b.slice(Math.max(0, i - 60), i + 60)}…`;
}

/** A's transcript: every query's full response, and two list pages. */
async function transcript(mem: Memory, tenant: string, queries: ReadonlyArray<readonly [string, string, number]>): Promise<string[]> {
  const out: string[] = [];
  for (const [scope, query, limit] of queries) out.push(JSON.stringify(await mem.search({ tenant, scope, query, limit })));
  out.push(JSON.stringify(await mem.list({ tenant, includeDeleted: true, limit: 50 })));
  out.push(JSON.stringify(await mem.list({ tenant, scope: 's0', limit: 5, offset: 1 })));
  return out;
}

/** One store: `rounds` rounds of write, observe A, others write and erase, observe A again. */
async function exercise(tally: Tally, label: string, mem: Memory, r: Rng, rounds: number): Promise<{ compared: number; writes: number }> {
  let compared = 0;
  let writes = 0;
  const used = new Set<string>();
  for (let round = 0; round < rounds; round += 1) {
    const vocab = Array.from({ length: 30 }, (_, i) => `w${round}x${i}${r.pick(['', 'a', 'zz'])}`);
    const tenants = tenantNames(r, 5, used);
    const ids = new Map<string, string[]>();
    for (const t of tenants) {
      await mem.registerPrincipal({ tenant: t, id: 'writer', kind: 'user', domain: 'writer' });
      ids.set(t, []);
      for (let i = 0; i < r.int(8, 20); i += 1) {
        ids.get(t)?.push((await mem.write({ tenant: t, scope: `s${r.int(0, 1)}`, principal: 'writer', content: text(r, vocab, r.int(2, 12)) })).record.id);
        writes += 1;
      }
    }
    const a = tenants[0] as string;
    const queries = Array.from({ length: 25 }, () => [`s${r.int(0, 1)}`, Array.from({ length: r.int(1, 5) }, () => r.pick(vocab)).join(' '), r.pick([1, 2, 3, 5, 10, 50])] as const);
    const before = await transcript(mem, a, queries);
    for (let k = 0; k < 3; k += 1) {
      for (const t of tenants.slice(1)) {
        for (let i = 0; i < r.int(5, 25); i += 1) {
          // heavy on A's most frequent words, in both scope names, in both directions of length
          ids.get(t)?.push((await mem.write({ tenant: t, scope: `s${r.int(0, 1)}`, principal: 'writer', content: text(r, vocab, r.int(1, 40)) })).record.id);
          writes += 1;
        }
        const mine = ids.get(t) as string[];
        for (let i = 0; i < r.int(0, 6) && mine.length > 0; i += 1) {
          const [gone] = mine.splice(r.int(0, mine.length - 1), 1);
          await mem.delete({ tenant: t, id: gone as string, principal: 'writer' });
        }
      }
      const after = await transcript(mem, a, queries);
      for (const [i, line] of before.entries()) {
        compared += 1;
        tally.ok(
          after[i] === line,
          () =>
            `${label} round ${round} pass ${k}: ${JSON.stringify(a)}'s ${i < queries.length ? `search ${JSON.stringify(queries[i])}` : 'list page'} changed after other tenants wrote, ${firstDifference(line, after[i] ?? '')}`,
        );
      }
    }
  }
  return { compared, writes };
}

export async function run(o: Options): Promise<SuiteResult> {
  const tally = new Tally('observables: cross-tenant search/list');
  const rounds = o.long ? 8 : 3;
  for (const cache of [true, false]) {
    const dir = tempDir();
    const mem = await openMemory({ path: join(dir, 'memauth.db'), policy: REL_POLICY, checkpointKey: false, cache });
    try {
      const s = await exercise(tally, `sqlite (cache ${cache ? 'on' : 'off'})`, mem, rng(o.seed + (cache ? 1 : 2)), rounds);
      tally.note(`sqlite, read cache ${cache ? 'on' : 'off'}: ${s.compared} responses of tenant A compared byte for byte across ${s.writes} writes (and erasures) of ${rounds * 5} random tenants`);
    } finally {
      await mem.close();
      rmDir(dir);
    }
  }
  const url = process.env.MEMAUTH_TEST_PG_URL;
  if (url === undefined || url === '') {
    tally.note('postgres: not run (set MEMAUTH_TEST_PG_URL, or run through dist/test/support/run.js --run)');
    return tally.result();
  }
  const schema = `rel_obs_${randomBytes(5).toString('hex')}`;
  const dir = tempDir();
  const mem = await openMemory({ driver: await PostgresDriver.connect(url, { schema, poolSize: 4 }), policy: REL_POLICY, checkpointKey: false, checkpointFile: join(dir, 'cp.jsonl') });
  try {
    const s = await exercise(tally, 'postgres', mem, rng(o.seed + 3), Math.max(1, rounds - 1));
    tally.note(`postgres: ${s.compared} responses of tenant A compared across ${s.writes} writes`);
  } finally {
    await mem.close();
    await withPgClient(url, (c) => c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
    rmDir(dir);
  }
  return tally.result();
}
