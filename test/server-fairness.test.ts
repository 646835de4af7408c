/**
 * One tenant cannot freeze or lock out the others (docs/design.md § Shape of the code: thin edges;
 * src/server/session-limits.ts, src/server/fairness.ts): MCP sessions are limited per principal
 * and per tenant, not only globally; the expensive endpoints are limited per tenant. Against a
 * real `memauth serve` process.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { TenantSlots } from '../src/server/fairness.js';
import { type ServerProcess, addPrincipal, expectError, http, startServerProcess, tempDir } from './server-helpers.js';

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'flood', version: '1' } } };

/** POST an MCP initialize with `token`; the session id, or the error response. */
async function openSession(url: string, token: string): Promise<{ status: number; sid: string | null; body: any }> {
  // eslint-disable-line @typescript-eslint/no-explicit-any -- error bodies are checked field by field
  const r = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(INIT),
  });
  const text = await r.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: r.status, sid: r.headers.get('mcp-session-id'), body };
}

/** A tools/list on an open session: its HTTP status. */
async function ping(url: string, token: string, sid: string): Promise<number> {
  const r = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
  });
  await r.text();
  return r.status;
}

describe('MCP sessions are limited per principal and per tenant', () => {
  let srv: ServerProcess;
  const tok: Record<string, string> = {};
  before(async () => {
    srv = await startServerProcess({ cwd: tempDir(), env: { MEMAUTH_MCP_MAX_SESSIONS_PER_PRINCIPAL: '5', MEMAUTH_MCP_MAX_SESSIONS_PER_TENANT: '8', MEMAUTH_MCP_MAX_SESSIONS: '40' } });
    const admin = srv.adminToken as string;
    tok.mallory = await addPrincipal(srv.url, admin, { tenant: 'globex', id: 'mallory', kind: 'external', domain: 'mallory.example' });
    tok.mallory2 = await addPrincipal(srv.url, admin, { tenant: 'globex', id: 'mallory2', kind: 'external', domain: 'mallory2.example' });
    tok.gagent = await addPrincipal(srv.url, admin, { tenant: 'globex', id: 'agent', kind: 'agent', domain: 'agent' });
    tok.agent = await addPrincipal(srv.url, admin, { tenant: 'acme', id: 'agent', kind: 'agent', domain: 'agent' });
  });
  after(async () => {
    await srv.stop();
  });

  test('a flooding principal is refused at its own limit, named; other tenants still open sessions', async () => {
    const opened: string[] = [];
    let refused: { status: number; body: any } | null = null; // eslint-disable-line @typescript-eslint/no-explicit-any -- checked below
    for (let i = 0; i < 30 && refused === null; i++) {
      const r = await openSession(srv.url, tok.mallory as string);
      if (r.sid) opened.push(r.sid);
      else refused = r;
    }
    assert.equal(opened.length, 5, 'mallory opened exactly its limit');
    assert.ok(refused, 'the sixth session is refused');
    assert.equal(refused.status, 429);
    assert.equal(refused.body.code, 'TOO_MANY_SESSIONS');
    assert.equal(refused.body.details.limit, 'principal');
    assert.equal(refused.body.details.max, 5);
    assert.match(refused.body.message, /mallory.*limit is 5/);
    const other = await openSession(srv.url, tok.agent as string);
    assert.equal(other.status, 200, JSON.stringify(other.body));
    assert.ok(other.sid);
  });

  test("a full tenant evicts the heaviest principal's least recently used session, never another tenant's", async () => {
    // globex: mallory holds 5 (previous test), mallory2 opens 3 → the tenant holds 8, its limit
    const m2: string[] = [];
    for (let i = 0; i < 3; i++) m2.push((await openSession(srv.url, tok.mallory2 as string)).sid as string);
    const acmeAgent = await openSession(srv.url, tok.agent as string);
    assert.ok(acmeAgent.sid);
    // globex's own agent still gets in: the flooder (mallory, 5 sessions) loses its LRU session
    const g = await openSession(srv.url, tok.gagent as string);
    assert.equal(g.status, 200, JSON.stringify(g.body));
    assert.equal(await ping(srv.url, tok.gagent as string, g.sid as string), 200);
    for (const sid of m2) assert.equal(await ping(srv.url, tok.mallory2 as string, sid), 200, "mallory2's sessions are kept: mallory holds more");
    assert.equal(await ping(srv.url, tok.agent as string, acmeAgent.sid as string), 200, "acme's session is untouched");
  });
});

