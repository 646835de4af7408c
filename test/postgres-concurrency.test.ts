/**
 * Several memauth servers on one PostgreSQL (docs/design.md: "PostgreSQL for scale"): 4 real
 * `memauth serve --database postgres://…` processes, each with its own connection pool and 4
 * HTTP requests in flight (principal bearer tokens, as clients would send them), write and decide
 * at once — all on one tenant (one audit chain, every append serialised by the advisory lock
 * across processes), and spread over many tenants. Afterwards every acknowledged write and
 * decision is present, every chain verifies (no fork, no duplicate or missing sequence number)
 * and a random sample of decisions replays from the log to the recorded outcome.
 *
 * Count per process: MEMAUTH_CONCURRENCY_COUNT (default 250 in `npm test`; the throughput figures
 * of docs/postgresql.md use 1000: `node dist/test/concurrency/bench.js --run`).
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { runLoad } from './concurrency/load.js';
import { pgNotRun, testPostgres } from './support/postgres.js';

const server = await testPostgres();
const COUNT = Number(process.env.MEMAUTH_CONCURRENCY_COUNT ?? 250);
const PROCESSES = 4;

if ('unavailable' in server) {
  pgNotRun('PostgreSQL concurrency test', server.unavailable);
} else {
  after(() => server.stop());
  describe(`[postgres] ${PROCESSES} memauth serve processes on one database over HTTP, ${COUNT} writes and ${COUNT} decisions each`, () => {
    for (const tenants of [1, 16]) {
      test(tenants === 1 ? 'all on one tenant (one chain)' : `spread over ${tenants} tenants`, async (t) => {
        const r = await runLoad({ url: server.url, processes: PROCESSES, count: COUNT, tenants, via: 'http' });
        t.diagnostic(
          `${r.writes} writes + ${r.decisions} decisions in ${r.seconds.toFixed(1)} s: ${r.writesPerSecond.toFixed(0)} writes/s, ${r.decisionsPerSecond.toFixed(0)} decisions/s; outcomes ${JSON.stringify(r.outcomes)}; ${r.replayed} replayed`,
        );
        assert.deepEqual(r.errors, [], 'no request failed');
        assert.equal(r.writes, PROCESSES * COUNT, 'every write acknowledged');
        assert.equal(r.decisions, PROCESSES * COUNT, 'every decision acknowledged');
        assert.equal(r.missingWrites, 0, 'every acknowledged write is present');
        assert.equal(r.missingDecisions, 0, 'every acknowledged decision is present');
        assert.equal(r.chainsOk, true, `every chain verifies: ${r.chainMessages.join('; ')}`);
        // the chains hold exactly the acknowledged appends: 1 policy + 3 principals per tenant, the
        // tokens issued to them, then one entry per write and per decision
        assert.equal(r.chainEntries, tenants * 4 + r.tokenEntries + r.writes + r.decisions, 'no lost, duplicated or extra entry');
        assert.deepEqual(r.replayMismatches, [], 'sampled decisions replay to the recorded outcome');
        assert.ok((r.outcomes.allow ?? 0) > 0 && (r.outcomes.deny ?? 0) > 0, 'both outcomes occur');
      });
    }
  });
}
