/**
 * Policy files people can write: `"extends": "default"`, every validation problem at once with
 * its JSON path, the notice on a decision for an action type the policy does not list (still
 * `high`; replay and audit verification unchanged), and `memauth policy check|show` / `init` with
 * a bad policy on the BUILT CLI.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openMemory } from '../src/api/open.js';
import { MemauthError } from '../src/core/errors.js';
import { DEFAULT_POLICY, loadPolicy, riskTier, sourceAuthority } from '../src/core/policy.js';
import { CLI, cleanEnv, tempDir } from './server-helpers.js';

const cli = (cwd: string, args: readonly string[]) => spawnSync(process.execPath, [CLI, ...args], { cwd, env: cleanEnv(), input: '', encoding: 'utf8', timeout: 60_000 });

test('"extends": "default" adds to the default: actions replaced or added, sources first, modes merged', () => {
  const p = loadPolicy({
    extends: 'default',
    name: 'acme',
    actions: { lookup: { tier: 'read_only' }, pay: { tier: 'high', arguments: ['to', 'amount'] } },
    sources: [{ match: 'https://crm.acme.example/*', authority: 'trusted_tool_verified', principals: ['crm'] }],
    modes: { high: 'observe' },
  });
  const d = p.document;
  assert.equal(d.name, 'acme');
  assert.deepEqual(d.modes, { read_only: 'enforce', low: 'enforce', high: 'observe' });
  assert.equal(d.actions.lookup?.tier, 'read_only');
  assert.deepEqual(d.actions.pay?.arguments, ['to', 'amount']);
  assert.equal(d.actions.pay?.argumentTypes, undefined, 'a rule of the same name is replaced whole');
  assert.equal(d.actions.send_email?.tier, 'high', 'the default rules stay');
  assert.equal(d.sources.length, DEFAULT_POLICY.sources.length + 1);
  const crm = { tenant: 't', id: 'crm', kind: 'tool' as const, maxAuthority: 'trusted_tool_verified' as const, domain: 'crm', createdAt: '' };
  assert.equal(sourceAuthority(p, 'https://crm.acme.example/x', crm), 'trusted_tool_verified', "the file's rule is matched before the default's https://*");
  assert.ok(!('extends' in d), 'the effective document has no extends');
  // the same policy written out in full has the same version
  assert.equal(loadPolicy(d).version, p.version);
  assert.equal(loadPolicy({ extends: 'default' }).version, loadPolicy(DEFAULT_POLICY).version);
});

test('every problem is reported at once, each with its JSON path', () => {
  const bad = { extends: 'default', modes: { high: 'obsrve' }, actions: { pay: { tier: 'hgh' }, 'send mail': { tier: 'x' } }, sources: [{ match: 'crm:*', authority: 'trusted' }], bogus: 1 };
  let err: MemauthError | undefined;
  try {
    loadPolicy(bad);
  } catch (e) {
    err = e as MemauthError;
  }
  assert.ok(err instanceof MemauthError);
  assert.equal(err.code, 'POLICY_INVALID');
  const paths = (err.details.issues as Array<{ path: string }>).map((i) => i.path).sort();
  assert.deepEqual(paths, ['$', '$.actions.pay.tier', '$.actions["send mail"].tier', '$.modes.high', '$.sources[0].authority']);
  for (const p of paths) assert.ok(err.message.includes(`${p}: `), `the message names ${p}: ${err.message}`);
  assert.throws(
    () => loadPolicy({ extends: 'strict' }),
    (e: MemauthError) => e.code === 'POLICY_INVALID' && (e.details.issues as Array<{ path: string }>)[0]?.path === '$.extends',
  );
  assert.throws(
    () => loadPolicy({ name: 'half' }),
    (e: MemauthError) => /"extends": "default"/.test(e.message),
  );
});

test('an action type the policy does not list is high, and the decision says so; replay and verify still pass', async () => {
  const mem = await openMemory({ path: ':memory:' });
  try {
    const tenant = 'acme';
    assert.equal(riskTier(mem.policy, { type: 'paymnet', args: {} }), 'high');
    const d = await mem.authorize({ tenant, action: { type: 'paymnet', args: { to: 'ACCT-1' } } });
    assert.equal(d.tier, 'high');
    assert.equal(d.notice, 'action type "paymnet" is not in the policy; treated as high');
    const listed = await mem.authorize({ tenant, action: { type: 'pay', args: { to: 'ACCT-1' } } });
    assert.equal(listed.notice, undefined);
    const dry = await mem.evaluate({ tenant, action: { type: 'paymnet', args: {} } });
    assert.match(dry.notice ?? '', /not in the policy/);
    assert.equal((await mem.getDecision({ tenant, decisionId: d.id })).notice, d.notice, 'stored with the decision');
    assert.equal((await mem.replay({ tenant, decisionId: d.id })).matches, true);
    assert.equal((await mem.verifyAudit({ tenant })).ok, true);
  } finally {
    await mem.close();
  }
});

test('memauth policy check / show, and init with a bad policy leaves no file behind', () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'good.json'), JSON.stringify({ extends: 'default', name: 'acme', modes: { high: 'observe' } }));
  writeFileSync(join(dir, 'bad.json'), JSON.stringify({ extends: 'default', modes: { high: 'obsrve' }, actions: { pay: { tier: 'hgh' } } }));
  const good = cli(dir, ['policy', 'check', 'good.json', '--json']);
  assert.equal(good.status, 0, good.stderr);
  assert.equal(JSON.parse(good.stdout).name, 'acme');
  const bad = cli(dir, ['policy', 'check', 'bad.json']);
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /^bad\.json: \$\.actions\.pay\.tier: /m);
  assert.match(bad.stderr, /^bad\.json: \$\.modes\.high: /m);
  assert.match(bad.stderr, /error POLICY_INVALID: .*2 problems/);
  const badJson = cli(dir, ['policy', 'check', 'bad.json', '--json']);
  assert.equal(JSON.parse(badJson.stdout).details.issues.length, 2);
  const shown = cli(dir, ['--policy', 'good.json', 'policy', 'show', '--json']);
  assert.equal(shown.status, 0, shown.stderr);
  const doc = JSON.parse(shown.stdout) as { version: string; document: { modes: { high: string }; actions: Record<string, unknown> } };
  assert.equal(doc.document.modes.high, 'observe');
  assert.ok('send_email' in doc.document.actions);
  const text = cli(dir, ['policy', 'show']);
  assert.equal(text.status, 0, text.stderr);
  assert.match(text.stdout, /^policy memauth-default [0-9a-f]{64}$/m);
  assert.match(text.stdout, /unlisted action {2}high \(mode enforce\)/);
  const init = cli(dir, ['--db', 'm.db', '--policy', 'bad.json', 'init']);
  assert.equal(init.status, 2);
  assert.match(init.stderr, /POLICY_INVALID/);
  assert.deepEqual(readdirSync(dir).sort(), ['bad.json', 'good.json'], 'no database, key or checkpoint file');
});
