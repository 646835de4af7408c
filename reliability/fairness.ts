/**
 * Per-tenant fairness under three floods, against a real `memauth serve` child process: while
 * an attacker with tokens of tenant `globex` floods the server, the latency of *other* tenants'
 * ordinary requests (search, write, authorize in tenant `acme`) is measured.
 *
 * (a) a 1,000,000-character record in the attacker's session plus decisions with 200 short
 *     argument values (the boundary matcher must stay linear);
 * (b) `GET /v1/metrics?replaySample=all` in a loop after 1,500 decisions (replay in one pass,
 *     yielding, per-tenant limit of expensive requests);
 * (c) an MCP session flood by one external principal (per-principal and per-tenant limits):
 *     the victim tenant's agent must still open a session;
 * (d) 20 records of 1,000,000 characters read into the attacker's session, then small writes
 *     into that session in a loop (the echo check is memoised per record: a write costs
 *     O(|content| + records read), not O(size of the session's texts));
 * (e) `GET /v1/metrics/series?buckets=200&replaySample=all` in a loop, two at a time, while the
 *     victim tenant calls `GET /v1/audit/verify` (another expensive request): expensive requests
 *     are queued per tenant, so the victim's waits behind its own tenant's only.
 *
 * Goal, per flood: the victim's p99 under the flood ≤ max(2 × unloaded p99, unloaded p99 +
 * 150 ms) — the absolute floor keeps a 2 ms baseline on a noisy 2-core machine from flaking —
 * and no victim request fails. In (e) both sides run CPU-bound work on the one event loop: a fair
 * share of it is half, so the victim's expected latency is already 2 × unloaded; its goal is
 * 3 × unloaded p99 (fair share plus half again for the scheduler and a shared machine). A
 * starvation — waiting behind the other tenant's queue — is a whole series request (seconds),
 * far above either goal. Each victim request is a case; a flood over its goal is measured once
 * more and the second measurement decides.
 */
import { join } from 'node:path';
import { openMemory } from '../src/index.js';
import { addPrincipal, http, startServerProcess } from '../test/server-helpers.js';

/** External budgets raised far above the defaults, so the floods reach the mechanisms below them. */
const RAISED_BUDGETS = {
  MEMAUTH_EXTERNAL_MAX_CONTENT: '4000000',
  MEMAUTH_EXTERNAL_WRITES_PER_MINUTE: '1000000',
  MEMAUTH_EXTERNAL_WRITE_BYTES_PER_MINUTE: '4000000000',
  MEMAUTH_EXTERNAL_DECISIONS_PER_MINUTE: '1000000',
  // the victim writes as the tool `bank`: on an idle machine it writes more than the default 600 a minute
  MEMAUTH_TOOL_WRITES_PER_MINUTE: '1000000',
  MEMAUTH_TOOL_WRITE_BYTES_PER_MINUTE: '4000000000',
};
import { type Options, type SuiteResult, Tally, percentile, rmDir, tempDir } from './common.js';

/** The goal's relative factor and absolute floor (ms). */
const FACTOR = 2;
const FLOOR_MS = 150;
/** (e): factor over the unloaded p99 when both tenants run CPU-bound work (fair share is 2×). */
const SHARED_FACTOR = 3;

type Res = Awaited<ReturnType<typeof http>>;

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fairness', version: '1' } } };

async function mcpInit(url: string, token: string): Promise<{ status: number; sid: string | null; text: string }> {
  const r = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(INIT),
  });
  return { status: r.status, sid: r.headers.get('mcp-session-id'), text: (await r.text()).slice(0, 200) };
}

