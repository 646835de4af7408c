/**
 * Recall at scale (issue 16, finding 2): a SQLite store of N records (default 20,000) — writes
 * by principals of several kinds, derived records with lineage, agent sessions, corroborations —
 * then, per query, the time and the store statements of the library's `search` + `get` of every
 * hit (the record views) and of the MCP `recall` tool through an in-process MCP client.
 *
 * Run: `node dist/perf/recall.js [--records 20000] [--queries 50] [--db path]` (an existing
 * `--db` is reused). Imports the facade, the SQLite driver, the MCP server and the SDK client.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Memory } from '../src/api/memory.js';
import type { OpContext } from '../src/api/context.js';
import { views } from '../src/api/records.js';
import { DEFAULT_POLICY, loadPolicy } from '../src/core/policy.js';
import { createMcpServer } from '../src/server/mcp.js';
import { SqliteDriver } from '../src/store/sqlite/driver.js';
import { mulberry32 } from '../src/bench/stats.js';

const TENANT = 'acme';
const SCOPE = 'vendors';
/** a tag shared by `TAG_SIZE` records: a query for it has 10 hits (limit 10). */
const TAG_SIZE = 12;

/** Statements run on every better-sqlite3 connection of this process (reads: all/get/iterate). */
export const statements = { reads: 0, writes: 0 };
function countStatements(): void {
  const probe = new Database(':memory:');
  const proto = Object.getPrototypeOf(probe.prepare('SELECT 1')) as Record<string, (...a: unknown[]) => unknown>;
  probe.close();
  for (const [m, kind] of [
    ['all', 'reads'],
    ['get', 'reads'],
    ['iterate', 'reads'],
    ['run', 'writes'],
  ] as const) {
    const orig = proto[m] as (...a: unknown[]) => unknown;
    proto[m] = function (this: unknown, ...a: unknown[]) {
      statements[kind] += 1;
      return orig.apply(this, a);
    };
  }
}

const PRINCIPALS = [
  { id: 'alice', kind: 'user', domain: 'acme-staff' },
  { id: 'bob', kind: 'user', domain: 'acme-finance' },
  { id: 'ops', kind: 'system', domain: 'acme-ops' },
  { id: 'browser', kind: 'tool', domain: 'browser' },
  { id: 'assistant', kind: 'agent', domain: 'agent-runtime' },
  { id: 'feed', kind: 'external', domain: 'vendor-feed' },
] as const;

/** Build the corpus: `n` records, deterministic (seed 7). */
async function build(mem: Memory, n: number): Promise<void> {
  for (const p of PRINCIPALS) await mem.registerPrincipal({ tenant: TENANT, ...p });
  const r = mulberry32(7);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const words = ['invoice', 'vendor', 'payment', 'account', 'net', 'terms', 'contract', 'renewal', 'bank', 'wire', 'routing', 'quarter', 'audit', 'ledger'];
  const ids: string[] = [];
  const text = (i: number): string => `record ${i} tag${i % Math.ceil(n / TAG_SIZE)} uniq${i} ${Array.from({ length: 8 }, () => pick(words)).join(' ')} amount ${Math.floor(r() * 10000)}`;
  const t0 = Date.now();
  while (ids.length < n) {
    const i = ids.length;
    const roll = r();
    if (roll < 0.15 && ids.length > 10) {
      const from = [...new Set([pick(ids), pick(ids), pick(ids)].slice(0, 1 + Math.floor(r() * 3)))];
      ids.push((await mem.derive({ tenant: TENANT, principal: pick(['assistant', 'ops']), from, content: text(i), transform: pick(['summarize', 'extract', 'merge']) })).id);
    } else if (roll < 0.2 && ids.length > 10) {
      // an agent session: recall, then a few writes (each derives from the session's reads)
      const session = `s${i}`;
      await mem.search({ tenant: TENANT, scope: SCOPE, query: `uniq${Math.floor(r() * i)}`, session, requester: 'assistant' });
      for (let k = 0; k < 4 && ids.length < n; k++)
        ids.push((await mem.write({ tenant: TENANT, scope: SCOPE, principal: 'assistant', content: text(ids.length), session, requester: 'assistant' })).record.id);
    } else {
      const p = pick(['alice', 'bob', 'ops', 'browser', 'feed']);
      const source = p === 'browser' && r() < 0.5 ? `https://web.example/p${i}` : undefined;
      ids.push((await mem.write({ tenant: TENANT, scope: SCOPE, principal: p, content: text(i), ...(source ? { source } : {}) })).record.id);
    }
    if (r() < 0.1) {
      const target = pick(ids);
      const evidence = r() < 0.3 ? `memory:${pick(ids)}` : `registry:check-${i}`;
      await mem.corroborate({ tenant: TENANT, recordId: target, principal: pick(['alice', 'bob', 'ops', 'browser']), evidence });
    }
    if (ids.length % 5000 === 0) process.stderr.write(`  built ${ids.length} records (${((Date.now() - t0) / 1000).toFixed(1)} s)\n`);
  }
}

