/**
 * Throughput of 1, 2 and 4 memauth processes on one PostgreSQL — `memauth serve` over HTTP, and
 * the library in worker processes —, for docs/postgresql.md
 * § Throughput: `node dist/test/concurrency/bench.js --run [count] [--url URL]`. Without --url it
 * starts a throwaway cluster with durable settings (fsync and synchronous_commit on). Each row
 * also runs every check of the concurrency test.
 *
 * Without `--run` (as when `node --test` loads every file under dist/test/) it does nothing.
 */
import os from 'node:os';
import { startCluster } from '../support/postgres.js';
import { runLoad } from './load.js';

if (process.argv[2] === '--run') {
  const args = process.argv.slice(3);
  const urlAt = args.indexOf('--url');
  const count = Number(args.find((a) => /^\d+$/.test(a)) ?? 1000);
  let url = urlAt >= 0 ? args[urlAt + 1] : undefined;
  let stop = (): void => undefined;
  if (url === undefined) {
    const s = await startCluster({ durable: true });
    if ('unavailable' in s) throw new Error(s.unavailable);
    url = s.url;
    stop = s.stop;
  }
  try {
    process.stdout.write(
      `${os.cpus().length} CPUs; load average before: ${os
        .loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}\n`,
    );
    process.stdout.write(
      `| via | processes | tenants | writes | decisions | seconds | writes/s | decisions/s | checks | load avg (1 min) |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n`,
    );
    for (const via of ['http', 'library'] as const) {
      for (const tenants of [1, 16]) {
        for (const processes of [1, 2, 4]) {
          const r = await runLoad({ url, processes, count, tenants, via });
          const ok = r.errors.length === 0 && r.missingWrites === 0 && r.missingDecisions === 0 && r.chainsOk && r.replayMismatches.length === 0;
          const load = os.loadavg()[0]?.toFixed(1) ?? '?';
          process.stdout.write(
            `| ${via} | ${processes} | ${tenants} | ${r.writes} | ${r.decisions} | ${r.seconds.toFixed(1)} | ${r.writesPerSecond.toFixed(0)} | ${r.decisionsPerSecond.toFixed(0)} | ${ok ? `ok (${r.replayed} replayed)` : 'FAILED'} | ${load} |\n`,
          );
        }
      }
    }
  } finally {
    stop();
  }
}
