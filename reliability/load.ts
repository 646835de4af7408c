/**
 * Load: a loopback load generator (bounded concurrency, keep-alive) against a spawned server
 * process: mixed writes, searches and decisions; requests/s, p50/p99 latency, errors; the chain
 * verifies afterwards.
 */
import { addPrincipal, http, startServerProcess } from '../test/server-helpers.js';
import { type Options, type SuiteResult, Tally, percentile, rmDir, tempDir } from './common.js';

export async function run(o: Options): Promise<SuiteResult> {
  const tally = new Tally('load: HTTP mixed');
  const seconds = o.long ? 60 : 10;
  const concurrency = 16;
  const dir = tempDir();
  // a load test, not a budget test: the bank tool's write budget raised as an operator of a busy ingest tool would
  const srv = await startServerProcess({ cwd: dir, env: { MEMAUTH_TOOL_WRITES_PER_MINUTE: '1000000', MEMAUTH_TOOL_WRITE_BYTES_PER_MINUTE: String(10 * 1024 ** 3) } });
  try {
    const admin = srv.adminToken as string;
    const bank = await addPrincipal(srv.url, admin, { tenant: 'acme', id: 'bank', kind: 'tool', domain: 'bank.example' });
    const agent = await addPrincipal(srv.url, admin, { tenant: 'acme', id: 'agent', kind: 'agent', domain: 'agent' });
    const lat: Record<string, number[]> = { write: [], search: [], decide: [] };
    let errors = 0;
    const errSamples: string[] = [];
    const end = Date.now() + seconds * 1000;
    let n = 0;
    const worker = async (w: number): Promise<void> => {
      while (Date.now() < end) {
        n += 1;
        const i = n;
        const kind = i % 10 < 5 ? 'write' : i % 10 < 8 ? 'search' : 'decide';
        const t0 = performance.now();
        let r;
        try {
          if (kind === 'write')
            r = await http(srv.url, 'POST', '/v1/memories', { token: bank, body: { scope: 'load', content: `vendor ${i} settles through ACCT-${i} (worker ${w})`, source: 'bankapi:load' } });
          else if (kind === 'search')
            r = await http(srv.url, 'POST', '/v1/memories/search', { token: agent, body: { scope: 'load', query: `vendor ACCT-${Math.max(1, i - 50)}`, limit: 5, session: `s${w}-${i % 7}` } });
          else
            r = await http(srv.url, 'POST', '/v1/decisions', { token: agent, body: { session: `s${w}-${i % 7}`, action: { type: 'pay', args: { to: `ACCT-${Math.max(1, i - 50)}`, amount: 10 } } } });
        } catch (e) {
          errors += 1;
          if (errSamples.length < 3) errSamples.push(String(e));
          continue;
        }
        (lat[kind] as number[]).push(performance.now() - t0);
        if (r.status >= 300) {
          errors += 1;
          if (errSamples.length < 3) errSamples.push(`${kind} ${r.status} ${r.text.slice(0, 120)}`);
        }
      }
    };
    const t0 = Date.now();
    await Promise.all(Array.from({ length: concurrency }, (_, w) => worker(w)));
    const elapsed = (Date.now() - t0) / 1000;
    const all = Object.values(lat)
      .flat()
      .sort((a, b) => a - b);
    tally.cases = all.length + errors;
    tally.failures = errors;
    for (const s of errSamples) tally.note(`FAIL ${s}`);
    const v = await http(srv.url, 'GET', '/v1/audit/verify?tenant=acme', { token: admin });
    tally.ok(v.status === 200 && v.body.ok === true, () => `verify after load: ${v.status} ${v.text.slice(0, 200)}`);
    const fmt = (xs: number[]): string => {
      const s = [...xs].sort((a, b) => a - b);
      return `${s.length} req, p50 ${percentile(s, 0.5).toFixed(1)} ms, p99 ${percentile(s, 0.99).toFixed(1)} ms`;
    };
    tally.note(
      `${seconds} s, ${concurrency} connections on loopback: ${(all.length / elapsed).toFixed(0)} req/s, p50 ${percentile(all, 0.5).toFixed(1)} ms, p99 ${percentile(all, 0.99).toFixed(1)} ms, ${errors} errors; chain of ${v.body?.tenants?.[0]?.chain?.entries} entries verified`,
    );
    tally.note(`write ${fmt(lat.write as number[])}; search ${fmt(lat.search as number[])}; decide ${fmt(lat.decide as number[])}`);
  } finally {
    await srv.stop('SIGTERM');
    rmDir(dir);
  }
  return tally.result();
}
