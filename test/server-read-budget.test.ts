/**
 * The read budget of channel principals (src/server/write-budget.ts `reading`): every record a tool
 * principal marks read in a session is a row of that session's read log, so its searches and reads
 * count against `toolReadsPerMinute`, over HTTP and MCP together, a fresh session per request
 * included; people are not limited. Against a real `memauth serve` process with its default
 * configuration, and the bucket arithmetic with a test clock.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { DEFAULT_CONFIG } from '../src/server/config.js';
import { WriteBudget } from '../src/server/write-budget.js';
import { type ServerProcess, addPrincipal, expectError, http, startServerProcess, tempDir } from './server-helpers.js';

/** A server in a temp directory with `records` records written by the user alice, and the tokens of alice and the tool browser. */
async function serverWithRecords(records: number, env: Record<string, string> = {}): Promise<{ srv: ServerProcess; tok: Record<string, string>; ids: string[]; logRows: () => number }> {
  const dir = tempDir();
  const srv = await startServerProcess({ cwd: dir, env });
  const admin = srv.adminToken as string;
  const tok: Record<string, string> = {};
  tok.alice = await addPrincipal(srv.url, admin, { tenant: 'acme', id: 'alice', kind: 'user', domain: 'acme' });
  tok.browser = await addPrincipal(srv.url, admin, { tenant: 'acme', id: 'browser', kind: 'tool', domain: 'browser.example' });
  const ids: string[] = [];
  for (let i = 0; i < records; i++) {
    const w = await http(srv.url, 'POST', '/v1/memories', { token: tok.alice, body: { scope: 'lin', content: `step ${i} of the runbook` } });
    assert.equal(w.status, 201, w.text);
    ids.push(w.body.record.id);
  }
  const logRows = (): number => {
    const d = new Database(path.join(dir, 'memauth.db'), { readonly: true, fileMustExist: true });
    try {
      return (d.prepare('SELECT count(*) AS n FROM session_log').get() as { n: number }).n;
    } finally {
      d.close();
    }
  };
  return { srv, tok, ids, logRows };
}

const search = (srv: ServerProcess, token: string, session: string) => http(srv.url, 'POST', '/v1/memories/search', { token, body: { scope: 'lin', query: 'step', limit: 1000, session } });

describe('tool reads on the default server', () => {
  const RECORDS = 200;
  let s: Awaited<ReturnType<typeof serverWithRecords>>;
  before(async () => {
    s = await serverWithRecords(RECORDS);
  });
  after(async () => {
    await s.srv.stop();
  });

  test('searches in a fresh session each are 429 RATE_LIMITED once the records they marked read reach the budget; the user still searches', async () => {
    let refused: Awaited<ReturnType<typeof http>> | null = null;
    let searches = 0;
    for (let i = 0; i < 60 && refused === null; i++) {
      const r = await search(s.srv, s.tok.browser as string, `flood-${i}`);
      if (r.status === 200) {
        assert.equal(r.body.hits.length, RECORDS);
        searches++;
      } else refused = r;
    }
    assert.ok(refused, 'refused within 60 searches');
    expectError(refused, 429, 'RATE_LIMITED');
    assert.deepEqual([refused.body.details.unit, refused.body.details.perMinute, refused.body.details.principal], ['reads', DEFAULT_CONFIG.toolReadsPerMinute, 'browser']);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    const stored = s.logRows();
    // the budget (3000 a minute) and what refilled meanwhile; the refused search stored nothing
    assert.equal(stored, searches * RECORDS);
    assert.ok(stored <= DEFAULT_CONFIG.toolReadsPerMinute + 2 * RECORDS, `${stored} rows from ${searches} searches`);
    for (let i = 0; i < 3; i++) {
      const u = await search(s.srv, s.tok.alice as string, `alice-${i}`);
      assert.equal(u.status, 200, u.text);
      assert.equal(u.body.hits.length, RECORDS);
    }
  });
});

