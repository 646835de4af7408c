/**
 * How a PostgreSQL group-commit batch sends its statements (src/store/postgres/batch-exec.ts), on
 * a real server: values inlined as literals come back exactly as bound parameters do (quotes,
 * backslashes, placeholders and SQL in the text included) and NUL is never inlined; only the plain
 * appends are deferred; a call that throws after deferred appends leaves nothing; a deferred
 * append that fails rejects its whole batch and stores none of it; reads kept by a batch are
 * forgotten once a call erases a record, and once a call that erased one fails.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { nextEntry } from '../src/core/audit.js';
import { openMemory } from '../src/api/open.js';
import type { Memory } from '../src/api/memory.js';
import { isMemauthError } from '../src/core/errors.js';
import type { Decision } from '../src/core/types.js';
import pg from 'pg';
import { deferrable, escapeLiteral, renderStmt, sqlLiteral } from '../src/store/postgres/batch-exec.js';
import { PostgresDriver } from '../src/store/postgres/driver.js';
import { postgresDialect } from '../src/store/sql/dialect.js';
import * as S from '../src/store/sql/statements.js';
import { pgNotRun, testPostgres, withPgClient } from './support/postgres.js';

const server = await testPostgres();
let schemas = 0;

async function open(url: string): Promise<{ mem: Memory; driver: PostgresDriver }> {
  const driver = await PostgresDriver.connect(url, { schema: `bx_${process.pid}_${schemas++}` });
  const mem = await openMemory({ driver });
  await mem.registerPrincipal({ tenant: 't', id: 'agent', kind: 'agent', domain: 'agent-runtime' });
  return { mem, driver };
}

const write = (mem: Memory, k: number | string) => mem.write({ tenant: 't', scope: 'notes', principal: 'agent', content: `note ${k}` });
const settle = <T>(ps: Array<Promise<T>>) => Promise.allSettled(ps);
/** A transaction that holds the tenant's lane for 300 ms, so that the calls queued after it share one batch. */
const hold = (driver: PostgresDriver) => driver.transaction('t', () => new Promise((r) => setTimeout(r, 300)));

const NASTY = ["it's", "'); DROP TABLE audit; --", "back\\slash \\' E'x'", '$1 $2 ?', 'ünïcødé 🙂 \n\t line', "''", '\\', '$$ dollar $$', ''];

describe('batch statements: literals and what is deferred', () => {
  test('only plain appends to audit, records, derivations and decisions are deferrable', () => {
    const d = postgresDialect;
    assert.ok(deferrable({ text: d.sql('INSERT INTO audit (tenant, seq) VALUES (?, ?)'), values: ['t', 1] }));
    assert.ok(deferrable({ text: d.sql('INSERT INTO derivations (record_id, ord) VALUES (?, ?), (?, ?)'), values: ['a', 0, 'a', 1] }));
    for (const text of [
      'INSERT INTO principals (tenant, id) VALUES (?, ?)',
      'INSERT INTO audit (tenant, seq) VALUES (?, ?) ON CONFLICT DO NOTHING',
      'INSERT INTO audit (tenant, seq) SELECT ?, ?',
      "UPDATE records SET status = 'deleted' WHERE id = ?",
      'INSERT INTO audit (tenant, seq) VALUES (?, ?) RETURNING seq',
    ])
      assert.equal(deferrable({ text: d.sql(text), values: [] }), false, text);
    assert.ok(deferrable(S.insertDecision(d, { id: 'd', tenant: 't', sessionId: null, at: 'x', outcome: 'allow', action: { type: 'pay', args: {} }, auditSeq: 1 } as unknown as Decision)));
  });

  test('values that are not plain, and strings holding NUL, are not inlined', () => {
    assert.equal(sqlLiteral('a\u0000b'), null);
    assert.equal(sqlLiteral(Number.NaN), null);
    assert.equal(sqlLiteral(Number.POSITIVE_INFINITY), null);
    assert.equal(sqlLiteral({ a: 1 }), null);
    assert.equal(sqlLiteral([{ a: 1 }]), null);
    assert.equal(sqlLiteral(['a', 'b\u0000']), null);
    assert.equal(sqlLiteral([1, Number.NaN]), null);
    assert.equal(sqlLiteral(['a', 'b, c']), `'{"a","b, c"}'`);
    assert.equal(sqlLiteral(['b"c']), String.raw` E'{"b\\"c"}'`, 'the quote escaped with a backslash, which makes it an E string');
    assert.equal(sqlLiteral([4, 5]), "'{4,5}'");
    assert.equal(renderStmt({ text: 'INSERT INTO audit (tenant) VALUES ($1)', values: ['a\u0000'] }), null);
    assert.equal(renderStmt({ text: 'INSERT INTO audit (tenant, seq) VALUES ($1, $2)', values: ['a'] }), null, 'a missing value');
    assert.equal(sqlLiteral(null), 'NULL');
  });

  test("strings are quoted exactly as pg's escapeLiteral quotes them", () => {
    const parts = ["'", '\\', 'E', '"', '$1', ' ', 'ü', '🙂', '\n', '\ud800', 'x'];
    let seed = 7;
    const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648);
    const samples = [...NASTY];
    for (let i = 0; i < 2000; i++) samples.push(Array.from({ length: next() % 12 }, () => parts[next() % parts.length]).join(''));
    for (const s of samples) assert.equal(escapeLiteral(s), pg.escapeLiteral(s), JSON.stringify(s));
  });
});

