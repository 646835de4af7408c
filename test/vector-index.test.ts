/**
 * The vector index primitives on both stores, with one set of cases: SQLite (sqlite-vec's vec0 on
 * a real file with the store's pragmas: WAL, secure_delete) and PostgreSQL (pgvector, built from
 * third_party/pgvector by .ci/run, and the exact scan without it) on the test cluster. Under
 * MEMAUTH_REQUIRE_PG=1 a missing server or a missing pgvector fails instead of skipping.
 *
 * Cases: tenant isolation; the scope filter applies before ranking (a scope's nearest is found
 * when other scopes hold nearer vectors); ties ordered by record id; replace on re-embed;
 * erasure (no vector of a deleted record is left: for SQLite not even its bytes in the file);
 * bad input refused with INVALID_ARGUMENT; on SQLite, storing vectors leaves the read cache's change token as it was.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import { isMemauthError } from '../src/core/errors.js';
import { PgVectorIndex, type VectorMode } from '../src/store/postgres/vector-index.js';
import { SqliteVectorIndex } from '../src/store/sqlite/vector-index.js';
import { SqliteDriver } from '../src/store/sqlite/driver.js';
import type { VectorHit, VectorItem, VectorStore } from '../src/store/vector.js';
import { Memory } from '../src/api/memory.js';
import { DEFAULT_POLICY, loadPolicy } from '../src/core/policy.js';
import { testEmbedder } from '../src/embed/test-embedder.js';
import { pgNotRun, pgRequired, testPostgres } from './support/postgres.js';
import { rmDir, tempDir } from './helpers.js';

/** The operations the shared cases use, over either store. */
interface Index {
  upsert(tenant: string, embedder: string, dims: number, items: VectorItem[]): Promise<void>;
  knn(tenant: string, embedder: string, scope: string, q: Float32Array, k: number): Promise<VectorHit[]>;
  deleteRecord(tenant: string, recordId: string): Promise<number>;
  count(tenant: string, embedder: string): Promise<number>;
}

const E = 'test:unit:3';
const v = (...xs: number[]): Float32Array => new Float32Array(xs);
const item = (recordId: string, scope: string, vector: Float32Array, contentHash = `h-${recordId}`): VectorItem => ({ recordId, scope, contentHash, vector });
const ids = (hits: VectorHit[]): string[] => hits.map((h) => h.recordId);
const invalid = (e: unknown): boolean => isMemauthError(e, 'INVALID_ARGUMENT');

