/**
 * Cross-tenant observables (docs/design.md § Search and tenant isolation): search filters by tenant and
 * scope before ranking and exposes no statistic that depends on another tenant's data. Nothing
 * tenant A can observe through search or listing — hits, their order, their scores, list pages,
 * the errors it gets — may change when tenant B writes or deletes records, whatever words B uses.
 * Checked byte for byte, through the library and through the HTTP API, with and without the
 * facade's read cache.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Memory, isMemauthError } from '../../src/index.js';
import { startServer } from '../../src/server/index.js';
import { P, T, manualClock } from '../helpers.js';
import { http } from '../server-helpers.js';
import { type StoreFactory, setupWith } from './common.js';

/** The other tenant, whose writes must stay invisible to T. */
const B = 'globex';

/** A's records: words whose relative rarity decides the order of multi-word queries. */
const A_TEXTS: ReadonlyArray<readonly [string, string]> = [
  ['s', 'alpha alpha ledger note'],
  ['s', 'beta beta ledger note'],
  ['s', 'alpha beta gamma'],
  ['s', 'gamma delta epsilon zeta'],
  ['s', 'delta delta delta remittance'],
  ['s', 'epsilon remittance ACCT-4417 payable'],
  ['other', 'alpha beta in another scope'],
  ...Array.from({ length: 20 }, (_, i) => ['s', `filler record number ${i} about procurement`] as const),
];

/** Queries of one word and of several, whose ranking depends on each word's document frequency. */
const QUERIES: ReadonlyArray<readonly [string, string, number]> = [
  ['s', 'alpha', 10],
  ['s', 'alpha beta', 10],
  ['s', 'alpha beta', 1],
  ['s', 'beta gamma', 10],
  ['s', 'gamma delta', 2],
  ['s', 'delta epsilon remittance', 10],
  ['s', 'alpha beta gamma delta epsilon zeta', 3],
  ['s', 'ACCT-4417', 10],
  ['s', 'omega', 10],
  ['s', 'filler procurement alpha', 5],
  ['other', 'alpha beta', 10],
];

/** B's writes: the same words at other frequencies, in a scope of the same name, some deleted. */
function bTexts(): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i < 60; i += 1) out.push(['s', `alpha alpha alpha omega ${i % 3 === 0 ? 'gamma' : 'zeta'} record ${i}`]);
  for (let i = 0; i < 15; i += 1) out.push([i % 2 === 0 ? 's' : 'other', `delta ${'epsilon '.repeat(1 + (i % 4))} remittance ACCT-4417 filler`]);
  for (let i = 0; i < 10; i += 1) out.push(['s', `procurement ${'beta '.repeat(i + 1)} long text ${'padding '.repeat(30)}`]);
  return out;
}

/** Everything A observes through the library: search responses, list pages, gets, errors. */
async function observeLib(mem: Memory, aIds: readonly string[], foreignIds: readonly string[]): Promise<string> {
  const out: string[] = [];
  for (const [scope, query, limit] of QUERIES) out.push(`search ${scope} ${query} ${limit}: ${JSON.stringify(await mem.search({ tenant: T, scope, query, limit }))}`);
  out.push(`list: ${JSON.stringify(await mem.list({ tenant: T, includeDeleted: true }))}`);
  out.push(`list page: ${JSON.stringify(await mem.list({ tenant: T, scope: 's', limit: 3, offset: 2 }))}`);
  for (const id of aIds.slice(0, 3)) out.push(`get ${id}: ${JSON.stringify(await mem.get({ tenant: T, id }))}`);
  // another tenant's ids answer exactly as ids that never existed (the id itself aside)
  for (const id of foreignIds) {
    try {
      await mem.get({ tenant: T, id });
      out.push(`get foreign: found`);
    } catch (e) {
      out.push(`get foreign: ${isMemauthError(e) ? `${e.code} ${e.message.replace(id, '<id>')} ${JSON.stringify({ ...e.details, id: '<id>' })}` : String(e)}`);
    }
  }
  return out.join('\n');
}

