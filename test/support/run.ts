/**
 * `npm test` entry: `node dist/test/support/run.js --run <command…>` starts one throwaway
 * PostgreSQL cluster for the whole run (unless MEMAUTH_TEST_PG_URL is set), runs the command
 * with MEMAUTH_TEST_PG_URL pointing at it, stops the cluster, and exits with the command's code.
 * When no server can be had it says so in one line after the run (see test/support/postgres.ts).
 *
 * Without `--run` (as when `node --test dist/test/` loads every file under test/) it does nothing.
 */
import { spawn } from 'node:child_process';
import { NOT_RUN, pgRequired, startCluster } from './postgres.js';

if (process.argv[2] === '--run') {
  const [cmd, ...args] = process.argv.slice(3);
  if (cmd === undefined) {
    process.stderr.write('usage: run.js --run <command> [args…]\n');
    process.exit(2);
  }
  const env = { ...process.env };
  let stop: () => void = () => undefined;
  let unavailable: string | null = null;
  if (env.MEMAUTH_TEST_PG_URL === undefined || env.MEMAUTH_TEST_PG_URL === '') {
    const started = Date.now();
    const server = await startCluster();
    if ('unavailable' in server) {
      unavailable = server.unavailable;
      env.MEMAUTH_TEST_PG_UNAVAILABLE = server.unavailable;
    } else {
      env.MEMAUTH_TEST_PG_URL = server.url;
      if (server.dataDir !== null) env.MEMAUTH_TEST_PG_DATA = server.dataDir;
      stop = server.stop;
      process.stderr.write(`memauth tests: throwaway PostgreSQL cluster at ${server.url} (started in ${Date.now() - started} ms)\n`);
    }
  }
  const child = spawn(cmd, args, { stdio: 'inherit', env });
  const forward = (sig: NodeJS.Signals): void => {
    child.kill(sig);
  };
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  const code = await new Promise<number>((resolve) => child.on('exit', (c, s) => resolve(c ?? (s ? 1 : 0))));
  stop();
  if (unavailable !== null) {
    process.stderr.write(`${NOT_RUN} (${unavailable})${pgRequired() ? ' — MEMAUTH_REQUIRE_PG=1, so this run fails' : ''}\n`);
  }
  process.exit(code);
}
