/**
 * The write and decision budgets of channel principals (src/server/write-budget.ts,
 * decision-budget.ts): a record's size and the records and bytes per minute of one external or
 * tool token are limited, each kind by its own limits, over HTTP and MCP together; agents are not. Against a real `memauth serve` process with its default configuration, and
 * the bucket arithmetic with a test clock.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { DEFAULT_CONFIG } from '../src/server/config.js';
import { DecisionBudget } from '../src/server/decision-budget.js';
import { WriteBudget } from '../src/server/write-budget.js';
import { type ServerProcess, addPrincipal, expectError, http, startServerProcess, tempDir } from './server-helpers.js';

describe('external writes on the default server', () => {
  let srv: ServerProcess;
  const tok: Record<string, string> = {};
  before(async () => {
    srv = await startServerProcess({ cwd: tempDir() });
    const admin = srv.adminToken as string;
    tok.mallory = await addPrincipal(srv.url, admin, { tenant: 'globex', id: 'mallory', kind: 'external', domain: 'mallory.example' });
    tok.agent = await addPrincipal(srv.url, admin, { tenant: 'globex', id: 'agent', kind: 'agent', domain: 'agent' });
    tok.browser = await addPrincipal(srv.url, admin, { tenant: 'globex', id: 'browser', kind: 'tool', domain: 'browser' });
  });

  test('a tool attaches at most 8 corroborations to one record (403 FORBIDDEN past them); another record, and another principal, still can', async () => {
    const rec = await http(srv.url, 'POST', '/v1/memories', { token: tok.agent, body: { scope: 'c', content: 'note to vouch for' } });
    assert.equal(rec.status, 201, rec.text);
    const id = rec.body.record.id as string;
    for (let i = 0; i < 8; i++) {
      const c = await http(srv.url, 'POST', '/v1/corroborations', { token: tok.browser, body: { recordId: id, evidence: `https://vouch.example/${i}` } });
      assert.equal(c.status, 201, c.text);
    }
    const over = await http(srv.url, 'POST', '/v1/corroborations', { token: tok.browser, body: { recordId: id, evidence: 'https://vouch.example/again' } });
    expectError(over, 403, 'FORBIDDEN');
    assert.equal(over.body.details.limit, 8);
    const other = await http(srv.url, 'POST', '/v1/memories', { token: tok.agent, body: { scope: 'c', content: 'another note' } });
    assert.equal((await http(srv.url, 'POST', '/v1/corroborations', { token: tok.browser, body: { recordId: other.body.record.id, evidence: 'https://vouch.example/0' } })).status, 201);
    const view = await http(srv.url, 'GET', `/v1/memories/${id}?session=s-corr`, { token: tok.agent });
    assert.equal(view.status, 200, view.text);
    assert.equal(view.body.corroborations.length, 8, view.text.slice(0, 300));
  });

  test('a tool principal stores a page of 1 MiB, not more (413 CONTENT_TOO_LONG); an agent stores it', async () => {
    const page = 'p'.repeat(1024 * 1024);
    const ok = await http(srv.url, 'POST', '/v1/memories', { token: tok.browser, body: { scope: 's', content: page.slice(0, 900_000), source: 'https://example.org/a' } });
    assert.equal(ok.status, 201, ok.text.slice(0, 200));
    const big = `${page}q`;
    const r = await http(srv.url, 'POST', '/v1/memories', { token: tok.browser, body: { scope: 's', content: big.slice(0, 999_999), source: 'https://example.org/b' } });
    assert.equal(r.status, 201, 'under the 1,000,000-character cap and 1 MiB');
    const over = await http(srv.url, 'POST', '/v1/memories', { token: tok.browser, body: { scope: 's', content: 'é'.repeat(600_000), source: 'https://example.org/c' } });
    expectError(over, 413, 'CONTENT_TOO_LONG');
    assert.equal(over.body.details.max, 1024 * 1024);
  });
  after(async () => {
    await srv.stop();
  });

  test('a record over 64 KiB from an external principal is 413 CONTENT_TOO_LONG over HTTP and MCP; an agent stores it', async () => {
    const big = 'x'.repeat(64 * 1024 + 1);
    const r = await http(srv.url, 'POST', '/v1/memories', { token: tok.mallory, body: { scope: 's', content: big, source: 'mail:x' } });
    expectError(r, 413, 'CONTENT_TOO_LONG');
    assert.equal(r.body.details.unit, 'bytes');
    const transport = new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${tok.mallory}` } } });
    const c = new Client({ name: 'w', version: '1' });
    await c.connect(transport);
    try {
      const m = await c.callTool({ name: 'remember', arguments: { scope: 's', content: big } });
      assert.equal(m.isError, true);
      assert.match(JSON.stringify(m.content), /CONTENT_TOO_LONG/);
    } finally {
      await c.close();
    }
    const a = await http(srv.url, 'POST', '/v1/memories', { token: tok.agent, body: { scope: 's', content: big, source: 'mail:x' } });
    assert.equal(a.status, 201, a.text);
  });

  test('past 1 MiB per minute an external principal is 429 RATE_LIMITED with Retry-After; the agent still writes', async () => {
    const chunk = (i: number): string => `${i} `.padEnd(60 * 1024, 'y');
    let refused: Awaited<ReturnType<typeof http>> | null = null;
    let stored = 0;
    for (let i = 0; i < 30 && refused === null; i++) {
      const r = await http(srv.url, 'POST', '/v1/memories', { token: tok.mallory, body: { scope: 's', content: chunk(i), source: 'mail:x' } });
      if (r.status === 201) stored++;
      else refused = r;
    }
    assert.ok(refused, 'refused within 30 writes of 60 KiB');
    assert.ok(stored >= 16 && stored <= 18, `about 1 MiB stored: ${stored} records`);
    expectError(refused, 429, 'RATE_LIMITED');
    assert.equal(refused.body.details.unit, 'bytes');
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    const a = await http(srv.url, 'POST', '/v1/memories', { token: tok.agent, body: { scope: 's', content: chunk(99), source: 'mail:x' } });
    assert.equal(a.status, 201, a.text);
  });
});

describe('corroborations of channel principals count against their write budget', () => {
  let srv: ServerProcess;
  const tok: Record<string, string> = {};
  let fact = '';
  before(async () => {
    srv = await startServerProcess({ cwd: tempDir(), env: { MEMAUTH_TOOL_WRITES_PER_MINUTE: '3', MEMAUTH_EXTERNAL_WRITES_PER_MINUTE: '2' } });
    const admin = srv.adminToken as string;
    tok.alice = await addPrincipal(srv.url, admin, { tenant: 'globex', id: 'alice', kind: 'user', domain: 'globex' });
    tok.bank = await addPrincipal(srv.url, admin, { tenant: 'globex', id: 'bank', kind: 'tool', domain: 'bank.example', maxAuthority: 'trusted_tool_verified' });
    tok.mallory = await addPrincipal(srv.url, admin, { tenant: 'globex', id: 'mallory', kind: 'external', domain: 'mallory.example' });
    const w = await http(srv.url, 'POST', '/v1/memories', { token: tok.alice, body: { scope: 's', content: 'payee ACCT-1' } });
    assert.equal(w.status, 201, w.text);
    fact = w.body.record.id;
  });
  after(async () => {
    await srv.stop();
  });

  test('a tool corroborates as often as it may write, then 429 RATE_LIMITED; the user still corroborates', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await http(srv.url, 'POST', '/v1/corroborations', { token: tok.bank, body: { recordId: fact, evidence: `bank:statement-${i}` } });
      assert.equal(r.status, 201, r.text);
    }
    const over = await http(srv.url, 'POST', '/v1/corroborations', { token: tok.bank, body: { recordId: fact, evidence: 'bank:statement-9' } });
    expectError(over, 429, 'RATE_LIMITED');
    assert.equal(over.body.details.unit, 'records');
    const u = await http(srv.url, 'POST', '/v1/corroborations', { token: tok.alice, body: { recordId: fact, evidence: 'note:checked' } });
    assert.equal(u.status, 201, u.text);
  });

  test("an external principal's refused corroborations (each logged) are budgeted too", async () => {
    for (let i = 0; i < 2; i++)
      expectError(await http(srv.url, 'POST', '/v1/corroborations', { token: tok.mallory, body: { recordId: fact, evidence: `mail:${i}` } }), 403, 'CORROBORATOR_BELOW_FLOOR');
    expectError(await http(srv.url, 'POST', '/v1/corroborations', { token: tok.mallory, body: { recordId: fact, evidence: 'mail:9' } }), 429, 'RATE_LIMITED');
  });
});

describe('refused confirmations of channel principals count against their write budget', () => {
  let srv: ServerProcess;
  const tok: Record<string, string> = {};
  before(async () => {
    srv = await startServerProcess({ cwd: tempDir(), env: { MEMAUTH_TOOL_WRITES_PER_MINUTE: '2', MEMAUTH_EXTERNAL_WRITES_PER_MINUTE: '2' } });
    const admin = srv.adminToken as string;
    tok.alice = await addPrincipal(srv.url, admin, { tenant: 'globex', id: 'alice', kind: 'user', domain: 'globex' });
    tok.browser = await addPrincipal(srv.url, admin, { tenant: 'globex', id: 'browser', kind: 'tool', domain: 'browser' });
    tok.mallory = await addPrincipal(srv.url, admin, { tenant: 'globex', id: 'mallory', kind: 'external', domain: 'mallory.example' });
  });
  after(async () => {
    await srv.stop();
  });

  test('each refusal is logged until the budget is spent, then 429 RATE_LIMITED logs nothing; the user still confirms', async () => {
    const action = { type: 'pay', args: { to: 'ACCT-MALLORY', amount: 1 } };
    const head = async () => (await http(srv.url, 'GET', '/v1/audit/verify?tenant=globex', { token: tok.alice })).body;
    for (const who of ['mallory', 'browser']) {
      for (let i = 0; i < 2; i++) expectError(await http(srv.url, 'POST', '/v1/confirmations', { token: tok[who], body: { action } }), 403, 'CONFIRMATION_REQUIRES_USER');
      const before = JSON.stringify(await head());
      const over = await http(srv.url, 'POST', '/v1/confirmations', { token: tok[who], body: { action } });
      expectError(over, 429, 'RATE_LIMITED');
      assert.equal(JSON.stringify(await head()), before, `${who}: a refusal past the budget appends no audit entry`);
    }
    const ok = await http(srv.url, 'POST', '/v1/confirmations', { token: tok.alice, body: { action } });
    assert.equal(ok.status, 201, ok.text);
  });
});

describe("a tool's recorded decisions count as bytes of its write budget", () => {
  let srv: ServerProcess;
  const tok: Record<string, string> = {};
  before(async () => {
    srv = await startServerProcess({ cwd: tempDir(), env: { MEMAUTH_TOOL_WRITE_BYTES_PER_MINUTE: '40000' } });
    const admin = srv.adminToken as string;
    tok.browser = await addPrincipal(srv.url, admin, { tenant: 'globex', id: 'browser', kind: 'tool', domain: 'browser' });
    tok.agent = await addPrincipal(srv.url, admin, { tenant: 'globex', id: 'agent', kind: 'agent', domain: 'agent' });
  });
  after(async () => {
    await srv.stop();
  });

  test('a decision that alone would store more than a minute of the budget is refused 413 (field decision) and recorded nowhere', async () => {
    const memo = Array.from({ length: 200 }, (_, i) => `v${i}`);
    const r = await http(srv.url, 'POST', '/v1/decisions', { token: tok.browser, body: { action: { type: 'pay', args: { to: 'ACCT-1', amount: 1, memo } } } });
    expectError(r, 413, 'CONTENT_TOO_LONG');
    assert.equal(r.body.details.field, 'decision');
    assert.ok(r.body.details.length > 40_000, JSON.stringify(r.body.details));
    const list = await http(srv.url, 'GET', '/v1/decisions?tenant=globex', { token: srv.adminToken as string });
    assert.equal(list.body.decisions.length, 0, 'nothing recorded');
  });

  test('decisions (row and audit entry) spend the byte budget: then decisions and writes are 429 (bytes) over HTTP and MCP; an agent goes on', async () => {
    const memo = Array.from({ length: 20 }, (_, i) => `v${i}`);
    const action = { type: 'pay', args: { to: 'ACCT-1', amount: 1, memo } };
    let made = 0;
    let last = await http(srv.url, 'POST', '/v1/decisions', { token: tok.browser, body: { action } });
    while (last.status === 201 && made < 100) {
      made++;
      last = await http(srv.url, 'POST', '/v1/decisions', { token: tok.browser, body: { action } });
    }
    expectError(last, 429, 'RATE_LIMITED');
    assert.equal(last.body.details.unit, 'bytes');
    assert.ok(made >= 1 && made < 20, `${made} decisions of about 8 KB each fit in 40,000 bytes a minute (600 decisions a minute would have)`);
    // what is left is less than one decision: a page of that size is refused too
    expectError(await http(srv.url, 'POST', '/v1/memories', { token: tok.browser, body: { scope: 's', content: 'x'.repeat(20_000), source: 'https://example.org/x' } }), 429, 'RATE_LIMITED');
    const transport = new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${tok.browser}` } } });
    const c = new Client({ name: 'w', version: '1' });
    await c.connect(transport);
    try {
      const m = await c.callTool({ name: 'authorize_action', arguments: { action } });
      assert.equal(m.isError, true);
      assert.match(JSON.stringify(m.content), /RATE_LIMITED/);
    } finally {
      await c.close();
    }
    const a = await http(srv.url, 'POST', '/v1/decisions', { token: tok.agent, body: { action } });
    assert.equal(a.status, 201, a.text);
  });
});

/**
 * A server process (registered with the suite's before/after) whose tool principals may store
 * `budget` bytes a minute, with the tool `browser` of tenant globex.
 */