export async function run(o: Options): Promise<SuiteResult> {
  const tally = new Tally('fairness: 5 floods');
  const windowMs = o.long ? 15_000 : 3_000;
  const decisions = o.long ? 3000 : 1500;
  const dir = tempDir();
  // the attacker tenant's decision history is made through the library before the server starts (fast)
  const seedT0 = Date.now();
  const lib = await openMemory({ path: join(dir, 'memauth.db') });
  try {
    await lib.registerPrincipal({ tenant: 'globex', id: 'agent', kind: 'agent', domain: 'agent' });
    for (let i = 0; i < decisions; i++) await lib.authorize({ tenant: 'globex', session: `g${i % 5}`, action: { type: 'pay', args: { to: `ACCT-${i}`, amount: '1' } } });
  } finally {
    await lib.close();
  }
  tally.note(`${decisions} decisions of the attacker's tenant made in ${((Date.now() - seedT0) / 1000).toFixed(1)} s`);
  // the floods measure what is left once an operator raises the external budgets (the budgets
  // themselves are tested in test/server-write-budget.test.ts and server-review-flood.test.ts)
  const srv = await startServerProcess({ cwd: dir, env: RAISED_BUDGETS });
  try {
    const admin = srv.adminToken as string;
    const bank = await addPrincipal(srv.url, admin, { tenant: 'acme', id: 'bank', kind: 'tool', domain: 'bank.example' });
    const agent = await addPrincipal(srv.url, admin, { tenant: 'acme', id: 'agent', kind: 'agent', domain: 'agent' });
    const mallory = await addPrincipal(srv.url, admin, { tenant: 'globex', id: 'mallory', kind: 'external', domain: 'mallory.example' });
    for (let i = 0; i < 20; i++) await http(srv.url, 'POST', '/v1/memories', { token: bank, body: { scope: 'v', content: `vendor ${i} settles through ACCT-${i}`, source: 'bankapi:seed' } });

    // the victim: ordinary requests of tenant acme, two at a time, until `stop()` says so
    let n = 0;
    const victim = async (stop: () => boolean): Promise<{ lat: number[]; errors: string[] }> => {
      const lat: number[] = [];
      const errors: string[] = [];
      const worker = async (w: number): Promise<void> => {
        while (!stop()) {
          const i = (n += 1);
          const kind = i % 3;
          const t0 = performance.now();
          let r: Res;
          try {
            if (kind === 0) r = await http(srv.url, 'POST', '/v1/memories/search', { token: agent, body: { scope: 'v', query: `vendor ACCT-${i % 20}`, limit: 5, session: `v${w}` } });
            else if (kind === 1) r = await http(srv.url, 'POST', '/v1/memories', { token: bank, body: { scope: 'v', content: `vendor ${i} settles through ACCT-${i}`, source: 'bankapi:load' } });
            else r = await http(srv.url, 'POST', '/v1/decisions', { token: agent, body: { session: `v${w}`, action: { type: 'pay', args: { to: `ACCT-${i % 20}`, amount: 10 } } } });
          } catch (e) {
            errors.push(String(e));
            continue;
          }
          lat.push(performance.now() - t0);
          if (r.status >= 300) errors.push(`${['search', 'write', 'authorize'][kind]} ${r.status} ${r.text.slice(0, 120)}`);
        }
      };
      await Promise.all([worker(0), worker(1)]);
      return { lat: lat.sort((a, b) => a - b), errors };
    };
    const timed = (ms: number): (() => boolean) => {
      const end = Date.now() + ms;
      return () => Date.now() >= end;
    };

    const base = await victim(timed(windowMs));
    const baseP99 = percentile(base.lat, 0.99);
    const goal = Math.max(FACTOR * baseP99, baseP99 + FLOOR_MS);
    tally.note(
      `unloaded: ${base.lat.length} victim requests, p50 ${percentile(base.lat, 0.5).toFixed(1)} ms, p99 ${baseP99.toFixed(1)} ms → goal under each flood: p99 ≤ max(${FACTOR}×, +${FLOOR_MS} ms) = ${goal.toFixed(1)} ms`,
    );

    /** Run `attack` (repeatedly, for the window, at least once) while the victim is measured. */
    const flood = async (name: string, attack: () => Promise<string>, who: { run: typeof victim; goal: number; base: number } = { run: victim, goal, base: baseP99 }): Promise<void> => {
      // a 2-core machine shared with other jobs makes a p99 noisy: a flood over its goal is measured
      // once more and the second measurement decides (a real starvation is seconds, not a blip)
      if (!(await measure(name, attack, who, true))) await measure(`${name} (measured again)`, attack, who, false);
    };
    const measure = async (name: string, attack: () => Promise<string>, who: { run: typeof victim; goal: number; base: number }, firstTry: boolean): Promise<boolean> => {
      let attackDone = false;
      let rounds = 0;
      let last = '';
      const end = Date.now() + windowMs;
      const attacker = (async () => {
        try {
          do {
            last = await attack();
            rounds += 1;
          } while (Date.now() < end);
        } finally {
          attackDone = true;
        }
      })();
      const t0 = Date.now();
      const got = await who.run(() => attackDone || Date.now() - t0 > 120_000);
      await attacker;
      const p99 = percentile(got.lat, 0.99);
      const met = got.lat.length > 0 && p99 <= who.goal;
      tally.cases += got.lat.length + got.errors.length;
      tally.failures += got.errors.length;
      for (const e of got.errors.slice(0, 3)) tally.note(`FAIL ${name}: victim request failed: ${e}`);
      if (firstTry && !met && got.errors.length === 0) tally.note(`${name}: victim p99 ${p99.toFixed(1)} ms over the goal ${who.goal.toFixed(1)} ms on the first measurement; measuring again`);
      else tally.ok(met, () => `${name}: victim p99 ${p99.toFixed(1)} ms over the goal ${who.goal.toFixed(1)} ms (unloaded p99 ${who.base.toFixed(1)} ms)`);
      tally.note(
        `${name}: ${rounds} attack rounds in ${((Date.now() - t0) / 1000).toFixed(1)} s (${last}); victim ${got.lat.length} requests, p50 ${percentile(got.lat, 0.5).toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, max ${(got.lat[got.lat.length - 1] ?? NaN).toFixed(1)} ms (goal ${who.goal.toFixed(1)} ms)`,
      );
      return met || got.errors.length > 0;
    };

    // (a) a 1,000,000-character record in the attacker's session + a decision with 200 short values
    const big = Array.from({ length: 1_000_000 / 10 }, (_, i) => `ab${String(i % 100).padStart(2, '0')} cd e `)
      .join('')
      .slice(0, 1_000_000);
    const w = await http(srv.url, 'POST', '/v1/memories', { token: mallory, body: { scope: 'x', content: big, source: 'mail:flood', session: 'flood' } });
    tally.ok(w.status === 201, () => `(a) the 1,000,000-character record was not stored: ${w.status} ${w.text.slice(0, 200)}`);
    const args = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`v${i}`, ['ab', 'cd', 'e', `ab${String(i % 100).padStart(2, '0')}`][i % 4] as string]));
    await flood('(a) 1M-char record + 200-value decision', async () => {
      const t0 = performance.now();
      const r = await http(srv.url, 'POST', '/v1/decisions', { token: mallory, body: { session: 'flood', action: { type: 'pay', args } } });
      return `decision ${r.status} in ${(performance.now() - t0).toFixed(0)} ms`;
    });

    // (b) metrics replaySample=all after 1,500 decisions of the attacker's tenant (made above)
    await flood(`(b) metrics replaySample=all after ${decisions} decisions`, async () => {
      const t0 = performance.now();
      const rs = await Promise.all(Array.from({ length: 3 }, () => http(srv.url, 'GET', '/v1/metrics?replaySample=all', { token: mallory })));
      return `3 metrics at once: ${rs.map((r) => r.status).join(',')} in ${(performance.now() - t0).toFixed(0)} ms`;
    });

    // (d) 20 records of 1,000,000 characters read into the attacker's session, then small writes into it
    const huge = (i: number): string =>
      Array.from({ length: 1_000_000 / 10 }, (_, j) => `h${String(i).padStart(2, '0')}${String(j % 1000).padStart(3, '0')} q `)
        .join('')
        .slice(0, 1_000_000);
    const hugeIds: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await http(srv.url, 'POST', '/v1/memories', { token: mallory, body: { scope: 'x', content: huge(i), source: 'mail:flood' } });
      if (r.status === 201) hugeIds.push((JSON.parse(r.text) as { record: { id: string } }).record.id);
    }
    for (const id of hugeIds) await http(srv.url, 'GET', `/v1/memories/${id}?session=echo`, { token: mallory });
    tally.ok(hugeIds.length === 20, () => `(d) only ${hugeIds.length} of the 20 records of 1,000,000 characters were stored`);
    // the first write after the reads prepares each record once (linear in its length): timed, outside the window
    const c0 = performance.now();
    await http(srv.url, 'POST', '/v1/memories', { token: mallory, body: { scope: 'x', content: 'cold note', source: 'mail:flood', session: 'echo' } });
    tally.note(`(d) first small write after reading 20 × 1,000,000 characters (one-time preparation of each record): ${(performance.now() - c0).toFixed(0)} ms`);
    let note = 0;
    await flood('(d) small writes into a session that read 20 × 1M characters', async () => {
      const t0 = performance.now();
      const r = await http(srv.url, 'POST', '/v1/memories', { token: mallory, body: { scope: 'x', content: `note ${(note += 1)} for later`, source: 'mail:flood', session: 'echo' } });
      return `write ${r.status} in ${(performance.now() - t0).toFixed(0)} ms`;
    });

    // (e) metrics series with 200 buckets and every decision replayed, in a loop, while the victim verifies its audit chain
    const verifier = async (stop: () => boolean): Promise<{ lat: number[]; errors: string[] }> => {
      const lat: number[] = [];
      const errors: string[] = [];
      while (!stop()) {
        const t0 = performance.now();
        try {
          const r = await http(srv.url, 'GET', '/v1/audit/verify', { token: agent });
          lat.push(performance.now() - t0);
          if (r.status !== 200) errors.push(`verify ${r.status} ${r.text.slice(0, 120)}`);
        } catch (e) {
          errors.push(String(e));
        }
      }
      return { lat: lat.sort((a, b) => a - b), errors };
    };
    const vBase = await verifier(timed(windowMs));
    const vBaseP99 = percentile(vBase.lat, 0.99);
    const vGoal = Math.max(SHARED_FACTOR * vBaseP99, vBaseP99 + FLOOR_MS);
    tally.note(
      `(e) unloaded: ${vBase.lat.length} victim audit verifications, p99 ${vBaseP99.toFixed(1)} ms → goal (fair share of CPU-bound work) p99 ≤ max(${SHARED_FACTOR}×, +${FLOOR_MS} ms) = ${vGoal.toFixed(1)} ms`,
    );
    await flood(
      "(e) metrics series buckets=200 replaySample=all vs the victim's audit verification",
      async () => {
        const t0 = performance.now();
        const rs = await Promise.all(Array.from({ length: 2 }, () => http(srv.url, 'GET', '/v1/metrics/series?buckets=200&replaySample=all', { token: mallory })));
        return `2 series at once: ${rs.map((r) => r.status).join(',')} in ${(performance.now() - t0).toFixed(0)} ms`;
      },
      { run: verifier, goal: vGoal, base: vBaseP99 },
    );

    // (c) MCP session flood by one external principal of the attacker's tenant
    const sids: string[] = [];
    await flood('(c) MCP session flood', async () => {
      let refused = 0;
      for (let i = 0; i < 100; i++) {
        const r = await mcpInit(srv.url, mallory);
        if (r.sid) sids.push(r.sid);
        else refused += 1;
      }
      return `${sids.length} sessions held, ${refused} refused`;
    });
    const v = await mcpInit(srv.url, agent);
    tally.ok(v.status === 200 && v.sid !== null, () => `(c) the victim tenant's agent could not open an MCP session during the flood: ${v.status} ${v.text}`);
    tally.note(`(c) after the flood the victim's agent opened an MCP session: ${v.status}; the flooder holds ${sids.length} sessions`);
  } finally {
    await srv.stop('SIGTERM');
    rmDir(dir);
  }
  return tally.result();
}