function cases(name: string, make: () => Promise<Index>): void {
  describe(name, () => {
    it('answers a tenant only from its own vectors', async () => {
      const ix = await make();
      await ix.upsert('t1', E, 3, [item('r1', 's', v(1, 0, 0))]);
      await ix.upsert('t2', E, 3, [item('r2', 's', v(1, 0, 0)), item('r3', 's', v(0.9, 0.1, 0))]);
      assert.deepEqual(ids(await ix.knn('t1', E, 's', v(1, 0, 0), 10)), ['r1']);
      assert.deepEqual(ids(await ix.knn('t3', E, 's', v(1, 0, 0), 10)), []);
      assert.equal(await ix.count('t2', E), 2);
    });
    it('filters by scope before ranking: k=1 finds the scope nearest even when other scopes are nearer', async () => {
      const ix = await make();
      const near = Array.from({ length: 20 }, (_, i) => item(`other${i}`, 'other', v(1, 0.001 * i, 0)));
      await ix.upsert('t', E, 3, [...near, item('mine', 'mine', v(0, 1, 0)), item('mine2', 'mine', v(0, 0, 1))]);
      const hits = await ix.knn('t', E, 'mine', v(1, 0.2, 0), 1);
      assert.deepEqual(ids(hits), ['mine']);
      assert.ok(Math.abs((hits[0] as VectorHit).score - 0.2 / Math.sqrt(1.04)) < 1e-4, 'cosine similarity');
    });
    it('orders ties by record id, and scores are cosine (scale-free)', async () => {
      const ix = await make();
      await ix.upsert('t', E, 3, [item('b', 's', v(2, 0, 0)), item('c', 's', v(0, 3, 0)), item('a', 's', v(5, 0, 0))]);
      const hits = await ix.knn('t', E, 's', v(1, 0, 0), 3);
      assert.deepEqual(ids(hits), ['a', 'b', 'c']);
      assert.ok(Math.abs((hits[0] as VectorHit).score - 1) < 1e-5 && Math.abs((hits[2] as VectorHit).score) < 1e-5);
    });
    it('replaces a record vector on re-embedding (new content hash)', async () => {
      const ix = await make();
      await ix.upsert('t', E, 3, [item('r', 's', v(1, 0, 0), 'h1')]);
      await ix.upsert('t', E, 3, [item('r', 's', v(0, 1, 0), 'h2')]);
      const hits = await ix.knn('t', E, 's', v(0, 1, 0), 5);
      assert.deepEqual(
        hits.map((h) => [h.recordId, h.contentHash]),
        [['r', 'h2']],
      );
      assert.equal(await ix.count('t', E), 1);
    });
    it('erases every vector of a deleted record, under every embedder, and only in its tenant', async () => {
      const ix = await make();
      await ix.upsert('t', E, 3, [item('gone', 's', v(1, 0, 0)), item('kept', 's', v(0, 1, 0))]);
      await ix.upsert('t', 'test:other:2', 2, [item('gone', 's', v(1, 0))]);
      await ix.upsert('u', E, 3, [item('gone', 's', v(1, 0, 0))]);
      assert.equal(await ix.deleteRecord('t', 'gone'), 2);
      assert.deepEqual(ids(await ix.knn('t', E, 's', v(1, 0, 0), 10)), ['kept']);
      assert.deepEqual(ids(await ix.knn('t', 'test:other:2', 's', v(1, 0), 10)), []);
      assert.deepEqual(ids(await ix.knn('u', E, 's', v(1, 0, 0), 10)), ['gone']);
      assert.equal(await ix.deleteRecord('t', 'gone'), 0);
    });
    it('refuses a wrong length, a NaN, a bad k and a second dimension for one embedder (INVALID_ARGUMENT)', async () => {
      const ix = await make();
      await ix.upsert('t', E, 3, [item('r', 's', v(1, 0, 0))]);
      await assert.rejects(ix.upsert('t', E, 3, [item('x', 's', v(1, 0))]), invalid);
      await assert.rejects(ix.upsert('t', E, 3, [item('x', 's', v(1, NaN, 0))]), invalid);
      await assert.rejects(ix.upsert('t', E, 4, [item('x', 's', v(1, 0, 0, 0))]), invalid);
      await assert.rejects(ix.knn('t', E, 's', v(1, 0), 1), invalid);
      await assert.rejects(ix.knn('t', E, 's', v(1, 0, 0), 0), invalid);
      await assert.rejects(ix.knn('t', E, 's', v(1, 0, 0), 5000), invalid);
      assert.deepEqual(ids(await ix.knn('t', E, 's', v(1, 0, 0), 5)), ['r']);
    });
  });
}

// ---- SQLite: a real file with the store's pragmas ----
const dir = tempDir();
after(() => rmDir(dir));
let files = 0;
const dbs: Database.Database[] = [];
function sqliteDb(): { db: Database.Database; path: string } {
  const path = join(dir, `v${files++}.db`);
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('secure_delete = ON');
  dbs.push(db);
  return { db, path };
}
after(() => dbs.forEach((d) => d.close()));
const wrap = (ix: SqliteVectorIndex): Index => ({
  upsert: async (...a) => ix.upsert(...a),
  knn: async (...a) => ix.knn(...a),
  deleteRecord: async (...a) => ix.deleteRecord(...a),
  count: async (...a) => ix.count(...a),
});
cases('SQLite (sqlite-vec)', async () => wrap(SqliteVectorIndex.open(sqliteDb().db)));

