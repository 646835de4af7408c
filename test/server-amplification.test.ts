/**
 * Request amplification by an external principal on the default `memauth serve`: an action's
 * arguments are capped (ARGS_TOO_LARGE) for decisions, dry runs and confirmations over HTTP and
 * MCP; dry runs count against the external decision budget; new sessions and read marks count
 * against the external write budget; and a JSON number a double does not hold is refused
 * (INEXACT_NUMBER) over HTTP and MCP over HTTP, and so is an object that repeats a key
 * (DUPLICATE_KEY). Against a real server process (SQLite file).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type ServerProcess, addPrincipal, expectError, http, startServerProcess, tempDir } from './server-helpers.js';

async function mcpClient(url: string, token: string): Promise<Client> {
  const c = new Client({ name: 'amp', version: '1' });
  await c.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return c;
}

describe('amplification limits on the default server', () => {
  let srv: ServerProcess;
  let admin: string;
  const ext = async (id: string): Promise<string> => addPrincipal(srv.url, admin, { tenant: 'globex', id, kind: 'external', domain: `${id}.example` });
  before(async () => {
    srv = await startServerProcess({ cwd: tempDir() });
    admin = srv.adminToken as string;
  });
  after(async () => {
    await srv.stop();
  });

  test('40,000 argument values are refused at once (400 ARGS_TOO_LARGE) by evaluate, authorize, confirm and MCP check_action; 256 values pass', async () => {
    const mallory = await ext('amp-args');
    const user = await addPrincipal(srv.url, admin, { tenant: 'globex', id: 'amp-user', kind: 'user', domain: 'amp-user' });
    const items = Array.from({ length: 40_000 }, (_, i) => `w${i % 8000}`); // under an external caller's body limit
    for (const path of ['/v1/decisions/evaluate', '/v1/decisions']) {
      const r = await http(srv.url, 'POST', path, { token: mallory, body: { action: { type: 'send', args: { items } } } });
      expectError(r, 400, 'ARGS_TOO_LARGE');
      assert.equal(r.body.details.unit, 'values');
      assert.equal(r.body.details.max, 256);
      assert.ok(r.text.length < 2000, 'the refusal is short');
    }
    const bytes = await http(srv.url, 'POST', '/v1/decisions/evaluate', { token: mallory, body: { action: { type: 'send', args: { note: 'x'.repeat(17 * 1024) } } } });
    expectError(bytes, 400, 'ARGS_TOO_LARGE');
    assert.equal(bytes.body.details.unit, 'bytes');
    // keys that are not plain identifiers are values too
    const keys = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`ACCT-${i}`, 1]));
    expectError(await http(srv.url, 'POST', '/v1/decisions/evaluate', { token: mallory, body: { action: { type: 'send', args: { keys } } } }), 400, 'ARGS_TOO_LARGE');
    const conf = await http(srv.url, 'POST', '/v1/confirmations', { token: user, body: { action: { type: 'send', args: { items } } } });
    expectError(conf, 400, 'ARGS_TOO_LARGE');
    const ok = await http(srv.url, 'POST', '/v1/decisions/evaluate', { token: mallory, body: { action: { type: 'send', args: { items: items.slice(0, 255) }, resource: 'r-1' } } });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.values.length, 256);
    const over = await http(srv.url, 'POST', '/v1/decisions/evaluate', { token: mallory, body: { action: { type: 'send', args: { items: items.slice(0, 256) }, resource: 'r-1' } } });
    expectError(over, 400, 'ARGS_TOO_LARGE');
    const c = await mcpClient(srv.url, mallory);
    try {
      const m = await c.callTool({ name: 'check_action', arguments: { action: { type: 'send', args: { items: items.slice(0, 1000) } } } });
      assert.equal(m.isError, true);
      assert.match(JSON.stringify(m.content), /ARGS_TOO_LARGE/);
    } finally {
      await c.close();
    }
  });

  test('dry runs count against the external decision budget (30 a minute, HTTP and MCP together); an agent is not limited', async () => {
    const mallory = await ext('amp-dry');
    const agent = await addPrincipal(srv.url, admin, { tenant: 'globex', id: 'amp-agent', kind: 'agent', domain: 'amp-agent' });
    const body = { action: { type: 'draft', args: { text: 'hello' } } };
    let allowed = 0;
    let refused: Awaited<ReturnType<typeof http>> | null = null;
    for (let i = 0; i < 40 && refused === null; i++) {
      const r = await http(srv.url, 'POST', '/v1/decisions/evaluate', { token: mallory, body });
      if (r.status === 200) allowed++;
      else refused = r;
    }
    assert.ok(refused, 'refused within 40 dry runs');
    expectError(refused, 429, 'RATE_LIMITED');
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.ok(allowed >= 30 && allowed <= 31, `about 30 dry runs: ${allowed}`);
    const c = await mcpClient(srv.url, mallory);
    try {
      const m = await c.callTool({ name: 'check_action', arguments: body });
      assert.equal(m.isError, true);
      assert.match(JSON.stringify(m.content), /RATE_LIMITED/);
    } finally {
      await c.close();
    }
    for (let i = 0; i < 40; i++) assert.equal((await http(srv.url, 'POST', '/v1/decisions/evaluate', { token: agent, body })).status, 200);
  });

  test('an external principal reads nothing, so it creates no session and no read mark: refused before anything is stored', async () => {
    const mallory = await ext('amp-reads');
    const agent = await addPrincipal(srv.url, admin, { tenant: 'globex', id: 'amp-reader', kind: 'agent', domain: 'amp-reader' });
    const w = await http(srv.url, 'POST', '/v1/memories', { token: agent, body: { scope: 'tiny', content: 'zz note', source: 'mail:x' } });
    assert.equal(w.status, 201);
    for (let i = 0; i < 20; i++) {
      const session = `s-${i}`;
      expectError(await http(srv.url, 'POST', '/v1/memories/search', { token: mallory, body: { scope: 'tiny', query: 'zz', limit: 100, session } }), 403, 'FORBIDDEN');
      expectError(await http(srv.url, 'GET', `/v1/memories/${w.body.record.id}?session=${session}`, { token: mallory }), 403, 'FORBIDDEN');
    }
    expectError(await http(srv.url, 'GET', '/v1/memories?limit=100', { token: mallory }), 403, 'FORBIDDEN');
    // none of those sessions was created: another principal can still claim each
    for (const session of ['s-0', 's-19']) {
      const claim = await http(srv.url, 'POST', '/v1/memories/search', { token: agent, body: { scope: 'tiny', query: 'zz', session } });
      assert.equal(claim.status, 200, claim.text);
    }
  });

  test('a JSON number a double does not hold is refused (400 INEXACT_NUMBER) over HTTP and MCP over HTTP; exact ones and strings pass', async () => {
    const mallory = await ext('amp-num');
    const raw = (args: string): string => `{"action":{"type":"pay","args":${args}}}`;
    for (const [args, why] of [
      ['{"to":6228480012345677999,"amount":500}', 'rounded'],
      ['{"to":"6228480012345677999","amount":500.000000000000001}', 'rounded'],
      ['{"to":"x","amount":9007199254740993}', 'rounded'],
      ['{"to":"x","amount":9007199254740992}', 'unsafe_integer'],
      ['{"to":"x","amount":1e400}', 'overflow'],
      ['{"to":"x","amount":1e-400}', 'rounded'],
    ] as const) {
      const r = await http(srv.url, 'POST', '/v1/decisions/evaluate', { token: mallory, raw: raw(args) });
      expectError(r, 400, 'INEXACT_NUMBER');
      assert.equal(r.body.details.why, why, args);
      assert.match(r.body.message, /pass it as a string/);
    }
    for (const args of ['{"to":"6228480012345677999","amount":"500.000000000000001"}', '{"to":"a","amount":0.1,"n":1e2,"m":-0,"k":1.50,"q":9007199254740991,"s":"1e400 \\" 6228480012345677999"}']) {
      const r = await http(srv.url, 'POST', '/v1/decisions/evaluate', { token: mallory, raw: raw(args) });
      assert.equal(r.status, 200, `${args}: ${r.text}`);
    }
    const stored = await http(srv.url, 'POST', '/v1/decisions/evaluate', { token: mallory, raw: raw('{"to":"6228480012345677999","amount":"500.000000000000001"}') });
    assert.deepEqual(stored.body.action.args, { to: '6228480012345677999', amount: '500.000000000000001' });
    const init = await http(srv.url, 'POST', '/mcp', {
      token: mallory,
      raw: '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"x","version":"1"},"n":6228480012345677999}}',
    });
    expectError(init, 400, 'INEXACT_NUMBER');
  });

  test('a body whose object repeats a key is refused (400 DUPLICATE_KEY) over HTTP and MCP over HTTP, not read as its last value', async () => {
    const mallory = await ext('amp-dup');
    const r = await http(srv.url, 'POST', '/v1/decisions/evaluate', { token: mallory, raw: '{"action":{"type":"pay","args":{"to":"A","to":"B"}}}' });
    expectError(r, 400, 'DUPLICATE_KEY');
    assert.equal(r.body.details.key, 'to');
    const w = await http(srv.url, 'POST', '/v1/memories', { token: mallory, raw: '{"scope":"s","content":"pay A","content":"pay B"}' });
    expectError(w, 400, 'DUPLICATE_KEY');
    const ok = await http(srv.url, 'POST', '/v1/decisions/evaluate', { token: mallory, raw: '{"action":{"type":"pay","args":{"to":"A","memo":{"to":"B"}}}}' });
    assert.equal(ok.status, 200, ok.text);
    const init = await http(srv.url, 'POST', '/mcp', {
      token: mallory,
      raw: '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"x","version":"1"},"clientInfo":{"name":"y","version":"1"}}}',
    });
    expectError(init, 400, 'DUPLICATE_KEY');
  });
});
