/**
 * An external principal learns the ids of records it wrote only (docs/design.md § What the model
 * sees): when a user's version replaced the external's record, neither the refusal of a supersede
 * (RECORD_SUPERSEDED's `current`) nor a supersede's result, nor a decision or dry run that depends
 * on the replaced record, over HTTP or MCP, names the user's version — another principal's record
 * answers like a missing one. The user still sees every id. Against a real `memauth serve` process.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type ServerProcess, addPrincipal, client, expectError, startServerProcess, tempDir } from './server-helpers.js';

let srv: ServerProcess;
const tok = { alice: '', mallory: '' };
let own = '';
let users = '';

before(async () => {
  srv = await startServerProcess({ cwd: tempDir(), args: ['--log-level', 'warn'] });
  const admin = srv.adminToken as string;
  tok.alice = await addPrincipal(srv.url, admin, { tenant: 'acme', id: 'alice', kind: 'user', domain: 'acme-staff' });
  tok.mallory = await addPrincipal(srv.url, admin, { tenant: 'acme', id: 'mallory', kind: 'external', domain: 'mallory.example' });
  const w = await client(srv.url, tok.mallory).post('/v1/memories', { scope: 'pay', content: 'Invoices go to ACCT-MAL-1' });
  assert.equal(w.status, 201, w.text);
  own = w.body.record.id;
  const u = await client(srv.url, tok.alice).post(`/v1/memories/${own}/versions`, { content: 'Invoices go to ACCT-ALICE-7', reason: 'corrected' });
  assert.equal(u.status, 201, u.text);
  users = u.body.record.id;
});

after(async () => {
  assert.equal(await srv.stop('SIGTERM'), 0);
});

test("HTTP: the external's refused supersede, its decisions and dry runs do not name the user's version", async () => {
  const s = await client(srv.url, tok.mallory).post(`/v1/memories/${own}/versions`, { content: 'Invoices go to ACCT-MAL-2', reason: 'again' });
  expectError(s, 409, 'RECORD_SUPERSEDED');
  assert.deepEqual(s.body.details.current, []);
  assert.ok(!s.text.includes(users), s.text);
  const action = { type: 'pay', args: { to: 'ACCT-MAL-1', amount: '10' } };
  for (const path of ['/v1/decisions/evaluate', '/v1/decisions']) {
    const d = await client(srv.url, tok.mallory).post(path, { action, dependsOn: [own] });
    assert.ok(d.status === 200 || d.status === 201, d.text);
    assert.ok(!d.text.includes(users), `${path}: ${d.text}`);
    assert.ok(
      d.body.reasons.some((r: { code: string }) => r.code === 'conflict'),
      d.text,
    );
    if (path === '/v1/decisions') {
      const g = await client(srv.url, tok.mallory).get(`/v1/decisions/${d.body.id}`);
      assert.equal(g.status, 200, g.text);
      assert.ok(!g.text.includes(users), g.text);
    }
  }
  const a = await client(srv.url, tok.alice).post(`/v1/memories/${own}/versions`, { content: 'x', reason: 'y' });
  expectError(a, 409, 'RECORD_SUPERSEDED');
  assert.deepEqual(a.body.details.current, [users], 'the user sees the current version');
});

test("MCP: supersede_memory and check_action do not name the user's version to the external", async () => {
  const c = new Client({ name: 'memauth-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${tok.mallory}` } } }));
  try {
    const s = await c.callTool({ name: 'supersede_memory', arguments: { id: own, content: 'Invoices go to ACCT-MAL-3', reason: 'again' } });
    assert.equal(s.isError, true);
    assert.match(JSON.stringify(s), /RECORD_SUPERSEDED/);
    assert.ok(!JSON.stringify(s).includes(users), JSON.stringify(s));
    const e = await c.callTool({ name: 'check_action', arguments: { action: { type: 'pay', args: { to: 'ACCT-MAL-1', amount: '10' } } } });
    assert.ok(!JSON.stringify(e).includes(users), JSON.stringify(e));
  } finally {
    await c.close();
  }
});