describe('SQLite erasure on disk', () => {
  it('leaves no byte of a deleted vector in the database file or its WAL', () => {
    const { db, path } = sqliteDb();
    const ix = SqliteVectorIndex.open(db);
    const secret = v(0.1234567, 0.7654321, 0.3141592);
    const needle = Buffer.from(new Float32Array(Array.from(secret).map((x) => x / Math.hypot(...secret))).buffer);
    ix.upsert('t', E, 3, [item('secret', 's', secret), item('other', 's', v(1, 1, 1))]);
    db.pragma('wal_checkpoint(TRUNCATE)');
    const onDisk = (): boolean => readdirSync(dir).some((f) => f.startsWith(path.split('/').pop() as string) && readFileSync(join(dir, f)).includes(needle));
    assert.ok(onDisk(), 'self-check: the vector is found on disk before the delete');
    ix.deleteRecord('t', 'secret');
    db.pragma('wal_checkpoint(TRUNCATE)');
    assert.equal(onDisk(), false);
    assert.deepEqual(
      ix.missing('t', E, [
        { recordId: 'secret', contentHash: 'h-secret' },
        { recordId: 'other', contentHash: 'h-other' },
      ]),
      [{ recordId: 'secret', contentHash: 'h-secret' }],
    );
  });
});

describe('SQLite vector writes and the read cache', () => {
  it('storing vectors leaves the change token of the read cache as it was; a record write moves it', async () => {
    const d = SqliteDriver.open({ path: join(dir, `v${files++}.db`) });
    const embedder = testEmbedder(8);
    const mem = new Memory({ driver: d, policy: loadPolicy(DEFAULT_POLICY), checkpointKey: null, embedder });
    try {
      await mem.registerPrincipal({ tenant: 't', id: 'u', kind: 'user', domain: 'example.test' });
      const w = await mem.write({ tenant: 't', scope: 's', principal: 'u', content: 'the blue automobile' });
      assert.equal(w.embedding?.status, 'stored');
      const token = (): Promise<string> => d.transaction('t', async () => d.changeToken());
      const before = await token();
      const vectors = d.vectors as VectorStore;
      const stored = await vectors.put('t', embedder.id, 8, [{ recordId: w.record.id, scope: 's', contentHash: w.record.contentHash, vector: (await embedder.embed(['again']))[0] as Float32Array }]);
      assert.equal(stored, 1, 'self-check: the vector was written again');
      assert.equal(await token(), before, 'a vector write does not empty the cache');
      await mem.write({ tenant: 't', scope: 's', principal: 'u', content: 'a second record' });
      assert.notEqual(await token(), before, 'self-check: a record write moves the token');
    } finally {
      await mem.close();
    }
  });
});

// ---- PostgreSQL: the test cluster ----
const server = await testPostgres();
if ('unavailable' in server) {
  pgNotRun('PostgreSQL vector index', server.unavailable);
} else {
  const pool = new pg.Pool({ connectionString: server.url, max: 2 });
  const schemas: string[] = [];
  after(async () => {
    for (const s of schemas) await pool.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
    await pool.end();
    server.stop();
  });
  /** A client in a fresh schema (pgvector, when created here, lands in it). */
  async function fresh(mode: 'auto' | VectorMode): Promise<PgVectorIndex> {
    const s = `vec_${randomBytes(6).toString('hex')}`;
    schemas.push(s);
    const c = await pool.connect();
    await c.query(`CREATE SCHEMA ${s}`);
    await c.query(`SET search_path TO ${s}, public`);
    after(() => c.release());
    return PgVectorIndex.open(c, { mode });
  }
  it('pgvector is available on the test server (built from third_party/pgvector by .ci/run)', async (t) => {
    const r = await pool.query(`SELECT 1 FROM pg_available_extensions WHERE name = 'vector'`);
    if (r.rows.length === 0 && !pgRequired()) return t.skip('pgvector is not installed on this server (CI requires it)');
    assert.equal(r.rows.length, 1, 'pgvector missing: run .ci/run (it builds third_party/pgvector)');
    assert.equal((await fresh('auto')).mode, 'pgvector');
  });
  const hasPgvector = (await pool.query(`SELECT 1 FROM pg_available_extensions WHERE name = 'vector'`)).rows.length === 1;
  if (hasPgvector || pgRequired()) cases('PostgreSQL (pgvector)', async () => fresh('pgvector'));
  cases('PostgreSQL (exact scan, no pgvector)', async () => {
    const ix = await fresh('exact');
    assert.equal(ix.mode, 'exact');
    return ix;
  });
}
