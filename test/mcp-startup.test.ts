/**
 * `memauth mcp` that cannot start, seen through the official MCP SDK client over stdio: the
 * client's `connect` fails with a message naming the cause (missing token, a database path that
 * does not exist, a corrupted file, an invalid policy, a bad token, a user's token) — never a bare
 * closed pipe — and the process still reports the error on stderr and exits with its code.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CLI, cleanEnv, tempDir } from './server-helpers.js';

let dir: string;
let userToken: string;

const cli = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd: dir, env: cleanEnv(), encoding: 'utf8' });

before(() => {
  dir = tempDir();
  assert.equal(cli('--db', 'ok.db', 'init', '--tenant', 'acme').status, 0);
  assert.equal(cli('--db', 'ok.db', '--tenant', 'acme', 'principal', 'add', 'alice', '--kind', 'user', '--domain', 'acme-staff').status, 0);
  const issued = cli('--db', 'ok.db', '--tenant', 'acme', '--json', 'token', 'create', '--principal', 'alice');
  assert.equal(issued.status, 0, issued.stderr);
  userToken = JSON.parse(issued.stdout).token as string;
  writeFileSync(join(dir, 'corrupt.db'), Buffer.alloc(8192, 0x5a));
  writeFileSync(join(dir, 'bad-policy.json'), JSON.stringify({ extends: 'default', modes: { high: 'ignore' } }));
});

/** Connect the SDK client to `memauth mcp` with `args`; returns the connect error's message and stderr. */
async function failedStart(args: string[], token: string | null): Promise<{ message: string; stderr: string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, ...args, 'mcp'],
    cwd: dir,
    env: cleanEnv(token === null ? {} : { MEMAUTH_TOKEN: token }) as Record<string, string>,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
  const client = new Client({ name: 'memauth-test', version: '1.0.0' });
  const err = await client.connect(transport).then(
    () => null,
    (e: unknown) => e,
  );
  assert.ok(err instanceof Error, 'connect must fail');
  await client.close().catch(() => undefined);
  return { message: err.message, stderr };
}

describe('memauth mcp that cannot start answers the client with the reason', () => {
  const cases: ReadonlyArray<readonly [string, string[], () => string | null, RegExp]> = [
    ['no token', ['--db', 'ok.db'], () => null, /could not start: INVALID_ARGUMENT: memauth mcp needs a principal token/],
    ['a database path that does not exist', ['--db', 'missing.db'], () => 'mat_x', /could not start: INVALID_ARGUMENT: .*missing\.db/],
    ['a corrupted database file', ['--db', 'corrupt.db'], () => 'mat_x', /could not start: DATABASE_CORRUPT: /],
    ['an invalid policy', ['--db', 'ok.db', '--policy', 'bad-policy.json'], () => userToken, /could not start: POLICY_INVALID: .*modes\.high/],
    ['an unknown token', ['--db', 'ok.db'], () => 'mat_not_a_token', /could not start: UNAUTHENTICATED: /],
    ["a user principal's token", ['--db', 'ok.db'], () => userToken, /could not start: MCP_PRINCIPAL_KIND: .*not a principal of kind user/],
  ];
  for (const [what, args, token, expected] of cases) {
    test(what, async () => {
      const r = await failedStart(args, token());
      assert.match(r.message, expected);
      assert.match(r.stderr, /error [A-Z_]+: /, 'still reported on stderr');
    });
  }

  test('on the wire: one JSON-RPC error per request on stdout, then exit with the error code when stdin ends', () => {
    const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    const r = spawnSync(process.execPath, [CLI, '--db', 'missing.db', 'mcp'], {
      cwd: dir,
      env: cleanEnv({ MEMAUTH_TOKEN: 'mat_x' }),
      input: `${JSON.stringify(init)}\n${JSON.stringify(list)}\n`,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(r.status, 2, r.stderr);
    const answers = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: number; error: { code: number; message: string; data: { code: string } } });
    assert.deepEqual(
      answers.map((a) => [a.id, a.error.code, a.error.data.code]),
      [
        [1, -32000, 'INVALID_ARGUMENT'],
        [2, -32000, 'INVALID_ARGUMENT'],
      ],
    );
    assert.match(r.stderr, /error INVALID_ARGUMENT: /);
  });
});
