/**
 * Group commit on PostgreSQL (src/store/postgres/group-commit.ts), on a real server: the calls
 * of one tenant queued while a batch runs share one transaction, each in its SAVEPOINT. A call
 * that throws — also after writing, also with a PostgreSQL error — rolls back alone; a
 * connection killed mid-batch rejects every call of that batch and stores none of it, while the
 * calls acknowledged before are all present; afterwards the chain verifies and writes go on.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { openMemory } from '../src/api/open.js';
import type { Memory } from '../src/api/memory.js';
import { isMemauthError } from '../src/core/errors.js';
import type { StorageTx } from '../src/store/driver.js';
import { PostgresDriver } from '../src/store/postgres/driver.js';
import type { SqlTx } from '../src/store/sql/tx.js';
import { pgNotRun, testPostgres, withPgClient } from './support/postgres.js';

const server = await testPostgres();
let schemas = 0;

/** A fresh schema with one registered agent on tenant `t`. */
async function open(url: string): Promise<{ mem: Memory; driver: PostgresDriver }> {
  const driver = await PostgresDriver.connect(url, { schema: `gc_${process.pid}_${schemas++}` });
  const mem = await openMemory({ driver });
  await mem.registerPrincipal({ tenant: 't', id: 'agent', kind: 'agent', domain: 'agent-runtime' });
  return { mem, driver };
}

const write = (mem: Memory, k: number) => mem.write({ tenant: 't', scope: 'notes', principal: 'agent', content: `note ${k}` });
const sql = (tx: StorageTx, text: string) => (tx as SqlTx).rows({ text, values: [] });
const settle = <T>(ps: Array<Promise<T>>) => Promise.allSettled(ps);

async function recordCount(mem: Memory): Promise<number> {
  return (await mem.driver.listRecords('t', { limit: 10_000, includeDeleted: true })).length;
}

