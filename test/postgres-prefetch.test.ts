/**
 * What a PostgreSQL group-commit batch reads with its BEGIN and keeps (src/store/postgres/prefetch.ts,
 * src/store/postgres/kept-reads.ts), on a real server: a tenant's later batches of writes and of
 * decisions over the same dependencies take two round trips (BEGIN with its reads, COMMIT with the
 * appends); a batch's kept unexpired confirmations answer every look-up exactly as the server does,
 * also with more than the kept maximum; and what another process writes between two batches — a
 * confirmation, a principal, records — is seen by the next batch.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { openMemory } from '../src/api/open.js';
import type { Memory } from '../src/api/memory.js';
import { PostgresDriver } from '../src/store/postgres/driver.js';
import { LIVE_MAX } from '../src/store/postgres/kept-reads.js';
import { TokenService } from '../src/server/tokens.js';
import { pgNotRun, testPostgres, withPgClient } from './support/postgres.js';

const server = await testPostgres();
let schemas = 0;

async function open(url: string, schema = `pf_${process.pid}_${schemas++}`): Promise<{ mem: Memory; driver: PostgresDriver; schema: string }> {
  const driver = await PostgresDriver.connect(url, { schema });
  const mem = await openMemory({ driver });
  return { mem, driver, schema };
}

/** Counts the queries every pg client sends while `fn` runs (one query = one round trip). */
async function roundTrips(fn: () => Promise<unknown>): Promise<number> {
  const orig = pg.Client.prototype.query;
  let n = 0;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    n++;
    return (orig as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof orig;
  try {
    await fn();
  } finally {
    pg.Client.prototype.query = orig;
  }
  return n;
}

/** A transaction that holds the tenant's lane for 200 ms, so that the calls queued with it share its batch. */
const hold = (driver: PostgresDriver) => driver.transaction('t', () => new Promise((r) => setTimeout(r, 200)));

if ('unavailable' in server) {
  pgNotRun('PostgreSQL prefetch', server.unavailable);
} else {
  after(() => server.stop());
  describe('[postgres] reads sent with BEGIN and kept by a batch', () => {
    test("a tenant's later batch of writes, and of decisions over the same dependencies, takes two round trips", async () => {
      const { mem, driver } = await open(server.url);
      try {
        await mem.registerPrincipal({ tenant: 't', id: 'alice', kind: 'user', domain: 'acme-staff' });
        await mem.registerPrincipal({ tenant: 't', id: 'agent', kind: 'agent', domain: 'agent-runtime' });
        const deps = [(await mem.write({ tenant: 't', scope: 'v', principal: 'alice', content: 'vendor-1 IBAN DE00 1234' })).record.id];
        const pay = (k: number) => mem.authorize({ tenant: 't', action: { type: 'pay', args: { to: 'vendor-1', amount: 100 + (k % 3) } }, dependsOn: deps, context: 'declared' });
        await mem.write({ tenant: 't', scope: 'notes', principal: 'agent', content: 'warm' });
        // each action decided alone first: the batch must decide the same
        const alone: string[] = [];
        for (let k = 0; k < 3; k++) alone.push((await pay(k)).outcome);
        const writes = await roundTrips(() => Promise.all([hold(driver), ...Array.from({ length: 10 }, (_, k) => mem.write({ tenant: 't', scope: 'notes', principal: 'agent', content: `n${k}` }))]));
        assert.equal(writes, 2, 'BEGIN with its reads, then COMMIT with the appends');
        let outcomes: string[] = [];
        const decisions = await roundTrips(async () => {
          const [, ...ds] = await Promise.all([hold(driver), ...Array.from({ length: 10 }, (_, k) => pay(k))]);
          outcomes = ds.map((d) => d.outcome);
        });
        assert.equal(decisions, 2);
        assert.deepEqual(
          outcomes,
          Array.from({ length: 10 }, (_, k) => alone[k % 3]),
        );
        assert.equal((await mem.verifyAudit({ tenant: 't' })).ok, true);
      } finally {
        await mem.close();
      }
    });

    for (const crowd of [12, LIVE_MAX + 5]) {
      test(`kept confirmations answer each look-up as the server does (${crowd} rows)`, async () => {
        const { mem, driver } = await open(server.url);
        try {
          const base = Date.parse('2030-01-01T00:00:00.000Z');
          const at = (m: number) => new Date(base + m * 60_000).toISOString();
          await withPgClient(server.url, async (c) => {
            for (let i = 0; i < crowd; i++) {
              await c.query(
                `INSERT INTO ${driver.target.schema}.confirmations (id, tenant, principal_id, action_type, resource, args_hash, args, memory_ids, expires_at, max_uses, created_at, audit_seq) VALUES ($1, 't', 'alice', $2, NULL, $3, '{}', NULL, $4, 1, $5, 1)`,
                [`cnf_${String(i).padStart(4, '0')}`, i % 3 === 0 ? 'pay' : 'send_email', `h${i % 4}`, at(i % 20), at(-(i % 7))],
              );
            }
          });
          const asks: Array<[string, string, number]> = [];
          for (const type of ['pay', 'send_email', 'grant']) for (const hash of ['h0', 'h1', 'h3', 'h9']) for (const m of [-30, 0, 5, 12, 19, 25]) asks.push([type, hash, m]);
          const inBatch = await driver.transaction('t', async (tx) => {
            const out: string[][] = [];
            for (const [type, hash, m] of asks) out.push((await tx.listConfirmations('t', type, hash, at(m))).map((c) => c.id));
            return out;
          });
          const direct: string[][] = [];
          for (const [type, hash, m] of asks) direct.push((await driver.listConfirmations('t', type, hash, at(m))).map((c) => c.id));
          assert.deepEqual(inBatch, direct);
          assert.ok(direct.some((ids) => ids.length > 1) && direct.some((ids) => ids.length === 0));
        } finally {
          await mem.close();
        }
      });
    }

    test('a bearer token is authenticated in one round trip, and refused from the first request after its revocation', async () => {
      const { mem, driver } = await open(server.url);
      try {
        await mem.registerPrincipal({ tenant: 't', id: 'agent', kind: 'agent', domain: 'agent-runtime' });
        const tokens = new TokenService(driver);
        const issued = await tokens.issue({ tenant: 't', principal: 'agent' });
        const admin = await tokens.issue('admin');
        let who: unknown;
        assert.equal(await roundTrips(async () => (who = await tokens.authenticate(issued.token))), 1);
        assert.deepEqual(who, { kind: 'principal', tokenId: issued.info.id, tenant: 't', principal: await driver.getPrincipal('t', 'agent') });
        assert.equal((await tokens.authenticate(admin.token)).kind, 'admin');
        await tokens.revoke(issued.info.id);
        await assert.rejects(tokens.authenticate(issued.token), (e: Error & { details?: { reason?: string } }) => e.details?.reason === 'revoked');
        await assert.rejects(tokens.authenticate(`mat_${'Z'.repeat(43)}`), (e: Error & { details?: { reason?: string } }) => e.details?.reason === 'unknown');
      } finally {
        await mem.close();
      }
    });

    test('what another process writes between two batches is seen by the next: a confirmation, a principal, a record', async () => {
      const a = await open(server.url);
      const b = await open(server.url, a.schema);
      try {
        await a.mem.registerPrincipal({ tenant: 't', id: 'alice', kind: 'user', domain: 'acme-staff' });
        await a.mem.registerPrincipal({ tenant: 't', id: 'web', kind: 'tool', domain: 'browser' });
        const rec = (await a.mem.write({ tenant: 't', scope: 'v', principal: 'web', content: 'Vendor remits to ACCT-77', source: 'https://vendor.example' })).record;
        const action = { type: 'pay', args: { to: 'ACCT-77', amount: 5 } };
        const before = await a.mem.authorize({ tenant: 't', action, dependsOn: [rec.id] });
        assert.notEqual(before.outcome, 'allow');
        await b.mem.confirm({ tenant: 't', principal: 'alice', action });
        const afterConfirm = await a.mem.authorize({ tenant: 't', action, dependsOn: [rec.id] });
        assert.equal(afterConfirm.outcome, 'allow', JSON.stringify(afterConfirm.reasons));
        await b.mem.registerPrincipal({ tenant: 't', id: 'bob', kind: 'user', domain: 'acme-staff' });
        const bobs = (await a.mem.write({ tenant: 't', scope: 'v', principal: 'bob', content: 'bob was here' })).record;
        const third = (await b.mem.write({ tenant: 't', scope: 'v', principal: 'alice', content: 'from b' })).record;
        assert.deepEqual((await a.driver.transaction('t', (tx) => tx.getRecords('t', [bobs.id, third.id]))).map((r) => r.content).sort(), ['bob was here', 'from b']);
        assert.equal((await a.mem.verifyAudit({ tenant: 't' })).ok, true);
      } finally {
        await b.mem.close();
        await a.mem.close();
      }
    });
  });
}
