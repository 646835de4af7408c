/**
 * Bad input: fast-check-generated malformed inputs against every route of the server's OpenAPI
 * document, every MCP tool (SDK client over HTTP), the CLI (the commander program driven
 * in-process) and the scenario loader. No crash, no 5xx, every refusal has a code, a refused
 * request stores nothing (row counts unchanged; only `refused` audit entries may be added), and
 * the store verifies at the end.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { isMemauthError } from '../src/index.js';
import { loadScenarios } from '../src/bench/scenarios.js';
import { runCli } from '../src/cli/program.js';
import { http } from '../test/server-helpers.js';
import { type Options, type SuiteResult, Tally, openStore, registerCast, rmDir, tempDir } from './common.js';
import { startCast } from './srv.js';

const TABLES = ['records', 'derivations', 'corroborations', 'confirmations', 'confirmation_uses', 'decisions', 'principals', 'tokens', 'checkpoints'];
function counter(file: string): { snap: () => string; refusedOnlySince: (auditMax: number) => boolean; auditMax: () => number; close: () => void } {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  const q = TABLES.map((t) => db.prepare(`SELECT count(*) AS n FROM ${t}`));
  const am = db.prepare('SELECT coalesce(max(rowid), 0) AS n FROM audit');
  const since = db.prepare('SELECT payload FROM audit WHERE rowid > ?');
  return {
    snap: () => q.map((s) => (s.get() as { n: number }).n).join(','),
    auditMax: () => (am.get() as { n: number }).n,
    refusedOnlySince: (m) => (since.all(m) as Array<{ payload: string }>).every((r) => typeof (JSON.parse(r.payload) as { refused?: unknown }).refused === 'string'),
    close: () => db.close(),
  };
}

const weird = fc.oneof(
  fc.anything({ maxDepth: 3, withNullPrototype: false }),
  fc.string({ maxLength: 50, unit: 'binary' }),
  fc.constantFrom(null, true, 0, -1, 1e308, '', ' ', '\u0000', '\ud800', '__proto__', 'constructor', 'x'.repeat(3000), [], {}),
);
/** a body: mostly objects with the route's field names (wrong types), unknown fields, deep nesting. */
const body = (fields: string[]): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 5, arbitrary: fc.dictionary(fc.constantFrom(...fields, 'tenant', 'principal', 'authority', 'extra', '__proto__'), weird, { maxKeys: 6 }) },
    { weight: 1, arbitrary: weird },
    {
      weight: 1,
      arbitrary: fc.integer({ min: 50, max: 2000 }).map((d) => {
        let v: unknown = 1;
        for (let i = 0; i < d; i += 1) v = [v];
        return v;
      }),
    },
    { weight: 1, arbitrary: fc.record({ tenant: fc.constantFrom('globex', '', 'acme\u0000') }) },
  );
const rawBody = fc.oneof(fc.string({ maxLength: 200, unit: 'binary' }), fc.constantFrom('{', '{"a":', 'nul', '[1,2', '\u00ff\u00fe', '{"scope":"x","content":"y"}garbage'));