function toolServer(budget: number): { srv: ServerProcess; tok: Record<string, string> } {
  const state = { srv: undefined as unknown as ServerProcess, tok: {} as Record<string, string> };
  before(async () => {
    state.srv = await startServerProcess({ cwd: tempDir(), env: { MEMAUTH_TOOL_WRITE_BYTES_PER_MINUTE: String(budget) } });
    state.tok.browser = await addPrincipal(state.srv.url, state.srv.adminToken as string, { tenant: 'globex', id: 'browser', kind: 'tool', domain: 'browser' });
  });
  after(async () => {
    await state.srv.stop();
  });
  // the process starts in `before`: `srv` forwards to it when a test reads it
  const srv = new Proxy({} as ServerProcess, { get: (_, key) => Reflect.get(state.srv, key) as unknown });
  return { srv, tok: state.tok };
}

describe("decisions in flight together cannot store more than a tool's byte budget", () => {
  const BUDGET = 40_000;
  const { srv, tok } = toolServer(BUDGET);

  test('30 decisions sent at once over HTTP and MCP: those recorded store at most the budget; the rest are 429 (bytes) and recorded nowhere', async () => {
    const memo = Array.from({ length: 20 }, (_, i) => `v${i}`);
    const action = { type: 'pay', args: { to: 'ACCT-1', amount: 1, memo } };
    const transport = new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${tok.browser}` } } });
    const c = new Client({ name: 'w', version: '1' });
    await c.connect(transport);
    const t0 = Date.now();
    try {
      const overHttp = Array.from({ length: 20 }, () => http(srv.url, 'POST', '/v1/decisions', { token: tok.browser, body: { action } }));
      const overMcp = Array.from({ length: 10 }, () => c.callTool({ name: 'authorize_action', arguments: { action } }));
      const [h, m] = await Promise.all([Promise.all(overHttp), Promise.all(overMcp)]);
      const refill = Math.ceil(((Date.now() - t0 + 1000) / 60_000) * BUDGET);
      for (const r of h) if (r.status !== 201) expectError(r, 429, 'RATE_LIMITED');
      for (const r of m) if (r.isError === true) assert.match(JSON.stringify(r.content), /RATE_LIMITED/);
      const made = h.filter((r) => r.status === 201).length + m.filter((r) => r.isError !== true).length;
      // what was recorded, from the tenant's own decision list (admin token): each decision's row and audit entry
      const list = await http(srv.url, 'GET', '/v1/decisions?tenant=globex&limit=100', { token: srv.adminToken as string });
      assert.equal(list.status, 200, list.text);
      const stored = list.body.decisions as object[];
      assert.equal(stored.length, made, 'every recorded decision was answered 201 or as a tool result; no refused one was recorded');
      const bytes = stored.reduce((n: number, d) => n + 2 * Buffer.byteLength(JSON.stringify(d), 'utf8'), 0);
      assert.ok(made >= 1 && made < 30, `${made} of 30 recorded`);
      // the list shows each decision as stored: twice its JSON is at most what was charged for it
      assert.ok(bytes <= BUDGET + refill, `${bytes} bytes recorded by ${made} decisions in flight together; the budget holds ${BUDGET} (+${refill} refilled)`);
    } finally {
      await c.close();
    }
  });
});

describe("what a tool's records store besides their content counts against its byte budget", () => {
  const BUDGET = 60_000;
  const { srv, tok } = toolServer(BUDGET);

  test('one-byte pages with 1.5 KB sources: each costs its source twice (row and audit entry); writes over HTTP and MCP stop at the budget, and a derivation from them is refused', async () => {
    const t0 = Date.now();
    const ids: string[] = [];
    let last = { status: 201 } as Awaited<ReturnType<typeof http>>;
    for (let i = 0; i < 100 && last.status === 201; i++) {
      last = await http(srv.url, 'POST', '/v1/memories', { token: tok.browser, body: { scope: 's', content: `${i}`, source: `https://pages.example/${i}/${'q'.repeat(1500)}` } });
      if (last.status === 201) ids.push(last.body.record.id);
    }
    expectError(last, 429, 'RATE_LIMITED');
    assert.equal(last.body.details.unit, 'bytes');
    const refill = Math.ceil(((Date.now() - t0 + 1000) / 60_000) * BUDGET);
    assert.ok(ids.length >= 2 && ids.length * 2 * 1500 <= BUDGET + refill, `${ids.length} records with 1.5 KB sources fit in ${BUDGET} bytes (+${refill} refilled)`);
    const transport = new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${tok.browser}` } } });
    const c = new Client({ name: 'w', version: '1' });
    await c.connect(transport);
    try {
      const m = await c.callTool({ name: 'remember', arguments: { scope: 's', content: 'x', source: `https://pages.example/mcp/${'q'.repeat(1500)}` } });
      assert.equal(m.isError, true);
      assert.match(JSON.stringify(m.content), /RATE_LIMITED/);
    } finally {
      await c.close();
    }
    expectError(await http(srv.url, 'POST', '/v1/derivations', { token: tok.browser, body: { from: ids, content: 's', transform: 'merge' } }), 429, 'RATE_LIMITED');
    const list = await http(srv.url, 'GET', '/v1/memories?tenant=globex&scope=s&limit=1000', { token: srv.adminToken as string });
    assert.equal(list.status, 200, list.text);
    assert.equal(list.body.records.length, ids.length, 'no refused write or derivation was stored');
  });
});