describe('a tool read budget shared by HTTP and MCP', () => {
  let s: Awaited<ReturnType<typeof serverWithRecords>>;
  before(async () => {
    // 30 reads a minute: one recall of the 100 records leaves the tool owing 70 (over two minutes)
    s = await serverWithRecords(100, { MEMAUTH_TOOL_READS_PER_MINUTE: '30' });
  });
  after(async () => {
    await s.srv.stop();
  });

  test("after an MCP recall marked 100 records, the tool's HTTP search and read in a fresh session and its MCP get_memory are refused and store nothing; the user reads", async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${s.srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${s.tok.browser}` } } });
    const c = new Client({ name: 'r', version: '1' });
    await c.connect(transport);
    try {
      const m = await c.callTool({ name: 'recall', arguments: { scope: 'lin', query: 'step', limit: 1000 } });
      assert.notEqual(m.isError, true, JSON.stringify(m.content).slice(0, 300));
      const rows = s.logRows();
      assert.equal(rows, 100);
      expectError(await search(s.srv, s.tok.browser as string, 'fresh-1'), 429, 'RATE_LIMITED');
      expectError(await http(s.srv.url, 'GET', `/v1/memories/${s.ids[0]}?session=fresh-2`, { token: s.tok.browser }), 429, 'RATE_LIMITED');
      const g = await c.callTool({ name: 'get_memory', arguments: { id: s.ids[1] } });
      assert.equal(g.isError, true, JSON.stringify(g.content));
      assert.match(JSON.stringify(g.content), /RATE_LIMITED/);
      assert.equal(s.logRows(), rows, 'a refused read stores no row');
      // the refused request opened no session: the user may still claim its id
      const u = await search(s.srv, s.tok.alice as string, 'fresh-1');
      assert.equal(u.status, 200, u.text);
      const ug = await http(s.srv.url, 'GET', `/v1/memories/${s.ids[0]}?session=fresh-2`, { token: s.tok.alice });
      assert.equal(ug.status, 200, ug.text);
    } finally {
      await c.close();
    }
  });
});

describe('WriteBudget.reading', () => {
  const tool = { id: 'b', kind: 'tool' as const };
  const limited = (unit: string) => (e: { code?: string; details?: { unit?: string } }) => e.code === 'RATE_LIMITED' && e.details?.unit === unit;

  test('takes `most` before the read, settles to the records it marked (at least one); a refused read does not run', async () => {
    let now = 0;
    const b = new WriteBudget({ ...DEFAULT_CONFIG, toolReadsPerMinute: 10 }, () => now);
    let ran = 0;
    const read = (n: number) => async () => {
      ran++;
      return n;
    };
    // 8 taken, 3 marked: 5 given back
    assert.equal(await b.reading('t', tool, 8, read(3), (n) => n), 3);
    // 7 left: one more of 8 is refused before it runs
    await assert.rejects(
      b.reading('t', tool, 8, read(3), (n) => n),
      limited('reads'),
    );
    assert.equal(ran, 1);
    // marking none still costs one (the session), a read that throws too
    await b.reading('t', tool, 1, read(0), (n) => n);
    await assert.rejects(
      b.reading(
        't',
        tool,
        5,
        async () => Promise.reject(new Error('boom')),
        () => 0,
      ),
      /boom/,
    );
    // 5 left; a read that marked more than it was admitted with owes the rest
    await b.reading('t', tool, 1, read(9), (n) => n);
    await assert.rejects(
      b.reading('t', tool, 1, read(1), (n) => n),
      limited('reads'),
    );
    // the debt (-4) refills at 10 a minute: one read after 30 s
    now = 30_000;
    await b.reading('t', tool, 1, read(1), (n) => n);
  });

  test('`most` above the budget takes the whole budget; another principal, an agent, a user and the admin token are not counted here', async () => {
    const b = new WriteBudget({ ...DEFAULT_CONFIG, toolReadsPerMinute: 10 }, () => 0);
    assert.equal(
      await b.reading(
        't',
        tool,
        1000,
        async () => 10,
        (n) => n,
      ),
      10,
    );
    await assert.rejects(
      b.reading(
        't',
        tool,
        1,
        async () => 1,
        (n) => n,
      ),
      limited('reads'),
    );
    await b.reading(
      't',
      { id: 'c', kind: 'tool' },
      1,
      async () => 1,
      (n) => n,
    );
    for (const p of [{ id: 'a', kind: 'agent' as const }, { id: 'u', kind: 'user' as const }, null])
      for (let i = 0; i < 5; i++)
        await b.reading(
          't',
          p,
          1000,
          async () => 1000,
          (n) => n,
        );
  });

  test('an external principal has a read budget of its own kind', async () => {
    const b = new WriteBudget({ ...DEFAULT_CONFIG, externalReadsPerMinute: 2 }, () => 0);
    const ext = { id: 'm', kind: 'external' as const };
    await b.reading(
      't',
      ext,
      1,
      async () => 2,
      (n) => n,
    );
    await assert.rejects(
      b.reading(
        't',
        ext,
        1,
        async () => 1,
        (n) => n,
      ),
      limited('reads'),
    );
  });
});
