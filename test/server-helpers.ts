/**
 * Helpers of the server tests: spawn the BUILT CLI (`node dist/src/cli/main.js serve --port 0`)
 * as a real process, read the URL and the admin token it prints, and talk to it with real HTTP.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export { tempDir } from './support/tmp.js';

/** dist/src/cli/main.js (these tests are compiled to dist/test/). */
export const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

/** The environment of a spawned CLI: none of the MEMAUTH_* variables (nor DATABASE_URL) of the test runner leak in. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MEMAUTH_') && k !== 'DATABASE_URL') env[k] = v;
  return { ...env, ...extra };
}

export interface ServerProcess {
  readonly url: string;
  /** the admin token printed at this start, or null when the database already had one. */
  readonly adminToken: string | null;
  readonly proc: ChildProcess;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** send a signal (unless one was already sent) and wait for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Spawn `memauth serve --port 0` in `cwd` and wait for its "listening on" line.
 * Rejects with the process output when it exits first.
 */
export function startServerProcess(opts: { cwd: string; args?: readonly string[]; env?: Record<string, string> }): Promise<ServerProcess> {
  const args = opts.args ?? ['--db', 'memauth.db', '--port', '0', '--log-level', 'warn'];
  const proc = spawn(process.execPath, [CLI, 'serve', ...args], { cwd: opts.cwd, env: cleanEnv(opts.env), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout.setEncoding('utf8');
  proc.stderr.setEncoding('utf8');
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return new Promise<ServerProcess>((resolve, reject) => {
    proc.stdout.on('data', (chunk: string) => {
      out += chunk;
      const m = /memauth listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        const token = /memauth admin token: (mat_\S+)/.exec(out);
        resolve({
          url: m[1] as string,
          adminToken: token ? (token[1] as string) : null,
          proc,
          stdout: () => out,
          stderr: () => err,
          stop: async (signal = 'SIGTERM') => {
            if (!proc.killed && proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
            return exited;
          },
        });
      }
    });
    proc.stderr.on('data', (chunk: string) => {
      err += chunk;
    });
    void exited.then((code) => reject(new Error(`server exited (${code}) before listening\nstdout: ${out}\nstderr: ${err}`)));
  });
}

export interface Res<T = any> {
  // eslint-disable-line @typescript-eslint/no-explicit-any -- test responses are checked field by field
  readonly status: number;
  readonly body: T;
  readonly text: string;
  readonly headers: Headers;
}

/** One real HTTP request; JSON body in and out. */
export async function http(url: string, method: string, path: string, opts: { token?: string | null; body?: unknown; raw?: string; contentType?: string } = {}): Promise<Res> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.raw !== undefined) body = opts.raw;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers['content-type'] = opts.contentType ?? 'application/json';
  const r = await fetch(`${url}${path}`, { method, headers, body });
  const text = await r.text();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  return { status: r.status, body: parsed, text, headers: r.headers };
}

/** A client bound to one token. */
export function client(url: string, token: string | null) {
  return {
    get: (path: string) => http(url, 'GET', path, { token }),
    post: (path: string, body?: unknown) => http(url, 'POST', path, { token, body }),
    del: (path: string) => http(url, 'DELETE', path, { token }),
  };
}

/** Assert an error response: status and code, and the {code, message, details} shape. */
export function expectError(r: Res, status: number, code: string): void {
  assert.equal(r.status, status, `expected ${status} ${code}, got ${r.status}: ${r.text}`);
  assert.equal(r.body?.code, code, `expected code ${code}: ${r.text}`);
  assert.equal(typeof r.body.message, 'string');
  assert.equal(typeof r.body.details, 'object');
  assert.ok(!/\bat .+:\d+:\d+/.test(r.text), `no stack trace on the wire: ${r.text}`);
}

export function expectStatus(r: Res, status: number, what = ''): void {
  assert.equal(r.status, status, `${what} expected ${status}, got ${r.status}: ${r.text}`);
}

/** Register a principal with the admin token; returns its bearer token. */
export async function addPrincipal(url: string, admin: string, p: { tenant: string; id: string; kind: string; domain: string; maxAuthority?: string }): Promise<string> {
  const r = await http(url, 'POST', '/v1/principals', { token: admin, body: p });
  expectStatus(r, 201, `register ${p.id}`);
  return r.body.token.token as string;
}