describe('WriteBudget', () => {
  test('records per minute refill evenly; a refused write uses none of the budget; other kinds are not counted', () => {
    let now = 0;
    const b = new WriteBudget({ ...DEFAULT_CONFIG, externalWritesPerMinute: 2, externalWriteBytesPerMinute: 10 }, () => now);
    const ext = { id: 'm', kind: 'external' as const };
    b.admit('t', ext, 'abcd');
    assert.throws(
      () => b.admit('t', ext, 'abcdefghi'),
      (e: { code?: string; details?: { unit?: string } }) => e.code === 'RATE_LIMITED' && e.details?.unit === 'bytes',
    );
    b.admit('t', ext, 'abcd');
    assert.throws(
      () => b.admit('t', ext, 'a'),
      (e: { code?: string; details?: { unit?: string; retryAfterSeconds?: number } }) => e.code === 'RATE_LIMITED' && e.details?.unit === 'records' && e.details.retryAfterSeconds === 30,
    );
    for (let i = 0; i < 100; i++) b.admit('t', { id: 'a', kind: 'agent' }, 'abcdefghij');
    b.admit('t', null, 'abcdefghij');
    // a tool has its own, larger budget
    b.admit('t', { id: 'b', kind: 'tool' }, 'abcdefghij');
    now = 30_000;
    b.admit('t', ext, 'a');
  });
});

describe('DecisionBudget', () => {
  test('external and tool principals each have their own decisions per minute; agents, people and the admin none', () => {
    let now = 0;
    const b = new DecisionBudget({ external: 1, tool: 2 }, () => now);
    const ext = { id: 'm', kind: 'external' as const };
    const tool = { id: 'b', kind: 'tool' as const };
    b.admit('t', ext);
    assert.throws(
      () => b.admit('t', ext),
      (e: { code?: string; details?: { perMinute?: number } }) => e.code === 'RATE_LIMITED' && e.details?.perMinute === 1,
    );
    b.admit('t', tool);
    b.admit('t', tool);
    assert.throws(
      () => b.admit('t', tool),
      (e: { code?: string; details?: { perMinute?: number } }) => e.code === 'RATE_LIMITED' && e.details?.perMinute === 2,
    );
    for (let i = 0; i < 100; i++) b.admit('t', { id: 'a', kind: 'agent' });
    b.admit('t', null);
    now = 60_000;
    b.admit('t', ext);
  });
});