async function httpSurface(o: Options, n: number): Promise<SuiteResult> {
  const tally = new Tally('bad input: HTTP (every OpenAPI route)');
  const c = await startCast(['acme']);
  const cnt = counter(c.db);
  try {
    const doc = (await http(c.srv.url, 'GET', '/openapi.json')).body as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { $ref?: string } }> } }>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    const ops: Array<{ method: string; path: string; fields: string[] }> = [];
    for (const [path, methods] of Object.entries(doc.paths)) {
      if (path === '/mcp') continue;
      for (const [method, op] of Object.entries(methods)) {
        const ref = op.requestBody?.content['application/json']?.schema.$ref;
        const fields = ref ? Object.keys(doc.components.schemas[ref.split('/').pop() as string]?.properties ?? {}) : [];
        ops.push({ method: method.toUpperCase(), path, fields: fields.length ? fields : ['x'] });
      }
    }
    const tokens = [c.admin, c.tok['acme/agent'], c.tok['acme/alice'], c.tok['acme/mallory'], c.tok['acme/browser'], null, 'mat_forged', 'Bearer', '\u00e9'] as const;
    const perOp = Math.max(1, Math.ceil(n / ops.length));
    const byStatus = new Map<number, number>();
    for (const op of ops) {
      await fc
        .assert(
          fc.asyncProperty(
            fc.record({
              b: body(op.fields),
              raw: fc.option(rawBody, { freq: 4 }),
              tok: fc.constantFrom(...tokens),
              id: fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('mem_x', '..', '%00', 'dec_' + 'a'.repeat(300))),
              q: fc.dictionary(fc.constantFrom('tenant', 'scope', 'limit', 'offset', 'includeDeleted', 'session', 'replaySample', 'x'), fc.string({ maxLength: 20 }), { maxKeys: 3 }),
              ct: fc.constantFrom('application/json', 'application/json', 'text/plain', 'application/x-www-form-urlencoded'),
            }),
            async ({ b, raw, tok, id, q }) => {
              const path = op.path.replace(/\{[^}]+\}/g, encodeURIComponent(id) || 'x') + (Object.keys(q).length ? `?${new URLSearchParams(q).toString()}` : '');
              const before = cnt.snap();
              const am = cnt.auditMax();
              let res;
              const hasBody = op.method === 'POST';
              let payload: string | undefined;
              if (hasBody) {
                payload =
                  raw ??
                  (() => {
                    try {
                      return JSON.stringify(b) ?? 'null';
                    } catch {
                      return '"unserializable"';
                    }
                  })();
              }
              try {
                res = await http(c.srv.url, op.method, path, { token: tok as string | null, ...(payload !== undefined ? { raw: payload } : {}) });
              } catch (e) {
                tally.ok(false, () => `${op.method} ${op.path}: transport error ${String(e)}`);
                return;
              }
              byStatus.set(res.status, (byStatus.get(res.status) ?? 0) + 1);
              tally.ok(res.status < 500, () => `${op.method} ${path} → ${res.status} ${res.text.slice(0, 200)} body=${String(payload).slice(0, 200)}`);
              if (res.status >= 400) {
                tally.ok(typeof res.body?.code === 'string' && typeof res.body?.message === 'string', () => `${op.method} ${path} → ${res.status} without {code,message}: ${res.text.slice(0, 200)}`);
                const after = cnt.snap();
                tally.ok(after === before && cnt.refusedOnlySince(am), () => `${op.method} ${path} refused (${res.body?.code}) but stored something: ${before} → ${after}`);
              }
            },
          ),
          { numRuns: perOp, seed: o.seed, endOnFailure: true },
        )
        .catch((e: unknown) => tally.fail(`${op.method} ${op.path}: ${String(e).slice(0, 300)}`));
    }
    const v = await c.srv.memory.verifyAudit({});
    tally.ok(v.ok, () => `verify after bad input: ${v.tenants.map((t) => t.message).join('; ')}`);
    tally.note(
      `${ops.length} routes × ${perOp} inputs; statuses ${[...byStatus]
        .sort((a, b) => a[0] - b[0])
        .map(([s, k]) => `${s}:${k}`)
        .join(' ')}`,
    );
  } finally {
    cnt.close();
    await c.close();
  }
  return tally.result();
}

