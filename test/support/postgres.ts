/**
 * Where the PostgreSQL tests get a server from.
 *
 * 1. `MEMAUTH_TEST_PG_URL` (a database the tests may create schemas in), else
 * 2. a throwaway cluster started here from Debian's server binaries
 *    (`/usr/lib/postgresql/<v>/bin/initdb` and `pg_ctl`), as the `postgres` OS user when running
 *    as root, on 127.0.0.1 and a free port, with trust authentication and a temp data directory;
 *    stopped and removed by {@link PgServer.stop}.
 * 3. Neither: {@link NOT_RUN} is printed, and with `MEMAUTH_REQUIRE_PG=1` (CI) the suite fails.
 *
 * `node dist/test/support/run.js --run …` starts one cluster for every test file of a run and
 * passes its URL down in MEMAUTH_TEST_PG_URL (plus MEMAUTH_TEST_PG_DATA, the data directory,
 * for the file-level deletion check).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

export const NOT_RUN = 'PostgreSQL conformance suite NOT RUN: install postgresql or set MEMAUTH_TEST_PG_URL';

/** Run `fn` on a fresh client connected to `url` (an admin's side door: DDL, raw reads); always disconnects. */
export async function withPgClient<X>(url: string, fn: (c: pg.Client) => Promise<X>): Promise<X> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export interface PgServer {
  readonly url: string;
  /** the cluster's data directory when it is known and readable here, else null. */
  readonly dataDir: string | null;
  /** stop and remove a cluster started here (a no-op for MEMAUTH_TEST_PG_URL). */
  stop(): void;
}

function binDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return null;
  const versions = fs
    .readdirSync(root)
    .filter((v) => fs.existsSync(path.join(root, v, 'bin', 'initdb')) && fs.existsSync(path.join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] !== undefined ? path.join(root, versions[0], 'bin') : null;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a !== null ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** Run a server binary, as the `postgres` OS user when we are root (initdb refuses root). */
function runAs(bin: string, args: string[], asPostgres: boolean): void {
  const cmd = asPostgres ? 'runuser' : bin;
  const argv = asPostgres ? ['-u', 'postgres', '--', bin, ...args] : args;
  const r = spawnSync(cmd, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], cwd: os.tmpdir() });
  if (r.status !== 0) throw new Error(`${path.basename(bin)} failed (${r.status ?? r.signal}): ${(r.stderr || r.stdout || String(r.error ?? '')).trim().slice(0, 2000)}`);
}

/**
 * Start a throwaway cluster, or return null (with the reason) when this machine cannot.
 * Durability is off (fsync, synchronous_commit, full_page_writes): it is thrown away.
 */
export async function startCluster(opts: { durable?: boolean } = {}): Promise<PgServer | { unavailable: string }> {
  const bin = binDir();
  if (bin === null) return { unavailable: 'no PostgreSQL server binaries under /usr/lib/postgresql/*/bin' };
  const root = process.getuid?.() === 0;
  if (root && spawnSync('id', ['-u', 'postgres']).status !== 0) return { unavailable: 'running as root but there is no postgres OS user to run the server as' };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memauth-pg-'));
  const data = path.join(dir, 'data');
  if (root) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    fs.chownSync(dir, uid, gid);
  }
  fs.chmodSync(dir, 0o700);
  const port = await freePort();
  const settings = [
    '-c listen_addresses=127.0.0.1',
    `-p ${port}`,
    `-k ${dir}`,
    '-c max_connections=200',
    ...(opts.durable ? [] : ['-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off']),
  ].join(' ');
  try {
    runAs(path.join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync'], root);
    runAs(path.join(bin, 'pg_ctl'), ['-D', data, '-l', path.join(dir, 'server.log'), '-o', settings, '-w', '-t', '60', 'start'], root);
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true });
    return { unavailable: `could not start a throwaway cluster: ${(e as Error).message}` };
  }
  let stopped = false;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dataDir: data,
    stop: () => {
      if (stopped) return;
      stopped = true;
      try {
        runAs(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop'], root);
      } catch {
        // already gone
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The server the PostgreSQL tests use: MEMAUTH_TEST_PG_URL, else a cluster started here (stop it
 * with `stop()` when the file is done), else `{ unavailable }`.
 */
export async function testPostgres(): Promise<PgServer | { unavailable: string }> {
  const url = process.env.MEMAUTH_TEST_PG_URL;
  if (url !== undefined && url !== '') {
    const dataDir = process.env.MEMAUTH_TEST_PG_DATA;
    return { url, dataDir: dataDir !== undefined && dataDir !== '' ? dataDir : null, stop: () => undefined };
  }
  const known = process.env.MEMAUTH_TEST_PG_UNAVAILABLE;
  if (known !== undefined && known !== '') return { unavailable: known };
  return startCluster();
}

/** True when the PostgreSQL suite must run (CI sets MEMAUTH_REQUIRE_PG=1). */
export const pgRequired = (): boolean => process.env.MEMAUTH_REQUIRE_PG === '1';

/**
 * Where PostgreSQL is unavailable: print why, and register one test `name` that fails when
 * MEMAUTH_REQUIRE_PG=1 (CI) and is otherwise reported as skipped ({@link NOT_RUN}).
 */
export function pgNotRun(name: string, unavailable: string): void {
  process.stdout.write(`${NOT_RUN} (${unavailable})\n`);
  test(name, (t) => {
    if (pgRequired()) assert.fail(`${NOT_RUN}: ${unavailable} (MEMAUTH_REQUIRE_PG=1)`);
    t.skip(NOT_RUN);
  });
}
