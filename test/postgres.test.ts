/**
 * The PostgreSQL driver: the whole conformance suite (test/conformance/) on a real PostgreSQL
 * server, then what only PostgreSQL has — connection errors, migrations under a lock, foreign
 * and future schemas, TRUNCATE, the per-tenant advisory lock, pgvector detection.
 *
 * The server: MEMAUTH_TEST_PG_URL, else a throwaway cluster (test/support/postgres.ts). Without
 * either the suite does not pass silently: it prints one line, and fails under MEMAUTH_REQUIRE_PG=1.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, describe, test } from 'node:test';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { isMemauthError, openMemory } from '../src/index.js';
import { MIGRATIONS } from '../src/store/postgres/schema.js';
import { PostgresDriver, mapPgError } from '../src/store/postgres/index.js';
import { runConformance } from './conformance/index.js';
import { P, T, expectCode, registerCast } from './helpers.js';
import { NOT_RUN, pgRequired, testPostgres } from './support/postgres.js';
import { postgresStore } from './support/stores.js';

const server = await testPostgres();

if ('unavailable' in server) {
  process.stdout.write(`${NOT_RUN} (${server.unavailable})\n`);
  test('PostgreSQL conformance suite', (t) => {
    if (pgRequired()) assert.fail(`${NOT_RUN}: ${server.unavailable} (MEMAUTH_REQUIRE_PG=1)`);
    t.skip(NOT_RUN);
  });
} else {
  after(() => server.stop());
  runConformance(postgresStore(Promise.resolve(server)));
  driverCases(server.url);
}

function driverCases(url: string): void {
  const schemaName = (): string => `t_${randomBytes(6).toString('hex')}`;
  const admin = async <X>(fn: (c: pg.Client) => Promise<X>): Promise<X> => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };
  const dropSchema = (s: string): Promise<unknown> => admin((c) => c.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`));

  describe('[postgres] connecting and migrating', () => {
    test('connection refused → DATABASE_UNAVAILABLE naming host and port', async () => {
      const port = await new Promise<number>((resolve) => {
        const s = net.createServer().listen(0, '127.0.0.1', () => {
          const a = s.address();
          s.close(() => resolve(typeof a === 'object' && a !== null ? a.port : 1));
        });
      });
      const e = await expectCode(() => PostgresDriver.connect(`postgres://memauth:secret-pw@127.0.0.1:${port}/memauth`), 'DATABASE_UNAVAILABLE');
      assert.match(e.message, new RegExp(`127\\.0\\.0\\.1:${port}`));
      assert.ok(!e.message.includes('secret-pw'), 'the password is never in a message');
    });

    test('a database that does not exist → DATABASE_UNAVAILABLE saying so', async () => {
      const u = new URL(url);
      u.pathname = '/memauth_no_such_database';
      const e = await expectCode(() => PostgresDriver.connect(u.toString()), 'DATABASE_UNAVAILABLE');
      assert.match(e.message, /does not exist/);
    });

    test('not a PostgreSQL URL, or a bad schema name → INVALID_ARGUMENT', async () => {
      await expectCode(() => PostgresDriver.connect('mysql://localhost/x'), 'INVALID_ARGUMENT');
      await expectCode(() => PostgresDriver.connect(url, { schema: 'x; DROP TABLE y' }), 'INVALID_ARGUMENT');
    });

    test('four processes migrating one new schema at once: one schema, one version row, all usable', async (t) => {
      const schema = schemaName();
      t.after(() => dropSchema(schema));
      const drivers = await Promise.all([0, 1, 2, 3].map(() => PostgresDriver.connect(url, { schema, poolSize: 2 })));
      t.after(() => Promise.all(drivers.map((d) => d.close())));
      const versions = await admin((c) => c.query(`SELECT version FROM ${schema}.memauth_schema ORDER BY version`));
      assert.deepEqual(versions.rows.map((r: { version: number }) => r.version), MIGRATIONS.map((_, i) => i + 1));
      const mems = await Promise.all(drivers.map((driver) => openMemory({ driver, checkpointKey: false })));
      await registerCast(mems[0] as (typeof mems)[number]);
      await Promise.all(mems.map((m, i) => m.write({ tenant: T, scope: 'n', principal: P.alice, content: `note from process ${i}` })));
      assert.equal((await (mems[3] as (typeof mems)[number]).list({ tenant: T })).length, 4);
      assert.equal((await (mems[1] as (typeof mems)[number]).verifyAudit({})).ok, true);
    });

    test('a schema holding another application\'s tables → DATABASE_CORRUPT, and their data is untouched', async (t) => {
      const schema = schemaName();
      t.after(() => dropSchema(schema));
      await admin(async (c) => {
        await c.query(`CREATE SCHEMA ${schema}`);
        await c.query(`CREATE TABLE ${schema}.records (id serial PRIMARY KEY, title text)`);
        await c.query(`INSERT INTO ${schema}.records (title) VALUES ('someone else''s data')`);
      });
      await expectCode(() => PostgresDriver.connect(url, { schema }), 'DATABASE_CORRUPT');
      const rows = await admin((c) => c.query(`SELECT title FROM ${schema}.records`));
      assert.deepEqual(rows.rows, [{ title: "someone else's data" }]);
    });

    test('a schema written by a newer memauth → DATABASE_CORRUPT', async (t) => {
      const schema = schemaName();
      t.after(() => dropSchema(schema));
      const d = await PostgresDriver.connect(url, { schema });
      await d.close();
      await admin((c) => c.query(`INSERT INTO ${schema}.memauth_schema (version, applied_at, by) VALUES (99, 'now', 'future')`));
      const e = await expectCode(() => PostgresDriver.connect(url, { schema }), 'DATABASE_CORRUPT');
      assert.match(e.message, /newer/);
    });

    test('pgvector is detected and reported; memauth works without it', async (t) => {
      const schema = schemaName();
      t.after(() => dropSchema(schema));
      const notices: string[] = [];
      const d = await PostgresDriver.connect(url, { schema, onNotice: (m) => notices.push(m) });
      t.after(() => d.close());
      const available = (await admin((c) => c.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"))).rowCount === 1;
      assert.equal(d.capabilities.vector.available, available);
      assert.equal(d.capabilities.fullTextSearch, 'tsvector');
      assert.match(d.capabilities.serverVersion, /^\d+/);
      if (!available) {
        assert.equal(notices.length, 1);
        assert.match(notices[0] ?? '', /pgvector .* not available/);
        assert.match(notices[0] ?? '', /does not use vector similarity yet/);
      }
    });
  });

  describe('[postgres] what only PostgreSQL has', () => {
    test('TRUNCATE of records and of every append-only table is refused (IMMUTABLE_FIELD)', async (t) => {
      const schema = schemaName();
      t.after(() => dropSchema(schema));
      const mem = await openMemory({ driver: await PostgresDriver.connect(url, { schema }), checkpointKey: false });
      t.after(() => mem.close());
      await registerCast(mem);
      await mem.write({ tenant: T, scope: 'n', principal: P.alice, content: 'keep me' });
      for (const table of ['records', 'audit', 'derivations', 'corroborations', 'confirmations', 'confirmation_uses', 'decisions', 'policies', 'principals', 'checkpoints', 'session_reads']) {
        await assert.rejects(
          admin((c) => c.query(`TRUNCATE ${schema}.${table} CASCADE`)),
          (e: unknown) => e instanceof Error && e.message.includes('IMMUTABLE_FIELD'),
          `TRUNCATE ${table}`,
        );
      }
      assert.equal((await mem.list({ tenant: T })).length, 1);
      assert.equal((await mem.verifyAudit({})).ok, true);
    });

    test('a trigger\'s refusal maps to MemauthError IMMUTABLE_FIELD', async (t) => {
      const schema = schemaName();
      t.after(() => dropSchema(schema));
      const d = await PostgresDriver.connect(url, { schema });
      t.after(() => d.close());
      const mem = await openMemory({ driver: d, checkpointKey: false });
      await registerCast(mem);
      await mem.write({ tenant: T, scope: 'n', principal: P.alice, content: 'x' });
      const client = await d.unsafeClient();
      try {
        const err = await client.query("UPDATE audit SET op = 'write'").then(
          () => null,
          (e: unknown) => e,
        );
        const mapped = mapPgError(err, d.target);
        assert.ok(isMemauthError(mapped, 'IMMUTABLE_FIELD'), String(mapped));
        assert.match((mapped as Error).message, /audit entries are append-only/);
      } finally {
        client.release();
      }
    });

    test('the tenant lock: another tenant does not wait for a long transaction; the same tenant does', async (t) => {
      const schema = schemaName();
      t.after(() => dropSchema(schema));
      const d = await PostgresDriver.connect(url, { schema, poolSize: 4 });
      t.after(() => d.close());
      const order: string[] = [];
      let release: () => void = () => undefined;
      const held = new Promise<void>((r) => (release = r));
      let entered: () => void = () => undefined;
      const inside = new Promise<void>((r) => (entered = r));
      const long = d.transaction('acme', async () => {
        entered();
        await held;
        order.push('acme-long done');
      });
      await inside;
      const sameTenant = d.transaction('acme', async () => {
        order.push('acme-second ran');
      });
      const otherTenant = d.transaction('globex', async () => {
        order.push('globex ran');
      });
      await otherTenant;
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(order, ['globex ran'], 'globex ran while acme was held; the second acme transaction waits');
      release();
      await Promise.all([long, sameTenant]);
      assert.deepEqual(order, ['globex ran', 'acme-long done', 'acme-second ran']);
    });
  });
}
