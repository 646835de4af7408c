/**
 * Crash safety: SIGKILL the server (and, separately, CLI processes) at random moments during
 * concurrent writes, derivations and decisions. A client-side ledger keeps every acknowledged id
 * (a 2xx with the id, or a CLI that printed it and exited 0); after each restart every one must be
 * present and the audit chain (which also checks every row against its entry) must verify.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { CLI, addPrincipal, cleanEnv, http, startServerProcess } from '../test/server-helpers.js';
import { type Options, type SuiteResult, Tally, openStore, registerCast, rmDir, rng, tempDir } from './common.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function serverCrash(o: Options): Promise<SuiteResult> {
  const tally = new Tally('crash: kill -9 server');
  const r = rng(o.seed ^ 0xc7a5);
  const kills = o.long ? 50 : 5;
  const dir = tempDir();
  const ledger = { records: [] as string[], decisions: [] as string[] };
  let checked = { records: 0, decisions: 0 };
  let first = await startServerProcess({ cwd: dir });
  const admin = first.adminToken as string;
  const tok: Record<string, string> = {};
  for (const [id, kind, domain] of [
    ['bank', 'tool', 'bank.example'],
    ['agent', 'agent', 'agent'],
    ['alice', 'user', 'alice'],
  ] as const)
    tok[id] = await addPrincipal(first.url, admin, { tenant: 'acme', id, kind, domain });
  let proc = first;
  let acked = 0;
  let attempted = 0;
  for (let k = 0; k < kills; k += 1) {
    let stop = false;
    const url = proc.url;
    const worker = async (w: number): Promise<void> => {
      let i = 0;
      while (!stop) {
        i += 1;
        attempted += 1;
        const roll = r.next();
        try {
          if (roll < 0.55 || ledger.records.length === 0) {
            const res = await http(url, 'POST', '/v1/memories', {
              token: tok.bank,
              body: { scope: 'ledger', content: `round ${k} worker ${w} item ${i} ACCT-${k}-${w}-${i}`, source: 'bankapi:ledger', session: `s${w}` },
            });
            if (res.status === 201 && typeof res.body?.record?.id === 'string') {
              ledger.records.push(res.body.record.id);
              acked += 1;
            }
          } else if (roll < 0.75) {
            const from = r.pick(ledger.records);
            const res = await http(url, 'POST', '/v1/derivations', { token: tok.agent, body: { from: [from], transform: 'summarize', content: `summary ${k}-${w}-${i}`, session: `d${k}${w}` } });
            if (res.status === 201 && typeof res.body?.id === 'string') {
              ledger.records.push(res.body.id);
              acked += 1;
            }
          } else {
            const res = await http(url, 'POST', '/v1/decisions', { token: tok.agent, body: { session: `a${w}`, action: { type: 'pay', args: { to: `ACCT-${k}-${w}-${i - 1}`, amount: 10 } } } });
            if (res.status === 201 && typeof res.body?.id === 'string') {
              ledger.decisions.push(res.body.id);
              acked += 1;
            }
          }
        } catch {
          return; // the server is gone: this request was not acknowledged
        }
      }
    };
    const workers = [0, 1, 2, 3].map((w) => worker(w));
    await sleep(r.int(80, 700));
    proc.proc.kill('SIGKILL');
    await proc.stop();
    stop = true;
    await Promise.all(workers);
    proc = await startServerProcess({ cwd: dir });
    // every acknowledged item since the last check is there
    for (const id of ledger.records.slice(checked.records)) {
      const g = await http(proc.url, 'GET', `/v1/memories/${id}?session=crash-check-${k}`, { token: tok.bank });
      if (!tally.ok(g.status === 200 && g.body.id === id, () => `kill ${k + 1}: acknowledged record ${id} → ${g.status}`)) tally.lost += 1;
    }
    for (const id of ledger.decisions.slice(checked.decisions)) {
      const g = await http(proc.url, 'GET', `/v1/decisions/${id}`, { token: tok.agent });
      if (!tally.ok(g.status === 200 && g.body.id === id, () => `kill ${k + 1}: acknowledged decision ${id} → ${g.status}`)) tally.lost += 1;
    }
    checked = { records: ledger.records.length, decisions: ledger.decisions.length };
    const v = await http(proc.url, 'GET', '/v1/audit/verify', { token: tok.bank });
    tally.ok(v.status === 200 && v.body.ok === true, () => `kill ${k + 1}: audit verify ${v.status} ${JSON.stringify(v.body?.tenants?.map((t: { message: string }) => t.message))}`);
  }
  await proc.stop('SIGTERM');
  first = proc;
  // final: everything from every round, on a cleanly reopened store
  const mem = await openStore(join(dir, 'memauth.db'), { checkpointKey: false });
  try {
    const recs = await mem.driver.getRecords('acme', ledger.records);
    const missing = ledger.records.length - recs.length;
    tally.ok(missing === 0, () => `final: ${missing} acknowledged records missing`);
    const v = await mem.verifyAudit({});
    tally.ok(v.ok, () => `final verify: ${v.tenants.map((t) => t.message).join('; ')}`);
  } finally {
    await mem.close();
  }
  rmDir(dir);
  tally.note(`${kills} kills; ${attempted} requests sent, ${acked} acknowledged (${ledger.records.length} records, ${ledger.decisions.length} decisions), all present after restart`);
  return tally.result();
}

function cli(args: string[], cwd: string): { done: Promise<{ code: number | null; signal: string | null; out: string }>; kill: () => void } {
  const p = spawn(process.execPath, [CLI, ...args], { cwd, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  p.stdout.on('data', (c: Buffer) => (out += c.toString()));
  return { done: new Promise((res) => p.on('exit', (code, signal) => res({ code, signal, out }))), kill: () => p.kill('SIGKILL') };
}

async function cliCrash(o: Options): Promise<SuiteResult> {
  const tally = new Tally('crash: kill -9 CLI');
  const r = rng(o.seed ^ 0x51c);
  const kills = o.long ? 50 : 5;
  const dir = tempDir();
  const db = join(dir, 'memauth.db');
  const mem0 = await openStore(db);
  await registerCast(mem0, 'acme');
  const { record: seedRec } = await mem0.write({ tenant: 'acme', scope: 'ledger', principal: 'bank', content: 'seed ACCT-SEED', source: 'bankapi:seed' });
  await mem0.close();
  const ledger = { records: [seedRec.id], decisions: [] as string[] };
  let started = 0;
  let killed = 0;
  for (let k = 0; k < kills; k += 1) {
    const procs = [0, 1, 2].map((j) => {
      const roll = r.next();
      const base = ['--db', db, '--tenant', 'acme', '--json'];
      const args =
        roll < 0.5
          ? [...base, 'write', '--scope', 'ledger', '--principal', 'bank', '--source', 'bankapi:cli', '--content', `cli ${k}-${j} ACCT-C${k}${j}`]
          : roll < 0.75
            ? [...base, 'derive', '--principal', 'agent', '--from', r.pick(ledger.records), '--transform', 'summarize', '--content', `cli summary ${k}-${j}`]
            : [...base, 'authorize', '--action', 'pay', '--args', JSON.stringify({ to: `ACCT-C${k}${j}`, amount: 5 })];
      started += 1;
      return { kind: args[7] === 'write' ? 'write' : roll < 0.75 ? 'derive' : 'authorize', ...cli(args, dir) };
    });
    const victim = r.int(0, procs.length - 1);
    await sleep(r.int(150, 900));
    procs[victim]?.kill();
    for (const p of procs) {
      const res = await p.done;
      if (res.signal === 'SIGKILL') {
        killed += 1;
        continue;
      }
      let body: { id?: string; record?: { id?: string } } = {};
      try {
        body = JSON.parse(res.out.trim().split('\n').pop() ?? '{}') as typeof body;
      } catch {
        body = {};
      }
      const id = body.record?.id ?? body.id;
      if ((res.code === 0 || (p.kind === 'authorize' && res.code === 1)) && typeof id === 'string') (id.startsWith('dec_') ? ledger.decisions : ledger.records).push(id);
      else tally.ok(false, () => `round ${k + 1}: a CLI that was not killed exited ${res.code}: ${res.out.slice(0, 200)}`);
    }
    const mem = await openStore(db, { checkpointKey: false });
    try {
      const recs = await mem.driver.getRecords('acme', ledger.records);
      const m = ledger.records.length - recs.length;
      tally.lost += m;
      tally.ok(m === 0, () => `round ${k + 1}: ${m} acknowledged records missing`);
      for (const d of ledger.decisions) if (!(await mem.driver.getDecision('acme', d))) (tally.ok(false, () => `round ${k + 1}: decision ${d} missing`), (tally.lost += 1));
      const v = await mem.verifyAudit({});
      tally.ok(v.ok, () => `round ${k + 1}: verify: ${v.tenants.map((t) => t.message).join('; ')}`);
    } finally {
      await mem.close();
    }
  }
  rmDir(dir);
  tally.note(
    `${kills} rounds of 3 concurrent CLI processes, one killed at a random moment each (${killed} died by SIGKILL, the rest finished); ${ledger.records.length} records and ${ledger.decisions.length} decisions acknowledged, all present; chain verified each round`,
  );
  return tally.result();
}

export async function run(o: Options): Promise<SuiteResult[]> {
  return [await serverCrash(o), await cliCrash(o)];
}