async function mcpSurface(o: Options, n: number): Promise<SuiteResult> {
  const tally = new Tally('bad input: MCP tools (HTTP)');
  const c = await startCast(['acme']);
  const cnt = counter(c.db);
  // one MCP session per tool: the SDK's client transport shares one AbortSignal across its
  // requests and leaves a listener on it per call (a client-side MaxListeners warning past 1500)
  const connect = async (): Promise<Client> => {
    const cl = new Client({ name: 'memauth-reliability', version: '1.0.0' });
    await cl.connect(new StreamableHTTPClientTransport(new URL(`${c.srv.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${c.tok['acme/agent']}` } } }));
    return cl;
  };
  let client = await connect();
  try {
    const tools = (await client.listTools()).tools;
    const perTool = Math.max(1, Math.ceil(n / tools.length));
    let refusals = 0;
    let protocolErrors = 0;
    for (const t of tools) {
      await client.close().catch(() => undefined);
      client = await connect();
      const fields = Object.keys((t.inputSchema as { properties?: Record<string, unknown> }).properties ?? {});
      await fc
        .assert(
          fc.asyncProperty(fc.dictionary(fc.constantFrom(...fields, 'tenant', 'principal', 'session', 'authority', 'extra'), weird, { maxKeys: 5 }), async (args) => {
            const before = cnt.snap();
            const am = cnt.auditMax();
            let res;
            try {
              res = await client.callTool({ name: t.name, arguments: JSON.parse(JSON.stringify(args) ?? '{}') as Record<string, unknown> });
            } catch (e) {
              // a JSON-RPC error (e.g. -32602 invalid params) is a refusal with a code
              const code = (e as { code?: unknown }).code;
              protocolErrors += 1;
              tally.ok(typeof code === 'number' && code !== -32603, () => `${t.name}: protocol error without a code / internal: ${String(e).slice(0, 200)}`);
              tally.ok(cnt.snap() === before && cnt.refusedOnlySince(am), () => `${t.name}: refused but stored`);
              return;
            }
            if (res.isError) {
              refusals += 1;
              const text = (res.content as Array<{ type: string; text?: string }>)[0]?.text ?? '';
              let code: unknown;
              try {
                code = (JSON.parse(text) as { code?: unknown }).code;
              } catch {
                code = /^MCP error -?\d+/.test(text) || /validation/i.test(text) ? 'VALIDATION' : undefined;
              }
              tally.ok(typeof code === 'string' && code !== 'INTERNAL', () => `${t.name}: error result without a code (or INTERNAL): ${text.slice(0, 200)}`);
              tally.ok(cnt.snap() === before && cnt.refusedOnlySince(am), () => `${t.name}: refused (${String(code)}) but stored`);
            } else tally.ok(true, () => '');
          }),
          { numRuns: perTool, seed: o.seed, endOnFailure: true },
        )
        .catch((e: unknown) => tally.fail(`${t.name}: ${String(e).slice(0, 300)}`));
    }
    // raw JSON-RPC garbage to /mcp
    for (let i = 0; i < Math.min(500, n); i += 1) {
      const raw = fc.sample(
        fc.oneof(
          rawBody,
          body(['jsonrpc', 'method', 'id', 'params']).map((b) => JSON.stringify(b) ?? 'null'),
        ),
        { numRuns: 1, seed: o.seed + i },
      )[0] as string;
      const r = await http(c.srv.url, 'POST', '/mcp', { token: c.tok['acme/agent'], raw, contentType: 'application/json' });
      tally.ok(r.status < 500, () => `raw /mcp → ${r.status} ${r.text.slice(0, 200)}`);
    }
    const v = await c.srv.memory.verifyAudit({});
    tally.ok(v.ok, () => `verify after MCP bad input: ${v.tenants.map((t) => t.message).join('; ')}`);
    tally.note(`${tools.length} tools × ${perTool} generated argument sets (${refusals} tool errors, ${protocolErrors} JSON-RPC errors) + ${Math.min(500, n)} raw bodies to /mcp`);
  } finally {
    await client.close().catch(() => undefined);
    cnt.close();
    await c.close();
  }
  return tally.result();
}

