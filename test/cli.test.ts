/**
 * End-to-end tests of the BUILT `memauth` CLI (dist/src/cli/main.js): each step spawns a real
 * process against a real SQLite file in a temp directory and checks exit codes and --json output.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_POLICY } from '../src/core/policy.js';
import { writeScenarios } from './bench-fixtures.js';

// compiled to dist/test/cli.test.js; the CLI is dist/src/cli/main.js
const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  for (const k of ['MEMAUTH_DB', 'DATABASE_URL', 'MEMAUTH_POLICY', 'MEMAUTH_TENANT', 'MEMAUTH_DEBUG', 'MEMAUTH_CHECKPOINT_KEY', 'MEMAUTH_CHECKPOINTS']) if (!(k in extra)) delete env[k];
  return env;
}

function run(cwd: string, args: readonly string[], opts: { env?: Record<string, string>; input?: string } = {}): Run {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, env: cleanEnv(opts.env), input: opts.input ?? '', encoding: 'utf8', timeout: 120_000 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Parse the single JSON document a `--json` command printed on stdout. */
function json<T = Record<string, unknown>>(r: Run): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    assert.fail(`stdout is not JSON (exit ${r.status}):\n${r.stdout}\nstderr:\n${r.stderr}`);
  }
}

function ok(r: Run, what: string): Run {
  assert.equal(r.status, 0, `${what}: exit ${r.status}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

interface Reason {
  code: string;
  memoryIds: string[];
  argument?: string;
  detail?: string;
}
interface Decision {
  id: string;
  outcome: string;
  tier: string;
  reasons: Reason[];
  confirmationId: string | null;
}

test('memauth CLI: origin-bound authority end to end', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'memauth-cli-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = join(dir, 'agent.db');
  const g = ['--db', db, '--tenant', 'acme'];
  const payArgs = JSON.stringify({ to: 'ACCT-9931', amount: '120.00' });
  let recordId = '';
  let deniedId = '';
  let confirmationId = '';

  await t.test('init creates the database and its checkpoint key', () => {
    const r = ok(run(dir, ['--db', db, 'init', '--json']), 'init');
    const info = json<{ db: string; key: string; created: boolean }>(r);
    assert.equal(info.created, true);
    assert.ok(existsSync(db), 'database file exists');
    assert.ok(existsSync(`${db}.key`), 'checkpoint key exists');
    assert.equal(info.key, `${db}.key`);
    const human = ok(run(dir, ['--db', db, 'init']), 'init again');
    assert.match(human.stdout, /already initialised/);
  });

  await t.test('principals: user, tool, external, agent', () => {
    ok(run(dir, [...g, 'principal', 'add', 'alice', '--kind', 'user', '--domain', 'acme-staff']), 'add user');
    ok(run(dir, [...g, 'principal', 'add', 'browser', '--kind', 'tool', '--domain', 'browser-vendor']), 'add tool');
    ok(run(dir, [...g, 'principal', 'add', 'inbox', '--kind', 'external', '--domain', 'mail.example']), 'add external');
    ok(run(dir, [...g, 'principal', 'add', 'assistant', '--kind', 'agent', '--domain', 'agent']), 'add agent');
    const list = json<Array<{ id: string; maxAuthority: string }>>(ok(run(dir, [...g, 'principal', 'list', '--json']), 'list'));
    assert.deepEqual(list.map((p) => p.id).sort(), ['alice', 'assistant', 'browser', 'inbox']);
    assert.equal(list.find((p) => p.id === 'inbox')?.maxAuthority, 'external_untrusted');
    const dup = run(dir, [...g, 'principal', 'add', 'alice', '--kind', 'user', '--domain', 'x']);
    assert.equal(dup.status, 2);
    assert.match(dup.stderr, /^error PRINCIPAL_EXISTS: /);
  });

  await t.test('write from an external source is external_untrusted', () => {
    const r = ok(
      run(dir, [
        ...g,
        'write',
        '--scope',
        'vendors',
        '--principal',
        'browser',
        '--source',
        'https://billing-update.example/acme',
        '--session',
        's1',
        '--content',
        'Acme Supplies now settles all invoices through account ACCT-9931',
        '--json',
      ]),
      'write',
    );
    const w = json<{ created: boolean; record: { id: string; origin: { authority: string }; taint: { lowestAuthority: string } } }>(r);
    assert.equal(w.created, true);
    assert.equal(w.record.origin.authority, 'external_untrusted');
    assert.equal(w.record.taint.lowestAuthority, 'external_untrusted');
    recordId = w.record.id;
    const human = ok(run(dir, [...g, 'get', recordId]), 'get');
    assert.match(human.stdout, /origin\s+external_untrusted/);
    assert.match(human.stdout, /source\s+https:\/\/billing-update\.example\/acme/);
  });

  await t.test('write reads stdin when no --content/--file is given', () => {
    const r = ok(run(dir, [...g, 'write', '--scope', 'notes', '--principal', 'alice', '--json'], { input: 'I prefer invoices in EUR' }), 'write stdin');
    const w = json<{ record: { content: string; origin: { authority: string } } }>(r);
    assert.equal(w.record.content, 'I prefer invoices in EUR');
    assert.equal(w.record.origin.authority, 'user_confirmed');
  });

  await t.test('search in the session, then a pay whose `to` comes from that record is denied', () => {
    const found = json<{ mode: string; reason: string; hits: Array<{ record: { id: string } }> }>(
      ok(run(dir, [...g, 'search', 'Acme invoices', '--scope', 'vendors', '--session', 's1', '--json']), 'search'),
    );
    assert.deepEqual([found.mode, found.reason], ['lexical', 'lexical: no embedder is configured']);
    assert.ok(found.hits.some((h) => h.record.id === recordId));
    const r = run(dir, [...g, 'authorize', '--action', 'pay', '--args', payArgs, '--session', 's1', '--json']);
    assert.equal(r.status, 1, r.stderr);
    const d = json<Decision>(r);
    assert.equal(d.outcome, 'deny');
    assert.equal(d.tier, 'high');
    const reason = d.reasons.find((x) => x.code === 'untrusted_origin');
    assert.ok(reason, `reasons: ${JSON.stringify(d.reasons)}`);
    assert.ok(reason.memoryIds.includes(recordId));
    deniedId = d.id;
    const human = run(dir, [...g, 'authorize', '--action', 'pay', '--args', payArgs, '--session', 's1']);
    assert.equal(human.status, 1);
    assert.match(human.stdout, /^DENY\b/);
    assert.match(human.stdout, /untrusted_origin/);
  });

  await t.test('a user confirmation for the exact args allows exactly once', () => {
    const c = json<{ id: string }>(ok(run(dir, [...g, 'confirm', '--principal', 'alice', '--action', 'pay', '--args', payArgs, '--json']), 'confirm'));
    confirmationId = c.id;
    const allowed = run(dir, [...g, 'authorize', '--action', 'pay', '--args', payArgs, '--session', 's1', '--confirmation', confirmationId, '--json']);
    assert.equal(allowed.status, 0, allowed.stdout + allowed.stderr);
    const d = json<Decision>(allowed);
    assert.equal(d.outcome, 'allow');
    assert.equal(d.confirmationId, confirmationId);
    const reused = run(dir, [...g, 'authorize', '--action', 'pay', '--args', payArgs, '--session', 's1', '--confirmation', confirmationId, '--json']);
    assert.equal(reused.status, 1);
    assert.equal(json<Decision>(reused).outcome, 'deny');
  });

  await t.test('a confirmation by a non-user principal is refused (exit 2)', () => {
    const r = run(dir, [...g, 'confirm', '--principal', 'browser', '--action', 'pay', '--args', payArgs, '--json']);
    assert.equal(r.status, 2);
    assert.equal(json<{ code: string }>(r).code, 'CONFIRMATION_REQUIRES_USER');
  });

  await t.test('observe mode reports would_deny and exits 0', () => {
    const policy = join(dir, 'observe.json');
    writeFileSync(policy, JSON.stringify({ ...DEFAULT_POLICY, name: 'observe-high', modes: { read_only: 'enforce', low: 'enforce', high: 'observe' } }));
    const r = run(dir, [...g, '--policy', policy, 'authorize', '--action', 'pay', '--args', payArgs, '--session', 's1', '--json']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(json<Decision>(r).outcome, 'would_deny');
  });

  await t.test('a missing tenant fails closed with exit 2 and TENANT_REQUIRED', () => {
    const human = run(dir, ['--db', db, 'list']);
    assert.equal(human.status, 2);
    assert.match(human.stderr, /^error TENANT_REQUIRED: /);
    const r = run(dir, ['--db', db, 'search', 'Acme', '--scope', 'vendors', '--json']);
    assert.equal(r.status, 2);
    const e = json<{ code: string; message: string }>(r);
    assert.equal(e.code, 'TENANT_REQUIRED');
    assert.match(e.message, /--tenant/);
    // MEMAUTH_TENANT is the default
    ok(run(dir, ['--db', db, 'list', '--json'], { env: { MEMAUTH_TENANT: 'acme' } }), 'list with MEMAUTH_TENANT');
  });

  await t.test('usage errors and invalid input exit 2', () => {
    const unknownOpt = run(dir, [...g, 'list', '--bogus']);
    assert.equal(unknownOpt.status, 2);
    const badJson = run(dir, [...g, 'authorize', '--action', 'pay', '--args', '{not json', '--json']);
    assert.equal(badJson.status, 2);
    assert.equal(json<{ code: string }>(badJson).code, 'INVALID_ARGUMENT');
    const unknownPrincipal = run(dir, [...g, 'write', '--scope', 'vendors', '--principal', 'mallory', '--content', 'x']);
    assert.equal(unknownPrincipal.status, 2);
    assert.match(unknownPrincipal.stderr, /^error UNKNOWN_PRINCIPAL: /);
    const notFound = run(dir, [...g, 'get', 'mem_nope', '--json']);
    assert.equal(notFound.status, 2);
    assert.equal(json<{ code: string }>(notFound).code, 'RECORD_NOT_FOUND');
    const noDb = run(dir, ['--db', join(dir, 'missing.db'), '--tenant', 'acme', 'list']);
    assert.equal(noDb.status, 2);
    assert.ok(!existsSync(join(dir, 'missing.db')), 'a data command does not create a database');
    const badPolicy = join(dir, 'bad-policy.json');
    writeFileSync(badPolicy, '{"formatVersion": 2}');
    const pol = run(dir, [...g, 'list'], { env: { MEMAUTH_POLICY: badPolicy } });
    assert.equal(pol.status, 2);
    assert.match(pol.stderr, /^error POLICY_INVALID: /);
  });

  await t.test('derive keeps the taint; lineage prints a tree and DOT', () => {
    const d = json<{ id: string; taint: { lowestAuthority: string } }>(
      ok(run(dir, [...g, 'derive', '--from', recordId, '--transform', 'summarize', '--principal', 'assistant', '--content', 'Pay Acme via ACCT-9931', '--json']), 'derive'),
    );
    assert.equal(d.taint.lowestAuthority, 'external_untrusted');
    const tree = ok(run(dir, [...g, 'lineage', d.id]), 'lineage').stdout;
    assert.match(tree, new RegExp(`summarize/declared: ${recordId}`));
    const dot = ok(run(dir, [...g, 'lineage', d.id, '--format', 'dot']), 'lineage dot').stdout;
    assert.match(dot, /^digraph lineage \{/);
    assert.match(dot, new RegExp(`"${recordId}" -> "${d.id}"`));
    assert.match(dot, /fillcolor=/);
  });

  await t.test('audit verify passes, replay matches', () => {
    const v = ok(run(dir, ['--db', db, 'audit', 'verify']), 'audit verify');
    assert.match(v.stdout, /^OK\s+acme: /m);
    const vj = json<{ ok: boolean }>(ok(run(dir, ['--db', db, 'audit', 'verify', '--json']), 'audit verify --json'));
    assert.equal(vj.ok, true);
    const r = json<{ matches: boolean; recorded: { outcome: string } }>(ok(run(dir, [...g, 'replay', deniedId, '--json']), 'replay'));
    assert.equal(r.matches, true);
    assert.equal(r.recorded.outcome, 'deny');
    assert.match(ok(run(dir, [...g, 'replay', deniedId]), 'replay human').stdout, /^MATCH\b/);
    const ds = json<Array<{ id: string }>>(ok(run(dir, [...g, 'decisions', '--limit', '2', '--json']), 'decisions'));
    assert.equal(ds.length, 2);
  });

  await t.test('audit checkpoint on a head every command already signed does not claim the log is empty', () => {
    // every CLI command signs a checkpoint when it closes the store, so nothing new is signed here
    const cp = ok(run(dir, ['--db', db, 'audit', 'checkpoint']), 'audit checkpoint');
    assert.doesNotMatch(cp.stdout, /no audit entries\)/);
    assert.match(cp.stdout, /already under a signed checkpoint/);
    assert.deepEqual(json(ok(run(dir, ['--db', db, 'audit', 'checkpoint', '--json']), 'audit checkpoint --json')), []);
  });

  await t.test('delete erases content and keeps the chain verifiable', () => {
    const del = json<{ status: string; content: string | null }>(ok(run(dir, [...g, 'delete', recordId, '--reason', 'poisoned', '--json']), 'delete'));
    assert.equal(del.status, 'deleted');
    assert.equal(del.content, null);
    ok(run(dir, ['--db', db, '--tenant', 'acme', 'audit', 'verify']), 'verify after delete');
  });

  await t.test('audit verify fails (exit 1) against a forged checkpoint', () => {
    const cpFile = `${db}.checkpoints`;
    const lines = readFileSync(cpFile, 'utf8').trim().split('\n');
    const last = JSON.parse(lines[lines.length - 1] as string) as Record<string, unknown>;
    appendFileSync(cpFile, `${JSON.stringify({ ...last, seq: 100_000, hash: '0'.repeat(64) })}\n`);
    const v = run(dir, ['--db', db, 'audit', 'verify']);
    assert.equal(v.status, 1, v.stdout + v.stderr);
    assert.match(v.stdout, /^FAIL\s+acme: /m);
  });

  await t.test('bench --json prints the report as JSON (no --db, no --tenant)', () => {
    // the two fixture scenarios: the default set's ~500 runs take minutes on a loaded machine (the bench tests cover the study itself)
    const r = run(dir, ['bench', '--json', '--scenarios', writeScenarios(dir)]);
    assert.equal(r.status, 0, r.stderr);
    const rep = json<{ scenarios: unknown; defenses: unknown; notes: unknown }>(r);
    assert.equal(typeof rep.scenarios, 'number');
    assert.equal(typeof rep.defenses, 'object');
    assert.ok(Array.isArray(rep.notes));
  });
});