/** The facade's operation context (private: the perf script reaches in to time the page views alone). */
const ctxOf = (mem: Memory): OpContext => (mem as unknown as { ctx: OpContext }).ctx;

const pct = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] as number;

/** Time `fn` per query; statements counted per call. */
async function measure(label: string, queries: string[], fn: (q: string) => Promise<number>): Promise<void> {
  const ms: number[] = [];
  const reads: number[] = [];
  const writes: number[] = [];
  let hits = 0;
  for (const q of queries) {
    const r0 = statements.reads;
    const w0 = statements.writes;
    const t = process.hrtime.bigint();
    hits += await fn(q);
    ms.push(Number(process.hrtime.bigint() - t) / 1e6);
    reads.push(statements.reads - r0);
    writes.push(statements.writes - w0);
  }
  console.log(
    `${label.padEnd(34)} hits/q ${(hits / queries.length).toFixed(1).padStart(4)}  p50 ${pct(ms, 50).toFixed(2).padStart(7)} ms  p90 ${pct(ms, 90).toFixed(2).padStart(7)} ms  reads/q p50 ${pct(reads, 50)} max ${Math.max(...reads)}  writes/q ${pct(writes, 50)}`,
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { records: { type: 'string', default: '20000' }, queries: { type: 'string', default: '40' }, db: { type: 'string' } } });
  const n = Number(values.records);
  const path = values.db ?? join(mkdtempSync(join(tmpdir(), 'memauth-recall-')), 'recall.db');
  const fresh = !existsSync(path);
  countStatements();
  const policy = loadPolicy(DEFAULT_POLICY);
  const mem = new Memory({ driver: SqliteDriver.open({ path, groupCommit: true }), policy, checkpointKey: null });
  if (fresh) {
    process.stderr.write(`building ${n} records in ${path}\n`);
    await build(mem, n);
  }
  const tags = Math.ceil(n / TAG_SIZE);
  const r = mulberry32(99);
  const nq = Number(values.queries);
  const ten = Array.from({ length: nq }, () => `tag${Math.floor(r() * tags)}`);
  const one = Array.from({ length: nq }, () => `uniq${Math.floor(r() * n)}`);
  console.log(
    `recall at ${n} records (${path}); load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  const principal = { id: 'assistant', kind: 'agent', domain: 'agent-runtime', maxAuthority: 'agent_generated', tenant: TENANT } as never;
  for (const [name, qs] of [
    ['10 hits', ten],
    ['1 hit', one],
  ] as const) {
    await measure(`library search (${name})`, qs, async (q) => (await mem.search({ tenant: TENANT, scope: SCOPE, query: q })).length);
    await measure(`library search + get each (${name})`, qs, async (q) => {
      const hits = await mem.search({ tenant: TENANT, scope: SCOPE, query: q });
      for (const h of hits) await mem.get({ tenant: TENANT, id: h.record.id });
      return hits.length;
    });
    await measure(`library search + page views (${name})`, qs, async (q) => {
      const hits = await mem.search({ tenant: TENANT, scope: SCOPE, query: q });
      await views(
        ctxOf(mem),
        TENANT,
        hits.map((h) => h.record),
      );
      return hits.length;
    });
    const [ct, st] = InMemoryTransport.createLinkedPair();
    const server = createMcpServer({
      mem,
      tenant: TENANT,
      principal: (await mem.listPrincipals({ tenant: TENANT })).find((p) => p.id === 'assistant') ?? principal,
      session: `mcp-${name.replace(' ', '')}`,
      config: { maxContentChars: 100_000 },
      version: 'perf',
    });
    await server.connect(st);
    const client = new Client({ name: 'perf', version: '1' });
    await client.connect(ct);
    await measure(`MCP recall (${name})`, qs, async (q) => {
      const res = (await client.callTool({ name: 'recall', arguments: { scope: SCOPE, query: q } })) as unknown as { structuredContent: { hits: unknown[] } };
      return res.structuredContent.hits.length;
    });
    await client.close();
  }
  await mem.close();
}

await main();