async function cliSurface(o: Options, n: number): Promise<SuiteResult> {
  const tally = new Tally('bad input: CLI (in-process)');
  const dir = tempDir();
  const db = join(dir, 'memauth.db');
  const mem = await openStore(db);
  await registerCast(mem, 'acme');
  const { record } = await mem.write({ tenant: 'acme', scope: 'vendors', principal: 'bank', content: 'Acme ACCT-1', source: 'bankapi:x' });
  await mem.close();
  const cnt = counter(db);
  const cwd = process.cwd();
  const saved = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr), env: process.env.MEMAUTH_DB };
  let captured = '';
  const byExit = new Map<number, number>();
  const commands = [
    'write',
    'derive',
    'get',
    'search',
    'list',
    'lineage',
    'corroborate',
    'confirm',
    'authorize',
    'decisions',
    'delete',
    'replay',
    'principal add',
    'principal list',
    'audit verify',
    'audit checkpoint',
    'token create',
    'token list',
    'token revoke',
    'token rotate',
    'import',
    'nonsense',
  ];
  const opts = [
    '--scope',
    '--principal',
    '--content',
    '--source',
    '--session',
    '--from',
    '--transform',
    '--action',
    '--args',
    '--evidence',
    '--limit',
    '--offset',
    '--kind',
    '--domain',
    '--format',
    '--file',
    '--trust',
    '--expires-at',
    '--authority',
    '--depends-on',
    '--confirmation',
    '--max-uses',
    '--tenant',
    '--json',
    '--admin',
    '--bogus',
  ];
  const val = fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.constantFrom(
      record.id,
      'bank',
      'alice',
      'agent',
      'pay',
      '{"to":"ACCT-1","amount":1}',
      '{',
      '[]',
      '-1',
      '0',
      '1e999',
      'user_confirmed',
      'system_policy',
      'summarize',
      '/nonexistent',
      '',
      '--json',
    ),
  );
  const argv = fc.record({
    cmd: fc.constantFrom(...commands),
    parts: fc.array(fc.tuple(fc.constantFrom(...opts), val), { maxLength: 6 }),
    pos: fc.array(val, { maxLength: 2 }),
    tenant: fc.constantFrom('acme', 'acme', '', 'globex'),
  });
  try {
    process.chdir(dir);
    process.env.MEMAUTH_DB = db;
    await fc
      .assert(
        fc.asyncProperty(argv, async ({ cmd, parts, pos, tenant }) => {
          const args = [...(tenant ? ['--tenant', tenant] : []), ...cmd.split(' '), ...pos, ...parts.flat()];
          if ((cmd === 'write' || cmd === 'derive') && !args.includes('--content') && !args.includes('--file')) args.push('--content', 'x');
          args.push('--db', db);
          const before = cnt.snap();
          const am = cnt.auditMax();
          captured = '';
          process.stdout.write = ((s: string | Uint8Array) => ((captured += String(s)), true)) as typeof process.stdout.write;
          process.stderr.write = ((s: string | Uint8Array) => ((captured += String(s)), true)) as typeof process.stderr.write;
          let code: number;
          try {
            code = await runCli(['node', 'memauth', ...args]);
          } catch (e) {
            code = -1;
            captured += `THREW ${String(e)}`;
          } finally {
            process.stdout.write = saved.out;
            process.stderr.write = saved.err;
          }
          byExit.set(code, (byExit.get(code) ?? 0) + 1);
          tally.ok(code >= 0 && code <= 2, () => `memauth ${JSON.stringify(args)} → exit ${code}: ${captured.slice(0, 300)}`);
          if (code === 2) {
            tally.ok(/error [A-Z_]+:|"code":"[A-Z_]+"|error: |\(run with --help/.test(captured), () => `exit 2 without a code: ${JSON.stringify(args)} ${captured.slice(0, 200)}`);
            tally.ok(cnt.snap() === before && cnt.refusedOnlySince(am), () => `refused CLI stored something: ${JSON.stringify(args)}`);
          }
        }),
        { numRuns: n, seed: o.seed, endOnFailure: true },
      )
      .catch((e: unknown) => tally.fail(String(e).slice(0, 400)));
  } finally {
    process.chdir(cwd);
    if (saved.env === undefined) delete process.env.MEMAUTH_DB;
    else process.env.MEMAUTH_DB = saved.env;
    process.exitCode = 0;
    cnt.close();
  }
  const m2 = await openStore(db, { checkpointKey: false });
  const v = await m2.verifyAudit({});
  await m2.close();
  tally.ok(v.ok, () => `verify after CLI bad input: ${v.tenants.map((t) => t.message).join('; ')}`);
  tally.note(
    `${n} generated command lines; exit codes ${[...byExit]
      .sort()
      .map(([k, x]) => `${k}:${x}`)
      .join(' ')}`,
  );
  rmDir(dir);
  return tally.result();
}

async function scenarioSurface(o: Options, n: number): Promise<SuiteResult> {
  const tally = new Tally('bad input: scenario loader');
  const dir = tempDir();
  const file = join(dir, 's.json');
  const scen = fc.oneof(
    rawBody,
    fc.anything({ maxDepth: 4 }).map((v) => JSON.stringify(v) ?? 'null'),
    fc
      .array(fc.dictionary(fc.constantFrom('id', 'kind', 'attack', 'variants', 'legit', 'trusted', 'untrusted', 'action', 'expected', 'title', 'x'), weird, { maxKeys: 6 }), { maxLength: 3 })
      .map((v) => JSON.stringify({ scenarios: v })),
  );
  let refused = 0;
  await fc
    .assert(
      fc.asyncProperty(scen, async (text) => {
        writeFileSync(file, text);
        try {
          loadScenarios(file);
        } catch (e) {
          refused += 1;
          tally.ok(isMemauthError(e), () => `loader threw a non-memauth error: ${String(e).slice(0, 200)} on ${text.slice(0, 100)}`);
          return;
        }
        tally.ok(true, () => '');
      }),
      { numRuns: n, seed: o.seed, endOnFailure: true },
    )
    .catch((e: unknown) => tally.fail(String(e).slice(0, 300)));
  rmDir(dir);
  tally.note(`${n} generated files, ${refused} refused with a code`);
  return tally.result();
}

export async function run(o: Options): Promise<SuiteResult[]> {
  const n = o.long ? 10_000 : 400;
  return [await httpSurface(o, n), await mcpSurface(o, n), await cliSurface(o, o.long ? 10_000 : 300), await scenarioSurface(o, n)];
}