if ('unavailable' in server) {
  pgNotRun('PostgreSQL batch statements', server.unavailable);
} else {
  after(() => server.stop());
  describe('[postgres] batch statements', () => {
    test('an inlined literal reads back exactly as the value (quotes, backslashes, placeholders, SQL)', async () => {
      const values: unknown[] = [...NASTY, 42, -1.5, 9007199254740993n, true, null];
      const text = `SELECT ${values.map((_, i) => `$${i + 1}::text AS v${i}`).join(', ')}`;
      const sql = renderStmt({ text, values });
      assert.ok(sql !== null);
      const [row] = (await withPgClient(server.url, (c) => c.query(sql))).rows as Array<Record<string, string | null>>;
      const want = values.map((v) => (v === null ? null : typeof v === 'number' || typeof v === 'bigint' ? String(v) : v === true ? 'true' : v));
      assert.deepEqual(
        values.map((_, i) => row?.[`v${i}`]),
        want,
      );
    });

    test('an inlined array literal reads back exactly as the bound array (quotes, backslashes, braces, commas)', async () => {
      const arrays: string[][] = [NASTY, ['{', '}', ',', '"', 'NULL', 'null', ' a ', ''], []];
      for (const arr of arrays) {
        const lit = sqlLiteral(arr);
        assert.ok(lit !== null);
        const res: pg.QueryResult = await withPgClient(server.url, (c) => c.query({ text: `SELECT $1::text[] AS bound, ${lit}::text[] AS inlined`, values: [arr] }));
        const row = res.rows[0] as { bound: string[]; inlined: string[] };
        assert.deepEqual(row.inlined, row.bound, JSON.stringify(arr));
        assert.deepEqual(row.inlined, arr);
      }
    });

    test('records written in one batch with awkward contents read back unchanged; the chain verifies', async () => {
      const { mem, driver } = await open(server.url);
      try {
        const h = hold(driver);
        const all = await settle(NASTY.filter((s) => s !== '').map((s) => mem.write({ tenant: 't', scope: 'notes', principal: 'agent', content: s })));
        await h;
        const got = all.map((r) => (r.status === 'fulfilled' ? r.value.record.id : String(r.reason)));
        const recs = await mem.driver.getRecords('t', got);
        assert.deepEqual(recs.map((r) => r.content).sort(), NASTY.filter((s) => s !== '').sort());
        assert.equal((await mem.verifyAudit({ tenant: 't' })).ok, true);
      } finally {
        await mem.close();
      }
    });

    test('a call that throws after appending (nothing sent yet) leaves nothing; the others of its batch commit', async () => {
      const { mem, driver } = await open(server.url);
      try {
        const h = hold(driver);
        const before = Array.from({ length: 5 }, (_, k) => write(mem, k));
        const threw = driver.transaction('t', async (tx) => {
          const head = await tx.auditHead('t');
          await tx.appendAudit(nextEntry('t', head, 'write', { at: new Date().toISOString(), deliberate: true }, mem.policy.version));
          throw new Error('deliberate');
        });
        const afterwards = Array.from({ length: 5 }, (_, k) => write(mem, 10 + k));
        const [t] = await settle<unknown>([threw]);
        await h;
        assert.match(String((t as PromiseRejectedResult).reason), /deliberate/);
        const ok = await settle([...before, ...afterwards]);
        assert.deepEqual(
          ok.filter((r) => r.status === 'rejected'),
          [],
        );
        assert.equal((await mem.verifyAudit({ tenant: 't' })).ok, true);
        assert.equal((await mem.driver.auditHead('t'))?.seq, 2 + 10);
      } finally {
        await mem.close();
      }
    });

    test('a deferred append that fails rejects every call of its batch and stores none of it; writes go on', async () => {
      const { mem, driver } = await open(server.url);
      try {
        await write(mem, 'acked');
        const h = hold(driver);
        const writes = Array.from({ length: 5 }, (_, k) => write(mem, k));
        // an entry at a sequence number the chain already holds: only the primary key refuses it
        const dup = driver.transaction('t', async (tx) => {
          await tx.appendAudit(nextEntry('t', { seq: 1, hash: '0'.repeat(64) }, 'write', { at: new Date().toISOString() }, mem.policy.version));
        });
        const all = await settle<unknown>([h, ...writes, dup]);
        for (const r of all) assert.ok(r.status === 'rejected' && isMemauthError(r.reason, 'DATABASE_UNAVAILABLE'), String((r as PromiseRejectedResult).reason));
        assert.equal((await mem.driver.listRecords('t', { limit: 100 })).length, 1, 'only the write acknowledged before');
        await write(mem, 'after');
        assert.equal((await mem.verifyAudit({ tenant: 't' })).ok, true);
        assert.equal((await mem.driver.auditHead('t'))?.seq, 2 + 2);
      } finally {
        await mem.close();
      }
    });

    test('a record read, then erased by a call of the same batch, reads as erased; an erasure that fails is forgotten', async () => {
      const { mem, driver } = await open(server.url);
      try {
        const a = (await write(mem, 'a')).record.id;
        const b = (await write(mem, 'b')).record.id;
        const h = hold(driver);
        const status = (id: string) => driver.transaction('t', async (tx) => (await tx.getRecords('t', [id]))[0]?.status);
        const first = [status(a), status(b)];
        const erased = driver.transaction('t', (tx) => tx.eraseRecord('t', a, new Date().toISOString()));
        const failed = driver.transaction('t', async (tx) => {
          await tx.getRecords('t', [b]);
          await tx.eraseRecord('t', b, new Date().toISOString());
          throw new Error('deliberate');
        });
        const second = [status(a), status(b)];
        const [f] = await settle<unknown>([failed]);
        await Promise.all([h, erased]);
        assert.match(String((f as PromiseRejectedResult).reason), /deliberate/);
        assert.deepEqual(await Promise.all(first), ['active', 'active']);
        assert.deepEqual(await Promise.all(second), ['deleted', 'active']);
      } finally {
        await mem.close();
      }
    });
  });
}