/** What A observes over HTTP: search and list response bodies. */
async function observeHttp(url: string, token: string): Promise<string> {
  const out: string[] = [];
  for (const [scope, query, limit] of QUERIES) {
    const r = await http(url, 'POST', '/v1/memories/search', { token, body: { scope, query, limit } });
    out.push(`POST search ${scope} ${query} ${limit}: ${r.status} ${r.text}`);
  }
  const l = await http(url, 'GET', '/v1/memories?scope=s&limit=5&offset=1', { token });
  out.push(`GET list: ${l.status} ${l.text}`);
  return out.join('\n');
}

/**
 * Assert two observation transcripts are byte-identical; on a difference, first name the lines
 * that differ with their hits as `content score` (readable), then compare the bytes.
 */
export function assertSameObservations(after: string, before: string, what: string): void {
  const brief = (line: string): string => line.replace(/\{"record":\{.*?"content":("(?:[^"\\]|\\.)*"|null).*?"score":([-0-9.e]+)\}/g, '$1 $2');
  const a = after.split('\n');
  const b = before.split('\n');
  const differ = b.map((line, i) => (a[i] === line ? null : `${brief(line).slice(0, 400)}\n  became ${brief(a[i] ?? '<missing>').slice(0, 400)}`)).filter((x) => x !== null);
  assert.deepEqual(differ, [], `${what}: ${differ.length} responses differ`);
  assert.equal(after, before, what);
}

/** Cross-tenant observable cases, against the factory's store. */
export function observables(f: StoreFactory): void {
  const caches = f.kind === 'sqlite' ? [true, false] : [true];
  for (const cache of caches) {
    describe(`read cache ${cache ? 'on' : 'off'}`, () => {
      test("tenant A's search, list and get responses are byte-identical before and after tenant B writes and deletes records with A's words", async (t) => {
        const clock = manualClock('2026-03-01T00:00:00.000Z');
        const env = await setupWith(f, { clock: clock.now, cache });
        t.after(env.dispose);
        const { mem } = env;
        await mem.registerPrincipal({ tenant: B, id: 'bob', kind: 'user', domain: 'bob' });
        const aIds: string[] = [];
        for (const [scope, content] of A_TEXTS) aIds.push((await mem.write({ tenant: T, scope, principal: P.alice, content })).record.id);
        await mem.delete({ tenant: T, id: aIds[aIds.length - 1] as string });
        const srv = await startServer({ memory: mem, config: { port: 0, host: '127.0.0.1', logLevel: 'silent' } });
        t.after(() => srv.close());
        const admin = srv.adminToken?.token as string;
        const reg = await http(srv.url, 'POST', '/v1/principals', { token: admin, body: { tenant: T, id: 'reader', kind: 'agent', domain: 'reader' } });
        assert.equal(reg.status, 201, reg.text);
        const token = reg.body.token.token as string;
        const neverIds = ['mem_00000000000000000000000000000000'];
        const libBefore = await observeLib(mem, aIds, neverIds);
        const httpBefore = await observeHttp(srv.url, token);
        assert.match(libBefore, /"score"/, 'the responses carry scores');

        const bIds: string[] = [];
        for (const [scope, content] of bTexts()) bIds.push((await mem.write({ tenant: B, scope, principal: 'bob', content })).record.id);
        for (let i = 0; i < bIds.length; i += 4) await mem.delete({ tenant: B, id: bIds[i] as string });
        assert.ok((await mem.search({ tenant: B, scope: 's', query: 'alpha' })).length > 0, "B's records are searchable in B");

        assertSameObservations(await observeLib(mem, aIds, neverIds), libBefore, "A's library responses changed after B's writes and deletes");
        assertSameObservations(await observeHttp(srv.url, token), httpBefore, "A's HTTP responses changed after B's writes and deletes");
        // B's ids (live and deleted) answer A exactly like an id that never existed
        const never = libBefore.split('\n').at(-1);
        const foreign = (await observeLib(mem, aIds, [bIds[1] as string, bIds[0] as string])).split('\n').slice(-2);
        assert.deepEqual(foreign, [never, never]);
      });
    });
  }
}
