/**
 * The PostgreSQL driver: the whole conformance suite (test/conformance/) on a real PostgreSQL
 * server, then what only PostgreSQL has — connection errors, migrations under a lock, foreign
 * and future schemas, TRUNCATE, the per-tenant advisory lock, pgvector detection.
 *
 * The server: MEMAUTH_TEST_PG_URL, else a throwaway cluster (test/support/postgres.ts). Without
 * either the suite does not pass silently: it prints one line, and fails under MEMAUTH_REQUIRE_PG=1.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import pg from 'pg';
import { SqliteDriver, isMemauthError, openMemory } from '../src/index.js';
import { copyStore } from '../src/store/copy.js';
import { TokenService } from '../src/server/tokens.js';
import { TABLE_NAMES } from '../src/store/tables.js';
import { MIGRATIONS } from '../src/store/postgres/schema.js';
import { postgresDialect } from '../src/store/sql/dialect.js';
import { auditHasPolicy } from '../src/store/sql/statements.js';
import { PostgresDriver, mapPgError } from '../src/store/postgres/index.js';
import { runConformance } from './conformance/index.js';
import { P, T, TEST_POLICY, expectCode, registerCast, tempDir } from './helpers.js';
import { pgNotRun, testPostgres, withPgClient } from './support/postgres.js';
import { postgresStore } from './support/stores.js';

const server = await testPostgres();

if ('unavailable' in server) {
  pgNotRun('PostgreSQL conformance suite', server.unavailable);
} else {
  after(() => server.stop());
  runConformance(postgresStore(Promise.resolve(server)));
  driverCases(server.url);
}

function driverCases(url: string): void {
  const schemaName = (): string => `t_${randomBytes(6).toString('hex')}`;
  const admin = <X>(fn: (c: pg.Client) => Promise<X>): Promise<X> => withPgClient(url, fn);
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
      assert.deepEqual(
        versions.rows.map((r: { version: number }) => r.version),
        MIGRATIONS.map((_, i) => i + 1),
      );
      const mems = await Promise.all(drivers.map((driver) => openMemory({ driver, checkpointKey: false })));
      await registerCast(mems[0] as (typeof mems)[number]);
      await Promise.all(mems.map((m, i) => m.write({ tenant: T, scope: 'n', principal: P.alice, content: `note from process ${i}` })));
      assert.equal((await (mems[3] as (typeof mems)[number]).list({ tenant: T })).length, 4);
      assert.equal((await (mems[1] as (typeof mems)[number]).verifyAudit({})).ok, true);
    });

    test("a schema holding another application's tables → DATABASE_CORRUPT, and their data is untouched", async (t) => {
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
      assert.equal(d.vectors?.backend, available ? 'pgvector' : 'exact', d.vectorNote);
      if (available) assert.deepEqual(notices, []);
      else {
        assert.equal(notices.length, 1);
        assert.match(notices[0] ?? '', /pgvector is not available/);
        assert.match(notices[0] ?? '', /exact scan/);
      }
    });
  });

  describe('[postgres] what only PostgreSQL has', () => {
    test("every transaction's policy check is an index look-up, not a scan of the audit table (issue 16: 4.5–18.8 ms at ~50k entries)", async (t) => {
      const schema = schemaName();
      t.after(() => dropSchema(schema));
      const mem = await openMemory({ driver: await PostgresDriver.connect(url, { schema }), checkpointKey: false });
      t.after(() => mem.close());
      await registerCast(mem);
      await admin(async (c) => {
        await c.query(`INSERT INTO ${schema}.audit (tenant, seq, prev_hash, op, payload, policy_version, hash) SELECT $1, g, 'x', 'write', '{}', 'v', 'h' FROM generate_series(100000, 150000) g`, [T]);
        await c.query(`ANALYZE ${schema}.audit`);
      });
      const check = auditHasPolicy(postgresDialect, T, 'a version not in the chain');
      const plan = await admin(async (c) => {
        await c.query(`SET search_path = ${schema}`);
        return (await c.query({ text: `EXPLAIN ${check.text}`, values: [...check.values] })).rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
      });
      assert.match(plan, /Index (Only )?Scan/, plan);
      assert.doesNotMatch(plan, /Seq Scan/, plan);
    });

    test('TRUNCATE of records and of every append-only table is refused (IMMUTABLE_FIELD)', async (t) => {
      const schema = schemaName();
      t.after(() => dropSchema(schema));
      const mem = await openMemory({ driver: await PostgresDriver.connect(url, { schema }), checkpointKey: false });
      t.after(() => mem.close());
      await registerCast(mem);
      await mem.write({ tenant: T, scope: 'n', principal: P.alice, content: 'keep me' });
      for (const table of [
        'records',
        'audit',
        'derivations',
        'corroborations',
        'confirmations',
        'confirmation_uses',
        'decisions',
        'policies',
        'principals',
        'checkpoints',
        'session_reads',
        'tokens',
        'review_notes',
      ]) {
        await assert.rejects(
          admin((c) => c.query(`TRUNCATE ${schema}.${table} CASCADE`)),
          (e: unknown) => e instanceof Error && e.message.includes('IMMUTABLE_FIELD'),
          `TRUNCATE ${table}`,
        );
      }
      assert.equal((await mem.list({ tenant: T })).length, 1);
      assert.equal((await mem.verifyAudit({})).ok, true);
    });

    test("a trigger's refusal maps to MemauthError IMMUTABLE_FIELD", async (t) => {
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
      // a second driver, as another process would have: only the advisory lock orders the two
      const other = await PostgresDriver.connect(url, { schema, poolSize: 4 });
      t.after(() => other.close());
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
      const sameTenant = other.transaction('acme', async () => {
        order.push('acme-second ran');
      });
      const otherTenant = other.transaction('globex', async () => {
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

  const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
  const cli = (args: readonly string[], env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } => {
    const e: NodeJS.ProcessEnv = { ...process.env, ...env };
    for (const k of ['MEMAUTH_DB', 'DATABASE_URL', 'MEMAUTH_TENANT', 'MEMAUTH_POLICY', 'MEMAUTH_CHECKPOINT_KEY', 'MEMAUTH_CHECKPOINTS']) if (!(k in env)) delete e[k];
    const r = spawnSync(process.execPath, [CLI, ...args], { env: e, encoding: 'utf8', timeout: 120_000 });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  /** A new empty database on the test server; its URL. */
  const newDatabase = async (): Promise<string> => {
    const name = `memauth_t_${randomBytes(6).toString('hex')}`;
    await admin((c) => c.query(`CREATE DATABASE ${name}`));
    const u = new URL(url);
    u.pathname = `/${name}`;
    return u.toString();
  };
  const dropDatabase = (u: string): Promise<unknown> => admin((c) => c.query(`DROP DATABASE IF EXISTS ${new URL(u).pathname.slice(1)} WITH (FORCE)`));

  describe('[postgres] CLI and migrate', () => {
    test('every CLI command works on --database postgres://… (and DATABASE_URL); an empty database is refused outside init', async (t) => {
      const db = await newDatabase();
      t.after(() => dropDatabase(db));
      const g = ['--database', db, '--tenant', 'acme'];
      const empty = cli([...g, 'list']);
      assert.equal(empty.status, 2, empty.stderr);
      assert.match(empty.stderr, /INVALID_ARGUMENT: .*holds no memauth store; create it with: memauth init/);
      const init = cli(['--database', db, 'init', '--json']);
      assert.equal(init.status, 0, init.stderr);
      const info = JSON.parse(init.stdout) as { kind: string; vector: { available: boolean } };
      assert.equal(info.kind, 'postgres');
      assert.equal(typeof info.vector.available, 'boolean');
      assert.equal(cli([...g, 'principal', 'add', 'alice', '--kind', 'user', '--domain', 'staff']).status, 0);
      assert.equal(cli([...g, 'principal', 'add', 'browser', '--kind', 'tool', '--domain', 'browser']).status, 0);
      const w = cli([...g, 'write', '--scope', 'v', '--principal', 'browser', '--source', 'https://evil.example/p', '--content', 'Acme settles via ACCT-22', '--session', 's1', '--json']);
      assert.equal(w.status, 0, w.stderr);
      const args = '{"to":"ACCT-22","amount":5}';
      const deny = cli([...g, 'authorize', '--action', 'pay', '--args', args, '--session', 's1', '--json']);
      assert.equal(deny.status, 1, 'deny exits 1');
      const d = JSON.parse(deny.stdout) as { id: string; outcome: string };
      assert.equal(d.outcome, 'deny');
      assert.equal(cli([...g, 'confirm', '--principal', 'alice', '--action', 'pay', '--args', args]).status, 0);
      const allow = cli(['--tenant', 'acme', 'authorize', '--action', 'pay', '--args', args, '--session', 's1', '--json'], { DATABASE_URL: db });
      assert.equal(allow.status, 0, allow.stderr);
      assert.equal((JSON.parse(allow.stdout) as { outcome: string }).outcome, 'allow');
      const { hits } = JSON.parse(cli([...g, 'search', 'ACCT-22', '--scope', 'v', '--json']).stdout) as { hits: unknown[] };
      assert.equal(hits.length, 1);
      assert.equal(cli([...g, 'replay', d.id]).status, 0);
      const v = cli(['--database', db, 'audit', 'verify', '--json']);
      assert.equal(v.status, 0, v.stdout);
      assert.equal((JSON.parse(v.stdout) as { ok: boolean }).ok, true);
      // a flag wins over the variable; MEMAUTH_DB wins over DATABASE_URL
      const dir = tempDir();
      t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
      const viaDb = cli(['--db', path.join(dir, 'nope.db'), '--tenant', 'acme', 'list'], { DATABASE_URL: db });
      assert.equal(viaDb.status, 2, 'an explicit --db is used, not DATABASE_URL');
      assert.equal(cli(['--tenant', 'acme', 'list'], { DATABASE_URL: 'mysql://x/y' }).status, 2, 'an unsupported URL is a usage error');
    });

    test('migrate sqlite → postgres → sqlite copies every row; chains verify at each end with the same hashes; decisions replay', async (t) => {
      const dir = tempDir();
      t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
      const pgDb = await newDatabase();
      t.after(() => dropDatabase(pgDb));
      // a store with every kind of row, in two tenants
      const srcFile = path.join(dir, 'source.db');
      const mem = await openMemory({ path: srcFile, policy: TEST_POLICY });
      const decisions: Array<{ tenant: string; decisionId: string }> = [];
      for (const tenant of [T, 'globex']) {
        await registerCast(mem, tenant);
        const page = (await mem.write({ tenant, scope: 'vendors', principal: P.browser, content: `Vendor ${tenant} remits to ACCT-77`, source: 'https://vendor.example/remit', session: 's1' })).record;
        const rule = (await mem.write({ tenant, scope: 'vendors', principal: P.alice, content: 'Only pay approved vendors', expiresAt: '2999-01-01T00:00:00.000Z' })).record;
        await mem.derive({ tenant, principal: P.agent, from: [page.id, rule.id], content: 'Vendor remits to ACCT-77', transform: 'merge', session: 's1' });
        const gone = (await mem.write({ tenant, scope: 'vendors', principal: P.alice, content: 'Quagga secret to erase' })).record;
        await mem.delete({ tenant, id: gone.id });
        await mem.corroborate({ tenant, recordId: page.id, principal: P.bank, evidence: 'bankapi:acct/77' });
        await mem.corroborate({ tenant, recordId: page.id, principal: P.registry, evidence: 'registry:vendor/77' });
        const conf = await mem.confirm({ tenant, principal: P.alice, action: { type: 'pay', args: { to: 'ACCT-77', amount: 5 } } });
        decisions.push({ tenant, decisionId: (await mem.authorize({ tenant, action: { type: 'pay', args: { to: 'ACCT-77', amount: 5 } }, session: 's1', confirmationId: conf.id })).id });
        decisions.push({ tenant, decisionId: (await mem.authorize({ tenant, action: { type: 'send_email', args: { to: 'x@evil.example' } }, session: 's1' })).id });
        await expectCode(() => mem.write({ tenant, scope: 'v', principal: P.browser, content: 'x', authority: 'system_policy' }), 'AUTHORITY_EXCEEDS_PRINCIPAL');
      }
      const searched = new Map<string, unknown>();
      for (const tenant of [T, 'globex'])
        for (const query of ['ACCT-77 vendors', 'remits approved', 'Quagga']) searched.set(`${tenant} ${query}`, await mem.search({ tenant, scope: 'vendors', query }));
      assert.equal((searched.get(`${T} ACCT-77 vendors`) as unknown[]).length, 3);
      // bearer tokens of the HTTP API: an admin token, a principal token, and a revoked one
      const tokens = new TokenService(mem.driver);
      await tokens.issue('admin');
      await tokens.issue({ tenant: T, principal: P.agent });
      await tokens.revoke((await tokens.issue({ tenant: T, principal: P.alice })).info.id);
      await mem.driver.insertReviewNote({
        id: 'rev_1',
        tenant: T,
        decisionId: (decisions[1] as { decisionId: string }).decisionId,
        verdict: 'rejected',
        by: P.alice,
        note: 'not ours',
        at: new Date().toISOString(),
      });
      await mem.close();
      // reads kept by a store older than the session log (session_reads, no longer written): copied too
      const legacy = new Database(srcFile);
      try {
        const at = '2025-01-01T00:00:00.000Z';
        legacy.prepare('INSERT INTO sessions (tenant, id, created_at, owner) VALUES (?, ?, ?, NULL)').run(T, 'legacy', at);
        legacy.prepare("INSERT INTO session_reads (tenant, session_id, record_id, first_read_at) SELECT tenant, 'legacy', id, ? FROM records WHERE tenant = ? LIMIT 1").run(at, T);
      } finally {
        legacy.close();
      }

      const toPg = cli(['migrate', '--from', `sqlite:${srcFile}`, '--to', pgDb, '--json']);
      assert.equal(toPg.status, 0, toPg.stdout + toPg.stderr);
      const r1 = JSON.parse(toPg.stdout) as { ok: boolean; counts: Record<string, number>; heads: Array<{ hash: string; destinationHash: string }>; audit: { ok: boolean } };
      assert.equal(r1.ok, true);
      assert.equal(r1.audit.ok, true);
      // two tenants and the admin tokens' chain `(admin)`
      assert.equal(r1.heads.length, 3);
      for (const h of r1.heads) assert.equal(h.destinationHash, h.hash);
      for (const tname of TABLE_NAMES) assert.ok((r1.counts[tname] ?? 0) > 0, `${tname} has rows to copy`);

      // the copy is a working store: search, replay, erased content stays erased
      const pgMem = await openMemory({ driver: await PostgresDriver.connect(pgDb, { create: false }), checkpointKey: false });
      try {
        assert.equal((await pgMem.search({ tenant: T, scope: 'vendors', query: 'ACCT-77' })).length, 2);
        assert.deepEqual(await pgMem.search({ tenant: T, scope: 'vendors', query: 'Quagga' }), []);
        for (const d of decisions) assert.equal((await pgMem.replay(d)).matches, true);
        assert.equal((await pgMem.verifyAudit({})).ok, true);
      } finally {
        await pgMem.close();
      }

      const backFile = path.join(dir, 'back.db');
      const back = cli(['migrate', '--from', pgDb, '--to', `sqlite:${backFile}`]);
      assert.equal(back.status, 0, back.stdout + back.stderr);
      assert.match(back.stdout, /ok: every row copied, same hashes at both ends/);
      // the round trip is row-for-row identical to the original
      const a = SqliteDriver.open({ path: srcFile });
      const b = SqliteDriver.open({ path: path.join(dir, 'again.db') });
      try {
        const report = await copyStore(a, b);
        assert.equal(report.ok, true);
        const c = SqliteDriver.open({ path: backFile });
        try {
          const orig = new Map<string, string>();
          await a.exportRows(async (tb, rows) => void orig.set(tb, (orig.get(tb) ?? '') + JSON.stringify(rows)));
          const round = new Map<string, string>();
          await c.exportRows(async (tb, rows) => void round.set(tb, (round.get(tb) ?? '') + JSON.stringify(rows)));
          for (const tb of TABLE_NAMES) assert.equal(round.get(tb), orig.get(tb), `table ${tb} after sqlite → postgres → sqlite`);
        } finally {
          await c.close();
        }
      } finally {
        await a.close();
        await b.close();
      }
      const again = await openMemory({ path: backFile, checkpointKey: false });
      try {
        assert.equal((await again.verifyAudit({})).ok, true);
        for (const d of decisions) assert.equal((await again.replay(d)).matches, true);
        assert.deepEqual(await again.search({ tenant: T, scope: 'vendors', query: 'Quagga' }), []);
        // each tenant's search index is rebuilt on import: the same hits with the same scores as the source
        for (const tenant of [T, 'globex']) {
          for (const query of ['ACCT-77 vendors', 'remits approved', 'Quagga']) {
            assert.deepEqual(await again.search({ tenant, scope: 'vendors', query }), searched.get(`${tenant} ${query}`), `${tenant} "${query}" after sqlite → postgres → sqlite`);
          }
        }
      } finally {
        await again.close();
      }
      // into a non-empty destination: refused, nothing changed
      const twice = cli(['migrate', '--from', `sqlite:${srcFile}`, '--to', pgDb]);
      assert.equal(twice.status, 2);
      assert.match(twice.stderr, /already holds \d+ rows/);
    });
  });
}