if ('unavailable' in server) {
  pgNotRun('PostgreSQL group commit', server.unavailable);
} else {
  after(() => server.stop());
  describe('[postgres] group commit', () => {
    test('a call that throws rolls back alone (after writing, and after a PostgreSQL error); the others of its batch commit', async () => {
      const { mem, driver } = await open(server.url);
      try {
        // the first call holds the lane, so that everything below queues into one batch
        const hold = driver.transaction('t', () => new Promise((r) => setTimeout(r, 300)));
        const before = Array.from({ length: 10 }, (_, k) => write(mem, k));
        const wroteThenThrew = driver.transaction('t', async (tx) => {
          await tx.putPolicyText('rolled-back', 'x', new Date().toISOString());
          throw new Error('deliberate');
        });
        const pgError = driver.transaction('t', async (tx) => {
          await sql(tx, 'SELECT 1/0');
        });
        const afterwards = Array.from({ length: 10 }, (_, k) => write(mem, 100 + k));
        const [threw, failed] = await settle<unknown>([wroteThenThrew, pgError]);
        await hold;
        const ok = await settle([...before, ...afterwards]);
        assert.deepEqual(
          ok.filter((r) => r.status === 'rejected'),
          [],
        );
        assert.match(String((threw as PromiseRejectedResult).reason), /deliberate/);
        assert.match(String((failed as PromiseRejectedResult).reason), /division by zero/);
        assert.equal(await mem.driver.getPolicyText('rolled-back'), null, 'the failed call left nothing');
        assert.equal(await recordCount(mem), 20);
        const report = await mem.verifyAudit({ tenant: 't' });
        assert.equal(report.ok, true, JSON.stringify(report));
      } finally {
        await mem.close();
      }
    });

    test('a connection killed mid-batch rejects the whole batch and stores none of it; acknowledged writes are all present; the chain verifies', async () => {
      const { mem, driver } = await open(server.url);
      try {
        const acked = await settle(Array.from({ length: 5 }, (_, k) => write(mem, k)));
        assert.ok(acked.every((r) => r.status === 'fulfilled'));
        const hold = driver.transaction('t', () => new Promise((r) => setTimeout(r, 300)));
        const before = Array.from({ length: 20 }, (_, k) => write(mem, 10 + k));
        const killer = driver.transaction('t', async (tx) => {
          const [row] = await sql(tx, 'SELECT pg_backend_pid() AS pid');
          await withPgClient(server.url, (c) => c.query('SELECT pg_terminate_backend($1)', [(row as { pid: number }).pid]));
          await sql(tx, 'SELECT 1');
        });
        const later = Array.from({ length: 20 }, (_, k) => write(mem, 100 + k));
        const [held, ...done] = await settle<unknown>([hold, ...before, killer, ...later]);
        const rejected = done.filter((r) => r.status === 'rejected');
        // the hold and the 20 writes before the killer were in its batch: all lost, none stored
        assert.equal(held?.status, 'rejected');
        assert.ok(rejected.length >= 21, `${rejected.length} rejected`);
        for (const r of [held, ...rejected]) assert.ok(r?.status === 'rejected' && isMemauthError(r.reason, 'DATABASE_UNAVAILABLE'), String((r as PromiseRejectedResult).reason));
        const fulfilled = done.filter((r) => r.status === 'fulfilled').length;
        assert.equal(await recordCount(mem), 5 + fulfilled, 'exactly the acknowledged writes are stored');
        await write(mem, 999);
        const report = await mem.verifyAudit({ tenant: 't' });
        assert.equal(report.ok, true, JSON.stringify(report));
        // the chain: 1 policy entry, 1 principal, then one entry per stored write
        assert.equal((await mem.driver.auditHead('t'))?.seq, 2 + 5 + fulfilled + 1);
      } finally {
        await mem.close();
      }
    });

    test('a call that catches its own PostgreSQL error and returns: its batch is rejected as a whole, nothing of it stored', async () => {
      const { mem, driver } = await open(server.url);
      try {
        const hold = driver.transaction('t', () => new Promise((r) => setTimeout(r, 300)));
        const writes = Array.from({ length: 5 }, (_, k) => write(mem, k));
        const swallower = driver.transaction('t', async (tx) => {
          await sql(tx, 'SELECT 1/0').catch(() => undefined);
          return 'returned normally';
        });
        const all = await settle<unknown>([hold, ...writes, swallower]);
        for (const r of all) assert.ok(r.status === 'rejected' && isMemauthError(r.reason, 'DATABASE_UNAVAILABLE'), String((r as PromiseRejectedResult).reason));
        assert.equal(await recordCount(mem), 0);
        await write(mem, 9);
        assert.equal((await mem.verifyAudit({ tenant: 't' })).ok, true);
      } finally {
        await mem.close();
      }
    });

    test('a tenant name with quotes and backslashes: group commit and one-transaction-per-call drivers share its lock (no fork)', async () => {
      const { mem, driver } = await open(server.url);
      const tenant = "it's \\ a'); SELECT 1; --";
      const plain = await PostgresDriver.connect(server.url, { schema: driver.target.schema ?? undefined, groupCommit: false });
      const other = await openMemory({ driver: plain });
      try {
        await mem.registerPrincipal({ tenant, id: 'agent', kind: 'agent', domain: 'agent-runtime' });
        const all = await settle(Array.from({ length: 60 }, (_, k) => (k % 2 === 0 ? mem : other).write({ tenant, scope: 'notes', principal: 'agent', content: `n ${k}` })));
        assert.deepEqual(
          all.filter((r) => r.status === 'rejected'),
          [],
        );
        const report = await mem.verifyAudit({ tenant });
        assert.equal(report.ok, true, JSON.stringify(report));
        assert.equal((await mem.driver.auditHead(tenant))?.seq, 2 + 60);
      } finally {
        await other.close();
        await mem.close();
      }
    });

    test('writes of several tenants in flight at once all commit, and every chain verifies', async () => {
      const { mem } = await open(server.url);
      try {
        for (const tenant of ['u', 'v', 'w']) await mem.registerPrincipal({ tenant, id: 'agent', kind: 'agent', domain: 'agent-runtime' });
        const all = await settle(Array.from({ length: 120 }, (_, k) => mem.write({ tenant: ['t', 'u', 'v', 'w'][k % 4] as string, scope: 'notes', principal: 'agent', content: `n ${k}` })));
        assert.deepEqual(
          all.filter((r) => r.status === 'rejected'),
          [],
        );
        const report = await mem.verifyAudit({});
        assert.equal(report.ok, true, JSON.stringify(report));
        for (const tenant of ['t', 'u', 'v', 'w']) assert.equal((await mem.driver.listRecords(tenant, { limit: 1000 })).length, 30);
      } finally {
        await mem.close();
      }
    });
  });
}
