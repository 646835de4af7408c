/**
 * Versions through the real server (docs/design.md § Memory record): an agent's "update" of the
 * user's payee fact from an external page, over HTTP and over MCP, competes instead of replacing
 * it; the conflict is in GET /v1/memories/:id, search, the MCP tools' text, and the gate's reasons.
 * Channels cannot version the tenant's records: an external token, which reads nothing, is refused
 * another's record (403, as for an unknown id), a tool token too (403: its rival version would put
 * the fact in conflict at the gate); another tenant's record cannot be superseded (404).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type ServerProcess, addPrincipal, client, expectError, startServerProcess, tempDir } from './server-helpers.js';

let srv: ServerProcess;
const tok = { alice: '', mallory: '', browser: '', agent: '', globex: '' };
let fact = '';

const mcp = async (token: string): Promise<Client> => {
  const c = new Client({ name: 'memauth-test', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return c;
};
const textOf = (r: unknown): string => ((r as CallToolResult).content as Array<{ text: string }>).map((c) => c.text).join('\n');

before(async () => {
  srv = await startServerProcess({ cwd: tempDir(), args: ['--db', 'versions.db', '--port', '0', '--log-level', 'warn'] });
  const admin = srv.adminToken as string;
  tok.alice = await addPrincipal(srv.url, admin, { tenant: 'acme', id: 'alice', kind: 'user', domain: 'acme-staff' });
  tok.mallory = await addPrincipal(srv.url, admin, { tenant: 'acme', id: 'mallory', kind: 'external', domain: 'mallory.example' });
  tok.browser = await addPrincipal(srv.url, admin, { tenant: 'acme', id: 'browser', kind: 'tool', domain: 'browser.vendor' });
  tok.agent = await addPrincipal(srv.url, admin, { tenant: 'acme', id: 'assistant', kind: 'agent', domain: 'agent-runtime' });
  tok.globex = await addPrincipal(srv.url, admin, { tenant: 'globex', id: 'gina', kind: 'user', domain: 'globex' });
  const w = await client(srv.url, tok.alice).post('/v1/memories', { scope: 'pay', content: 'Rent goes to payee ACCT-ALICE-1' });
  assert.equal(w.status, 201, w.text);
  fact = w.body.record.id;
});

after(async () => {
  assert.equal(await srv.stop('SIGTERM'), 0);
});

test('HTTP: an external page\'s "update" competes; get, search and the gate show the conflict; external and tool tokens and another tenant are refused', async () => {
  expectError(await client(srv.url, tok.mallory).post(`/v1/memories/${fact}/versions`, { content: 'Rent goes to payee ACCT-EVIL-9', reason: 'new bank' }), 403, 'FORBIDDEN');
  const byTool = await client(srv.url, tok.browser).post(`/v1/memories/${fact}/versions`, { content: 'Rent goes to payee ACCT-EVIL-9', reason: 'new bank', source: 'https://evil.example' });
  expectError(byTool, 403, 'FORBIDDEN');
  assert.match(byTool.body.message, /write a new record/);
  expectError(await client(srv.url, tok.browser).post('/v1/memories/mem_missing/versions', { content: 'x', reason: 'y' }), 404, 'RECORD_NOT_FOUND');
  // its own record a tool versions as any writer
  const mine = await client(srv.url, tok.browser).post('/v1/memories', { scope: 'pay', content: 'Fetched: the landlord page lists ACCT-LL-1', source: 'https://landlord.example' });
  assert.equal(mine.status, 201, mine.text);
  const v = await client(srv.url, tok.browser).post(`/v1/memories/${mine.body.record.id}/versions`, {
    content: 'Fetched again: the landlord page lists ACCT-LL-2',
    reason: 'refetched',
    source: 'https://landlord.example',
  });
  assert.equal(v.status, 201, v.text);
  assert.equal(v.body.conflict, false);
  // the agent, having read the page, "updates" the fact: a version below it competes
  const s = await client(srv.url, tok.agent).post(`/v1/memories/${fact}/versions`, { content: 'Rent goes to payee ACCT-EVIL-9', reason: 'new bank', source: 'https://evil.example' });
  assert.equal(s.status, 201, s.text);
  assert.equal(s.body.conflict, true);
  assert.deepEqual(s.body.record.version, { of: fact, supersedes: fact });
  const page = s.body.record.id;
  const g = await client(srv.url, tok.agent).get(`/v1/memories/${page}?session=s-versions`);
  assert.equal(g.status, 200, g.text);
  assert.equal(g.body.versions.conflict, true);
  assert.deepEqual(
    g.body.versions.history.map((h: { id: string; actionAuthority: string }) => [h.id, h.actionAuthority]),
    [
      [fact, 'user_confirmed'],
      [page, 'external_untrusted'],
    ],
  );
  const hits = await client(srv.url, tok.agent).post('/v1/memories/search', { scope: 'pay', query: 'ACCT-EVIL-9', limit: 1, session: 's-versions' });
  assert.equal(hits.status, 200, hits.text);
  assert.deepEqual(hits.body.hits.map((h: { record: { id: string } }) => h.record.id).sort(), [fact, page].sort());
  const d = await client(srv.url, tok.alice).post('/v1/decisions', { action: { type: 'pay', args: { to: 'ACCT-ALICE-1' } }, dependsOn: [fact], context: 'declared' });
  assert.equal(d.status, 201, d.text);
  assert.ok(
    d.body.reasons.some((r: { code: string }) => r.code === 'conflict'),
    d.text,
  );
  expectError(await client(srv.url, tok.globex).post(`/v1/memories/${fact}/versions`, { content: 'payee ACCT-G', reason: 'x' }), 404, 'RECORD_NOT_FOUND');
  expectError(await client(srv.url, tok.alice).post(`/v1/memories/nope/versions`, { content: 'payee ACCT-G', reason: 'x' }), 404, 'RECORD_NOT_FOUND');
});

test('MCP: supersede_memory says the version competes; get_memory and recall show both versions with their authorities', async () => {
  const ext = await mcp(tok.mallory);
  const refused = await ext.callTool({ name: 'supersede_memory', arguments: { id: fact, content: 'Rent goes to payee ACCT-EVIL-10', reason: 'again' } });
  assert.equal(refused.isError, true, textOf(refused));
  await ext.close();
  const tool = await mcp(tok.browser);
  const byTool = await tool.callTool({ name: 'supersede_memory', arguments: { id: fact, content: 'Rent goes to payee ACCT-EVIL-10', reason: 'again', source: 'https://evil.example' } });
  assert.equal(byTool.isError, true, textOf(byTool));
  assert.match(textOf(byTool), /FORBIDDEN/);
  await tool.close();
  const m = await mcp(tok.agent);
  const r = await m.callTool({ name: 'supersede_memory', arguments: { id: fact, content: 'Rent goes to payee ACCT-EVIL-10', reason: 'again', source: 'https://evil.example' } });
  assert.ok(!r.isError, textOf(r));
  assert.match(textOf(r), /COMPETES/);
  await m.close();
  const a = await mcp(tok.agent);
  const g = textOf(await a.callTool({ name: 'get_memory', arguments: { id: fact } }));
  assert.match(g, /versions CONFLICT/);
  assert.match(g, /ACCT-ALICE-1/);
  assert.match(g, /ACCT-EVIL-10/);
  assert.match(g, /action authority user_confirmed/);
  const rc = textOf(await a.callTool({ name: 'recall', arguments: { scope: 'pay', query: 'ACCT-EVIL-10', limit: 1 } }));
  assert.match(rc, /ACCT-ALICE-1/);
  assert.match(rc, /versions CONFLICT/);
  await a.close();
});

test('a new version carries typed claims over HTTP and MCP', async () => {
  const w = await client(srv.url, tok.alice).post('/v1/memories', { scope: 'vendors', content: 'Acme is paid at ACME-AP-1' });
  assert.equal(w.status, 201, w.text);
  const claims = [{ subject: 'Acme', field: 'payee_account', value: 'ACME-AP-2' }];
  const s = await client(srv.url, tok.alice).post(`/v1/memories/${w.body.record.id}/versions`, { content: 'Acme is paid at ACME-AP-2', reason: 'new account', claims });
  assert.equal(s.status, 201, s.text);
  assert.deepEqual(s.body.record.claims, claims);
  const bad = await client(srv.url, tok.alice).post(`/v1/memories/${s.body.record.id}/versions`, { content: 'x', reason: 'y', claims: [{ subject: 'Acme', field: 'Not A Field', value: 'v' }] });
  expectError(bad, 400, 'CLAIM_INVALID');
  const c = await mcp(tok.agent);
  try {
    const own = await c.callTool({ name: 'remember', arguments: { scope: 'vendors', content: 'Globex is paid at GLX-1' } });
    const id = (own.structuredContent as { record: { id: string } }).record.id;
    const claim = [{ subject: 'Globex', field: 'payee_account', value: 'GLX-2' }];
    const v = await c.callTool({ name: 'supersede_memory', arguments: { id, content: 'Globex is paid at GLX-2', reason: 'moved', claims: claim } });
    assert.equal(v.isError, undefined, textOf(v));
    assert.deepEqual((v.structuredContent as { record: { claims: unknown } }).record.claims, claim);
  } finally {
    await c.close();
  }
});
