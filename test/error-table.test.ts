/**
 * The error table (src/core/error-codes.ts) against reality: docs/errors.md is generated from it;
 * the server's statuses and the CLI's exit codes are the table's; every code the table marks
 * audited is found in the audit chain when provoked (and a representative set of `never` codes
 * leaves the chain untouched); a database that cannot be reached exits 3, not 2 (usage).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EDGE_ERROR_CODES, EDGE_ERROR_TABLE, ERROR_TABLE, EXIT, errorSpec } from '../src/core/error-codes.js';
import { renderErrorDocs } from '../src/core/error-docs.js';
import { ERROR_CODES, type ErrorCode, MemauthError } from '../src/core/errors.js';
import { exitCodeFor } from '../src/cli/errors.js';
import { HttpError, MEMAUTH_STATUS, errorResponse } from '../src/server/errors.js';
import type { Memory } from '../src/api/memory.js';
import { importMemories } from '../src/import/index.js';
import { P, T, expectCode, setup } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

/** Every .ts file under src/ with its text. */
function sources(): Array<{ file: string; text: string }> {
  const dir = join(ROOT, 'src');
  return (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.ts')).map((f) => ({ file: f, text: readFileSync(join(dir, f), 'utf8') }));
}

test('docs/errors.md is generated from the error table (run npm run docs:errors when this fails)', () => {
  assert.equal(readFileSync(join(ROOT, 'docs', 'errors.md'), 'utf8'), renderErrorDocs());
});

test('every code has one row; partly-audited rows say when', () => {
  assert.deepEqual(Object.keys(ERROR_TABLE).sort(), [...ERROR_CODES].sort());
  assert.deepEqual(Object.keys(EDGE_ERROR_TABLE).sort(), [...EDGE_ERROR_CODES].sort());
  for (const c of [...ERROR_CODES, ...EDGE_ERROR_CODES]) {
    const s = errorSpec(c);
    assert.ok(s, c);
    assert.equal(s.audited === 'partly', s.auditedWhen !== undefined, `${c}: auditedWhen goes with partly`);
    assert.ok(!(ERROR_CODES as readonly string[]).includes(c) || !(EDGE_ERROR_CODES as readonly string[]).includes(c), `${c} is in both lists`);
  }
  for (const c of EDGE_ERROR_CODES) assert.equal(EDGE_ERROR_TABLE[c].audited, 'never', `${c}: the server edge logs no refusal`);
});

test('the server answers each MemauthError code with the status of the table', () => {
  for (const c of ERROR_CODES) {
    const { status, body, internal } = errorResponse(new MemauthError(c, 'm'), 'req_1');
    assert.equal(status, ERROR_TABLE[c].status, c);
    assert.equal(body.code, c);
    assert.equal(internal, status === 500, c);
    assert.equal(MEMAUTH_STATUS[c], status === 500 ? undefined : status, c);
  }
});

test('every HttpError the server raises carries the status the table gives its code', () => {
  const seen = new Set<string>();
  for (const { file, text } of sources()) {
    for (const m of text.matchAll(/new HttpError\((\d+), '([A-Z_]+)'/g)) {
      const spec = errorSpec(m[2] as string);
      assert.ok(spec, `${file}: ${m[2]} is not in the error table`);
      assert.equal(Number(m[1]), spec.status, `${file}: ${m[2]}`);
      seen.add(m[2] as string);
    }
  }
  assert.ok(seen.size > 15, 'the scan found the server errors');
});

test('reserved codes are raised nowhere; every other code is named by some module besides the tables', () => {
  const files = sources().filter((f) => !['core/errors.ts', 'core/error-codes.ts'].includes(f.file.replace(/\\/g, '/')));
  for (const c of [...ERROR_CODES, ...EDGE_ERROR_CODES]) {
    const users = files.filter((f) => f.text.includes(`'${c}'`)).map((f) => f.file);
    if (errorSpec(c)?.reserved === true) assert.deepEqual(users, [], `${c} is marked reserved but raised`);
    else assert.ok(users.length > 0, `${c} is raised nowhere: mark it reserved`);
  }
});

test('the CLI exits with the exit code of the table', () => {
  for (const c of ERROR_CODES) assert.equal(exitCodeFor(new MemauthError(c, 'm')), ERROR_TABLE[c].exit, c);
  for (const c of EDGE_ERROR_CODES) assert.equal(exitCodeFor(new HttpError(EDGE_ERROR_TABLE[c].status, c, 'm')), EDGE_ERROR_TABLE[c].exit, c);
  // the environment is not usage: a database that cannot be reached, locked, corrupt or closed, or a trigger's refusal
  for (const c of ['DATABASE_UNAVAILABLE', 'DATABASE_LOCKED', 'DATABASE_CORRUPT', 'IMMUTABLE_FIELD', 'CLOSED'] as const) assert.equal(ERROR_TABLE[c].exit, EXIT.UNEXPECTED, c);
  assert.equal(exitCodeFor(new Error('boom')), EXIT.UNEXPECTED);
});

/** A TCP port nobody listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

test('CLI: a PostgreSQL server that cannot be reached is DATABASE_UNAVAILABLE, exit 3 (not 2, usage)', async () => {
  const port = await closedPort();
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['MEMAUTH_DB', 'DATABASE_URL', 'MEMAUTH_POLICY', 'MEMAUTH_TENANT', 'MEMAUTH_DEBUG']) delete env[k];
  const r = spawnSync(process.execPath, [CLI, '--database', `postgres://memauth@127.0.0.1:${port}/memauth`, '--tenant', 'acme', '--json', 'list'], { env, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, EXIT.UNEXPECTED, r.stderr);
  assert.equal((JSON.parse(r.stdout) as { code: string }).code, 'DATABASE_UNAVAILABLE');
});

// ---------------------------------------------------------------- audited refusals, provoked

/** Run `fn`, expect `code`, and return the audit entries it appended to tenant T's chain. */
async function provoke(mem: Memory, code: ErrorCode, fn: () => Promise<unknown>): Promise<Array<Record<string, unknown>>> {
  const before = (await mem.driver.auditHead(T))?.seq ?? 0;
  await expectCode(fn, code);
  const after = (await mem.driver.auditHead(T))?.seq ?? 0;
  const entries = after > before ? await mem.driver.auditRange(T, before + 1, after) : [];
  return entries.map((e) => e.payload as Record<string, unknown>);
}

const refusedWith = (entries: ReadonlyArray<Record<string, unknown>>, code: ErrorCode): boolean => entries.some((p) => p.refused === code);

test('codes marked audited are found in the audit chain when provoked', async () => {
  const env = await setup();
  try {
    const { mem } = env;
    const logged: Array<[ErrorCode, () => Promise<unknown>]> = [
      ['AUTHORITY_EXCEEDS_PRINCIPAL', () => mem.registerPrincipal({ tenant: T, id: 'too-high', kind: 'agent', domain: 'x', maxAuthority: 'system_policy' })],
      ['AUTHORITY_EXCEEDS_PRINCIPAL', () => mem.write({ tenant: T, scope: 's', principal: P.agent, content: 'claims too much', authority: 'user_confirmed' })],
      ['UNKNOWN_PRINCIPAL', () => mem.write({ tenant: T, scope: 's', principal: 'nobody', content: 'x' })],
      ['UNKNOWN_PRINCIPAL', () => mem.derive({ tenant: T, from: [], scope: 's', transform: 'summarize', principal: 'nobody', content: 'x' })],
      ['UNKNOWN_PRINCIPAL', () => mem.delete({ tenant: T, id: 'mem_x', principal: 'nobody' })],
      ['UNKNOWN_PRINCIPAL', () => mem.confirm({ tenant: T, principal: 'nobody', action: { type: 'pay', args: {} } })],
      ['CONFIRMATION_REQUIRES_USER', () => mem.confirm({ tenant: T, principal: P.agent, action: { type: 'pay', args: {} } })],
      ['CORROBORATOR_BELOW_FLOOR', () => mem.corroborate({ tenant: T, recordId: 'mem_x', principal: P.agent, evidence: 'principal:agent' })],
    ];
    for (const [code, fn] of logged) {
      assert.notEqual(ERROR_TABLE[code].audited, 'never', code);
      assert.ok(refusedWith(await provoke(mem, code, fn), code), `${code} was not logged`);
    }
    for (const c of ERROR_CODES)
      if (ERROR_TABLE[c].audited !== 'never')
        assert.ok(
          logged.some(([code]) => code === c),
          `${c}: no case provokes it`,
        );
  } finally {
    await env.dispose();
  }
});

test('codes marked never (and the unlogged cases of partly) leave the audit chain untouched', async () => {
  const env = await setup();
  try {
    const { mem } = env;
    const w = await mem.write({ tenant: T, scope: 's', principal: P.browser, content: 'to delete' });
    await mem.delete({ tenant: T, id: w.record.id });
    await mem.get({ tenant: T, id: w.record.id, session: 'sess-agent', requester: P.agent });
    const unlogged: Array<[ErrorCode, () => Promise<unknown>]> = [
      ['PRINCIPAL_EXISTS', () => mem.registerPrincipal({ tenant: T, id: P.agent, kind: 'agent', domain: 'elsewhere' })],
      ['RECORD_NOT_FOUND', () => mem.get({ tenant: T, id: 'mem_missing' })],
      ['RECORD_DELETED', () => mem.corroborate({ tenant: T, recordId: w.record.id, principal: P.bank, evidence: 'https://bank.example/x' })],
      ['SESSION_FORBIDDEN', () => mem.get({ tenant: T, id: w.record.id, session: 'sess-agent', requester: P.browser })],
      ['INVALID_ARGUMENT', () => mem.confirm({ tenant: T, principal: P.alice, action: { type: 'pay' } })],
      ['CONFIRMATION_USABLE_BY_EXTERNAL', () => mem.confirm({ tenant: T, principal: P.alice, action: { type: 'pay', args: {} }, usableBy: [P.mallory] })],
      ['CONFIRMATION_USABLE_BY_TOOL', () => mem.confirm({ tenant: T, principal: P.alice, action: { type: 'pay', args: {} }, usableBy: [P.browser] })],
      ['DECISION_NOT_FOUND', () => mem.replay({ tenant: T, decisionId: 'dec_missing' })],
      ['UNKNOWN_PRINCIPAL', () => mem.evaluate({ tenant: T, action: { type: 'pay', args: {} }, userTurn: { principal: 'nobody', text: 'pay' } })],
    ];
    for (const [code, fn] of unlogged) assert.deepEqual(await provoke(mem, code, fn), [], `${code} wrote to the chain`);
  } finally {
    await env.dispose();
  }
});

test('import: a database that fails mid-import stops the import (DATABASE_UNAVAILABLE), it does not skip every item as refused', async () => {
  const env = await setup();
  try {
    const { mem } = env;
    const file = join(ROOT, 'examples', 'import', 'memory.jsonl');
    // the store goes away under the import: every write fails as the driver reports it
    (mem as { write: Memory['write'] }).write = async () => {
      throw new MemauthError('DATABASE_UNAVAILABLE', 'cannot open or write memauth.db (SQLITE_IOERR)', {});
    };
    await expectCode(() => importMemories(mem, { tenant: T, scope: 'imported', format: 'mcp-memory', file }), 'DATABASE_UNAVAILABLE');
  } finally {
    await env.dispose();
  }
});