describe('expensive endpoints are limited per tenant side', () => {
  let srv: ServerProcess;
  const tok: Record<string, string> = {};
  before(async () => {
    srv = await startServerProcess({ cwd: tempDir(), env: { MEMAUTH_MAX_EXPENSIVE_PER_TENANT: '1', MEMAUTH_EXTERNAL_WRITES_PER_MINUTE: '1000' } });
    const admin = srv.adminToken as string;
    tok.mallory = await addPrincipal(srv.url, admin, { tenant: 'globex', id: 'mallory', kind: 'external', domain: 'mallory.example' });
    tok.gagent = await addPrincipal(srv.url, admin, { tenant: 'globex', id: 'gagent', kind: 'agent', domain: 'agent' });
    tok.crawler = await addPrincipal(srv.url, admin, { tenant: 'globex', id: 'crawler', kind: 'tool', domain: 'crawler.example' });
    tok.agent = await addPrincipal(srv.url, admin, { tenant: 'acme', id: 'agent', kind: 'agent', domain: 'agent' });
    for (let i = 0; i < 150; i++) {
      const w = await http(srv.url, 'POST', '/v1/memories', { token: tok.mallory, body: { scope: 's', content: `note ${i} ACCT-${i}`, source: 'mail:x' } });
      assert.equal(w.status, 201, w.text);
      await http(srv.url, 'POST', '/v1/decisions', { token: tok.mallory, body: { action: { type: 'pay', args: { to: `ACCT-${i}`, amount: 1 } } } });
    }
  });
  after(async () => {
    await srv.stop();
  });

  test("concurrent metrics of a tool beyond its side's limit are 429 TOO_MANY_REQUESTS; its own tenant's agent and another tenant are served; an external principal reads no metrics", async () => {
    expectError(await http(srv.url, 'GET', '/v1/metrics', { token: tok.mallory }), 403, 'FORBIDDEN');
    let flood: Awaited<ReturnType<typeof http>>[] = [];
    // a round can end before the next request is read: try a few rounds of 8 at once
    for (let round = 0; round < 10 && !flood.some((r) => r.status === 429); round++) {
      const [other, own, ...rest] = await Promise.all([
        http(srv.url, 'GET', '/v1/metrics?replaySample=all', { token: tok.agent }),
        // the tenant's own agent, sent while the tool's requests hold the tenant's channel slots
        new Promise((resolve) => setTimeout(resolve, 5)).then(() => http(srv.url, 'GET', '/v1/metrics?replaySample=all', { token: tok.gagent })),
        ...Array.from({ length: 8 }, () => http(srv.url, 'GET', '/v1/metrics?replaySample=all', { token: tok.crawler })),
      ]);
      assert.equal(other?.status, 200, other?.text);
      assert.equal(own?.status, 200, `globex's own agent is not shut out by its tool: ${own?.text}`);
      flood = rest;
    }
    const statuses = flood.map((r) => r.status);
    assert.ok(statuses.includes(200), `one is served: ${statuses}`);
    const busy = flood.filter((r) => r.status === 429);
    assert.ok(busy.length > 0, `some are refused: ${statuses}`);
    for (const r of busy) {
      expectError(r, 429, 'TOO_MANY_REQUESTS');
      assert.equal(r.body.details.limit, 'external');
      assert.equal(r.body.details.max, 1);
    }
  });

  test("a channel's pages of decisions take its side's slots (429 TOO_MANY_REQUESTS past them, operation listDecisions); the tenant's own agent is not shut out", async () => {
    let flood: Awaited<ReturnType<typeof http>>[] = [];
    for (let round = 0; round < 10 && !flood.some((r) => r.status === 429); round++) {
      const [own, ...rest] = await Promise.all([
        new Promise((resolve) => setTimeout(resolve, 5)).then(() => http(srv.url, 'GET', '/v1/decisions?limit=10000', { token: tok.gagent })),
        ...Array.from({ length: 8 }, () => http(srv.url, 'GET', '/v1/decisions?limit=10000', { token: tok.mallory })),
      ]);
      assert.equal(own?.status, 200, own?.text);
      flood = rest;
    }
    const statuses = flood.map((r) => r.status);
    const served = flood.filter((r) => r.status === 200);
    assert.ok(served.length > 0, `one is served: ${statuses}`);
    for (const r of served) assert.ok(r.body.decisions.length > 0 && r.body.decisions.every((d: { requester?: string }) => d.requester === 'mallory'), 'mallory sees its own decisions');
    const busy = flood.filter((r) => r.status === 429);
    assert.ok(busy.length > 0, `some are refused: ${statuses}`);
    for (const r of busy) {
      expectError(r, 429, 'TOO_MANY_REQUESTS');
      assert.equal(r.body.details.operation, 'listDecisions');
      assert.equal(r.body.details.limit, 'external');
    }
  });

  test("another tenant's audit verification does not wait behind a tenant's running metrics series", async () => {
    for (let round = 0; round < 3; round++) {
      let seriesDone = 0;
      const series = http(srv.url, 'GET', '/v1/metrics/series?buckets=200&replaySample=all', { token: tok.crawler }).then((r) => {
        seriesDone = performance.now();
        return r;
      });
      await new Promise((resolve) => setTimeout(resolve, 30));
      const v = await http(srv.url, 'GET', '/v1/audit/verify', { token: tok.agent });
      const verifyDone = performance.now();
      assert.equal(v.status, 200, v.text);
      const s = await series;
      assert.equal(s.status, 200, s.text);
      // 20 ms for the client's event loop: both responses can land in one turn of it (a 1 ms "after" is scheduling, not waiting)
      assert.ok(seriesDone === 0 || verifyDone < seriesDone + 20, `round ${round}: acme's verification ended ${(verifyDone - seriesDone).toFixed(0)} ms after globex's series`);
    }
  });

  test("MCP verify_audit and the audit resource take the same slots: a tool's parallel calls are refused past its side's limit", async () => {
    const sessions = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const transport = new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${tok.crawler}` } } });
        const c = new Client({ name: 'flood', version: '1' });
        await c.connect(transport);
        return c;
      }),
    );
    try {
      let codes: string[] = [];
      for (let round = 0; round < 10 && !codes.some((t) => t.includes('TOO_MANY_REQUESTS')); round++) {
        // the tool's HTTP metrics hold its side's slot: its MCP calls, sent meanwhile, wait in or are refused by the same slots
        const metrics = http(srv.url, 'GET', '/v1/metrics?replaySample=all', { token: tok.crawler });
        await new Promise((resolve) => setTimeout(resolve, 5));
        const calls = sessions.map((c, i) =>
          i % 2 === 0
            ? c.callTool({ name: 'verify_audit', arguments: {} }).then((r) => (r.isError ? JSON.stringify(r.content) : 'ok'))
            : c.readResource({ uri: 'memauth://audit/verify' }).then(
                () => 'ok',
                (e: Error) => e.message,
              ),
        );
        codes = await Promise.all(calls);
        await metrics;
      }
      assert.ok(
        codes.some((t) => t.includes('TOO_MANY_REQUESTS')),
        `some are refused: ${codes}`,
      );
      const after = await sessions[0]?.callTool({ name: 'verify_audit', arguments: {} });
      assert.equal(after?.isError, undefined, `served once the slot is free: ${JSON.stringify(after?.content)}`);
    } finally {
      await Promise.all(sessions.map((c) => c.close()));
    }
  });
});

describe('TenantSlots', () => {
  test('a tenant at its limit is refused while another tenant is admitted and runs without waiting behind it; a slot frees when its request ends', async () => {
    const slots = new TenantSlots(2);
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const order: string[] = [];
    const a1 = slots.run('globex', 'metrics', async () => {
      await held;
      order.push('globex1');
    });
    const a2 = slots.run('globex', 'metrics', async () => {
      order.push('globex2');
    });
    await assert.rejects(
      slots.run('globex', 'metrics', async () => 1),
      (e: { code?: string; details?: { max?: number; tenant?: string } }) => e.code === 'TOO_MANY_REQUESTS' && e.details?.max === 2 && e.details.tenant === 'globex',
    );
    // another tenant's expensive request runs while globex's first one is still running
    const b = await slots.run('acme', 'metrics', async () => {
      order.push('acme');
      return 7;
    });
    assert.equal(b, 7);
    assert.deepEqual(order, ['acme'], "acme's request did not wait behind globex's");
    release();
    await Promise.all([a1, a2]);
    assert.deepEqual(order, ['acme', 'globex1', 'globex2'], "a tenant's own requests run one at a time, in arrival order");
    assert.equal(await slots.run('globex', 'metrics', async () => 3), 3);
  });

  test("an external principal's side has its own slots: at its limit it is refused while the tenant's own principals are admitted", async () => {
    const slots = new TenantSlots(1);
    const external = slots.for({ kind: 'external' });
    let release = (): void => undefined;
    const held = external.run('globex', 'verifyAudit', () => new Promise<void>((resolve) => (release = resolve)));
    await assert.rejects(
      external.run('globex', 'verifyAudit', async () => 1),
      (e: { code?: string; details?: { limit?: string } }) => e.code === 'TOO_MANY_REQUESTS' && e.details?.limit === 'external',
    );
    assert.equal(await slots.for({ kind: 'agent' }).run('globex', 'metrics', async () => 2), 2, "the tenant's agent is admitted and does not wait");
    assert.equal(await slots.for(null).run('globex', 'metrics', async () => 3), 3, 'and the admin token');
    release();
    await held;
    assert.equal(await external.run('globex', 'verifyAudit', async () => 4), 4);
  });
});
