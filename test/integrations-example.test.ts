/**
 * The runnable AI SDK example (examples/ai-sdk-agent) with its scripted model: the poisoned page's
 * payment is blocked, the user-confirmed one goes through, once. Runs it as a user would.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { it } from 'node:test';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

it('examples/ai-sdk-agent shows a poisoned page blocked and a user-confirmed payment allowed', () => {
  const env = { ...process.env };
  delete env.OPENAI_BASE_URL;
  const r = spawnSync(process.execPath, [path.join(ROOT, 'examples/ai-sdk-agent/agent.mjs')], { cwd: ROOT, env, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  const out = r.stdout;
  assert.match(out, /model calls pay \{"to":"ACCT-EVIL-9931".*\n\s+gate: DENY \(tier high\)/);
  assert.match(out, /untrusted_origin\s+argument "to" <- mem_/);
  assert.match(out, /model calls pay \{"to":"ACCT-1234","amount":1200,"invoice":"INV-7"\}\n\s+gate: ALLOW \(tier high\) with the user's confirmation cnf_/);
  assert.match(out, /payments made: 1 \[1200 to ACCT-1234\]/);
  assert.match(out, /audit chain verified: ok; decisions replayed from the log to the same outcome: 2\/2/);
});
