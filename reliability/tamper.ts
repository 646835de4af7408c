/**
 * Tamper detection: random mutations of a database file made outside memauth (the immutability
 * triggers dropped first, as an attacker with file access would), each on a fresh copy; the real
 * `memauth audit verify --json` must exit 1 and name the first bad entry / record / checkpoint —
 * also when run a second time (a verify must not bless what it found). A record inserted outside
 * the API is also cited in a decision: it must never authorize.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { entryHash, signCheckpoint } from '../src/core/audit.js';
import { CLI, cleanEnv } from '../test/server-helpers.js';
import { type Options, REL_POLICY, type SuiteResult, Tally, openStore, registerCast, rmDir, rng, tempDir } from './common.js';

type Db = Database.Database;
const TENANTS = ['acme', 'globex'] as const;

/** What `audit verify` must report for a mutation. */
type Expect = { tenant: string; chainSeq: number } | { tenant: string; recordId: string; problem?: string } | { tenant: string; checkpoint: readonly string[] };

interface Mutation {
  readonly kind: string;
  readonly apply: (db: Db, r: ReturnType<typeof rng>, dir: string) => Expect;
  /** also check that a decision citing this record id is denied. */
  readonly citeForged?: boolean;
}

const dropTriggers = (db: Db): void => {
  for (const { name } of db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").all() as Array<{ name: string }>) db.exec(`DROP TRIGGER "${name}"`);
};
const head = (db: Db, t: string): number => (db.prepare('SELECT max(seq) AS s FROM audit WHERE tenant = ?').get(t) as { s: number }).s;
const records = (db: Db, t: string, active = true): Array<Record<string, unknown>> =>
  db.prepare(`SELECT * FROM records WHERE tenant = ? ${active ? "AND status = 'active'" : ''} ORDER BY id`).all(t) as Array<Record<string, unknown>>;
const AUTH = ['system_policy', 'user_confirmed', 'trusted_tool_verified', 'model_inferred', 'external_untrusted'];

function recField(field: string, mut: (v: unknown, r: ReturnType<typeof rng>) => unknown): Mutation['apply'] {
  return (db, r) => {
    const t = r.pick(TENANTS);
    const rec = r.pick(records(db, t));
    const id = rec.id as string;
    dropTriggers(db);
    db.prepare(`UPDATE records SET ${field} = ? WHERE id = ?`).run(mut(rec[field], r), id);
    return { tenant: t, recordId: id, problem: 'row_differs_from_audit' };
  };
}

/** Rewrite audit rows from `from` on so that the chain links again (the chain is unkeyed). */
function rehash(db: Db, t: string, from: number): void {
  const rows = db.prepare('SELECT * FROM audit WHERE tenant = ? AND seq >= ? ORDER BY seq').all(t, from - 1) as Array<Record<string, unknown>>;
  let prev = from > 1 ? (rows.shift()?.hash as string) : null;
  const upd = db.prepare('UPDATE audit SET prev_hash = ?, hash = ? WHERE tenant = ? AND seq = ?');
  for (const row of rows) {
    if (Number(row.seq) < from) continue;
    const prevHash = prev ?? (row.prev_hash as string);
    const h = entryHash({ seq: Number(row.seq), prevHash, op: row.op as never, payload: JSON.parse(row.payload as string), policyVersion: row.policy_version as string });
    upd.run(prevHash, h, t, row.seq);
    prev = h;
  }
}

/**
 * Rewrite the payload of one audit entry (not the first) of a random tenant and rehash the chain
 * from there on, as an attacker with write access to the file would. @returns the tenant.
 */
function rewriteAndRehash(db: Db, r: ReturnType<typeof rng>): string {
  const t = r.pick(TENANTS);
  const seq = r.int(2, head(db, t));
  const row = db.prepare('SELECT payload FROM audit WHERE tenant = ? AND seq = ?').get(t, seq) as { payload: string };
  dropTriggers(db);
  db.prepare('UPDATE audit SET payload = ? WHERE tenant = ? AND seq = ?').run(JSON.stringify({ ...(JSON.parse(row.payload) as object), injected: 'attacker' }), t, seq);
  rehash(db, t, seq);
  return t;
}

/** The attacker signs a checkpoint of `at` with a key of their own, in the database and in the sidecar file. */
function selfSignedCheckpoint(db: Db, dir: string, t: string, at: { seq: number; hash: string }): void {
  const key = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const cp = signCheckpoint(t, at, new Date(Date.now() + 60_000).toISOString(), key);
  db.prepare('INSERT INTO checkpoints (tenant, seq, hash, at, public_key, signature) VALUES (?, ?, ?, ?, ?, ?)').run(cp.tenant, cp.seq, cp.hash, cp.at, cp.publicKey, cp.signature);
  writeFileSync(join(dir, 'memauth.db.checkpoints'), `${JSON.stringify(cp)}\n`, { flag: 'a' });
}

const MUTATIONS: Mutation[] = [
  { kind: 'record.content', apply: recField('content', (v) => `${String(v)} (edited)`) },
  { kind: 'record.origin', apply: recField('origin_authority', (v, r) => r.pick(AUTH.filter((a) => a !== v))) },
  { kind: 'record.origin_principal', apply: recField('origin_principal', (v) => (v === 'alice' ? 'mallory' : 'alice')) },
  { kind: 'record.taint', apply: recField('taint_lowest', (v, r) => r.pick(AUTH.filter((a) => a !== v))) },
  { kind: 'record.taint_channels', apply: recField('taint_channels', (v) => (v === '[]' ? '["merge"]' : '[]')) },
  { kind: 'record.source', apply: recField('origin_source', () => 'bankapi:forged') },
  { kind: 'record.scope', apply: recField('scope', () => 'elsewhere') },
  { kind: 'record.expires_at', apply: recField('expires_at', () => '2999-01-01T00:00:00.000Z') },
  {
    kind: 'record.erased_without_delete',
    apply: (db, r) => {
      const t = r.pick(TENANTS);
      const rec = r.pick(records(db, t));
      dropTriggers(db);
      db.prepare("UPDATE records SET content = NULL, status = 'deleted', deleted_at = ? WHERE id = ?").run(new Date().toISOString(), rec.id);
      return { tenant: t, recordId: rec.id as string, problem: 'erased_without_delete' };
    },
  },
  {
    kind: 'derivation.edge_added',
    apply: (db, r) => {
      const t = r.pick(TENANTS);
      const recs = records(db, t);
      const a = r.pick(recs);
      dropTriggers(db);
      db.prepare("INSERT INTO derivations (record_id, ord, from_id, transform, kind) VALUES (?, 99, ?, 'summarize', 'declared')").run(a.id, r.pick(recs).id);
      return { tenant: t, recordId: a.id as string, problem: 'row_differs_from_audit' };
    },
  },
  {
    kind: 'audit.payload',
    apply: (db, r) => {
      const t = r.pick(TENANTS);
      const seq = r.int(1, head(db, t));
      const row = db.prepare('SELECT payload FROM audit WHERE tenant = ? AND seq = ?').get(t, seq) as { payload: string };
      const p = JSON.parse(row.payload) as Record<string, unknown>;
      const keys = Object.keys(p);
      const k = keys.length > 0 && r.next() < 0.8 ? r.pick(keys) : 'injected';
      p[k] = typeof p[k] === 'string' ? `${p[k] as string}x` : r.pick(['user_confirmed', 0, null, true, ['x']]);
      dropTriggers(db);
      db.prepare('UPDATE audit SET payload = ? WHERE tenant = ? AND seq = ?').run(JSON.stringify(p), t, seq);
      return { tenant: t, chainSeq: seq };
    },
  },
  {
    kind: 'audit.op',
    apply: (db, r) => {
      const t = r.pick(TENANTS);
      const seq = r.int(1, head(db, t));
      const op = (db.prepare('SELECT op FROM audit WHERE tenant = ? AND seq = ?').get(t, seq) as { op: string }).op;
      dropTriggers(db);
      db.prepare('UPDATE audit SET op = ? WHERE tenant = ? AND seq = ?').run(r.pick(['write', 'decide', 'confirm', 'corroborate', 'bogus'].filter((o) => o !== op)), t, seq);
      return { tenant: t, chainSeq: seq };
    },
  },
  {
    kind: 'audit.delete_row',
    apply: (db, r) => {
      const t = r.pick(TENANTS);
      const seq = r.int(1, head(db, t) - 1);
      dropTriggers(db);
      db.prepare('DELETE FROM audit WHERE tenant = ? AND seq = ?').run(t, seq);
      return { tenant: t, chainSeq: seq };
    },
  },
  {
    kind: 'audit.reorder',
    apply: (db, r) => {
      const t = r.pick(TENANTS);
      const h = head(db, t);
      const a = r.int(1, h - 1);
      const b = r.int(a + 1, h);
      dropTriggers(db);
      // swap everything but the seq: the two entries change places
      const get = db.prepare('SELECT prev_hash, op, payload, policy_version, hash FROM audit WHERE tenant = ? AND seq = ?');
      const ra = get.get(t, a) as Record<string, unknown>;
      const rb = get.get(t, b) as Record<string, unknown>;
      const upd = db.prepare('UPDATE audit SET prev_hash = ?, op = ?, payload = ?, policy_version = ?, hash = ? WHERE tenant = ? AND seq = ?');
      upd.run(rb.prev_hash, rb.op, rb.payload, rb.policy_version, rb.hash, t, a);
      upd.run(ra.prev_hash, ra.op, ra.payload, ra.policy_version, ra.hash, t, b);
      return { tenant: t, chainSeq: a };
    },
  },
  {
    kind: 'audit.truncate_tail',
    apply: (db, r) => {
      const t = r.pick(TENANTS);
      const h = head(db, t);
      const k = r.int(1, Math.min(10, h - 1));
      dropTriggers(db);
      db.prepare('DELETE FROM audit WHERE tenant = ? AND seq > ?').run(t, h - k);
      return { tenant: t, checkpoint: ['chain_shorter_than_checkpoint'] };
    },
  },
  {
    kind: 'audit.truncate_tail+db_checkpoints_deleted',
    apply: (db, r) => {
      const t = r.pick(TENANTS);
      const h = head(db, t);
      dropTriggers(db);
      db.prepare('DELETE FROM audit WHERE tenant = ? AND seq > ?').run(t, h - r.int(1, 5));
      db.prepare('DELETE FROM checkpoints').run();
      return { tenant: t, checkpoint: ['chain_shorter_than_checkpoint'] };
    },
  },
  {
    kind: 'audit.rewrite+rehash',
    apply: (db, r) => {
      // the chain is unkeyed: recompute every hash after the edit; only the signed checkpoint can tell
      const t = rewriteAndRehash(db, r);
      return { tenant: t, checkpoint: ['hash_differs_from_checkpoint'] };
    },
  },
  {
    kind: 'audit.rewrite+rehash+sidecar_removed',
    apply: (db, r, dir) => {
      // the sidecar copy of the checkpoints is gone; only the database's checkpoint is left
      const t = rewriteAndRehash(db, r);
      rmSync(join(dir, 'memauth.db.checkpoints'), { force: true });
      return { tenant: t, checkpoint: ['hash_differs_from_checkpoint'] };
    },
  },
  {
    kind: 'audit.rewrite+rehash+self_signed_checkpoint',
    apply: (db, r, dir) => {
      // as above, and the attacker signs a checkpoint of the new head with a key of their own,
      // in the database and in the sidecar file
      const t = rewriteAndRehash(db, r);
      const h = db.prepare('SELECT seq, hash FROM audit WHERE tenant = ? ORDER BY seq DESC LIMIT 1').get(t) as { seq: number; hash: string };
      selfSignedCheckpoint(db, dir, t, h);
      return { tenant: t, checkpoint: ['bad_signature', 'hash_differs_from_checkpoint'] };
    },
  },
  {
    kind: 'audit.rewrite+rehash+append+self_signed_checkpoint',
    apply: (db, r, dir) => {
      // as above, plus one more chained entry so the attacker's checkpoint is the newest by seq
      const t = rewriteAndRehash(db, r);
      const last = db.prepare('SELECT * FROM audit WHERE tenant = ? ORDER BY seq DESC LIMIT 1').get(t) as Record<string, unknown>;
      const e = { seq: Number(last.seq) + 1, prevHash: last.hash as string, op: 'session' as const, payload: { note: 'attacker' }, policyVersion: last.policy_version as string };
      const h = entryHash(e);
      db.prepare('INSERT INTO audit (tenant, seq, prev_hash, op, payload, policy_version, hash) VALUES (?, ?, ?, ?, ?, ?, ?)').run(
        t,
        e.seq,
        e.prevHash,
        e.op,
        JSON.stringify(e.payload),
        e.policyVersion,
        h,
      );
      selfSignedCheckpoint(db, dir, t, { seq: e.seq, hash: h });
      return { tenant: t, checkpoint: ['bad_signature', 'hash_differs_from_checkpoint'] };
    },
  },
  {
    kind: 'record.forged_insert',
    citeForged: true,
    apply: (db, r) => {
      const t = r.pick(TENANTS);
      const id = `mem_forged${String(r.int(0, 1e9)).padStart(10, '0')}`;
      const now = new Date().toISOString();
      const template = r.pick(records(db, t));
      dropTriggers(db);
      db.prepare(
        `INSERT INTO records (id, tenant, scope, content, content_hash, created_at, expires_at, origin_authority, origin_principal, origin_source, origin_written_at,
          taint_lowest, taint_channels, taint_sources, taint_oldest_source_at, policy_version, write_reason, audit_seq, status, deleted_at)
         VALUES (?, ?, 'vendors', 'Acme pays ACCT-FORGED-1', ?, ?, NULL, 'system_policy', 'pipeline', 'system:policy', ?, 'system_policy', '[]', '[]', ?, ?, 'forged', ?, 'active', NULL)`,
      ).run(id, t, template.content_hash, now, now, now, template.policy_version, r.pick([template.audit_seq, 999_999]));
      return { tenant: t, recordId: id, problem: 'no_audit_entry' };
    },
  },
  {
    kind: 'corroboration.forged_insert',
    apply: (db, r) => {
      const t = r.pick(TENANTS);
      const rec = r.pick(records(db, t));
      const id = `cor_forged${r.int(0, 1e9)}`;
      dropTriggers(db);
      db.prepare(
        "INSERT INTO corroborations (id, tenant, record_id, principal_id, authority, domain, evidence_ref, at, audit_seq) VALUES (?, ?, ?, 'registry', 'trusted_tool_verified', 'registry.example', 'registry:x', ?, 1)",
      ).run(id, t, rec.id, new Date().toISOString());
      return { tenant: t, recordId: id, problem: 'corroboration_not_in_audit' };
    },
  },
  {
    kind: 'confirmation_use.deleted',
    apply: (db, r) => {
      const rows = db.prepare('SELECT tenant, confirmation_id, decision_id FROM confirmation_uses').all() as Array<{ tenant: string; confirmation_id: string; decision_id: string }>;
      const u = r.pick(rows);
      dropTriggers(db);
      db.prepare('DELETE FROM confirmation_uses WHERE decision_id = ?').run(u.decision_id);
      return { tenant: u.tenant, recordId: u.confirmation_id, problem: 'confirmation_uses_differ_from_audit' };
    },
  },
];

/** Build the base database through the API: writes, derivations, corroborations, confirmations, decisions, deletions in two tenants. */
async function buildBase(dir: string): Promise<void> {
  const mem = await openStore(join(dir, 'memauth.db'));
  for (const t of TENANTS) {
    await registerCast(mem, t);
    const s = mem.newSessionId();
    const ids: string[] = [];
    for (let i = 0; i < 12; i += 1) {
      const { record } = await mem.write({
        tenant: t,
        scope: 'vendors',
        principal: i % 3 === 0 ? 'browser' : i % 3 === 1 ? 'bank' : 'alice',
        content: `${t} vendor ${i} settles through ACCT-${1000 + i}`,
        source: i % 3 === 0 ? `https://ex.example/${i}` : i % 3 === 1 ? `bankapi:acct/${i}` : undefined,
        session: s,
      });
      ids.push(record.id);
    }
    const d = await mem.derive({ tenant: t, principal: 'agent', from: [ids[0] as string, ids[1] as string], transform: 'summarize', content: `${t} summary of vendors`, session: s });
    ids.push(d.id);
    await mem.corroborate({ tenant: t, recordId: ids[2] as string, principal: 'registry', evidence: 'registry:acct/2' });
    await mem.corroborate({ tenant: t, recordId: ids[2] as string, principal: 'crm', evidence: 'crm:acct/2' });
    const c = await mem.confirm({ tenant: t, principal: 'alice', action: { type: 'pay', args: { to: 'ACCT-1001', amount: 10 } }, maxUses: 3 });
    await mem.authorize({ tenant: t, session: s, action: { type: 'pay', args: { to: 'ACCT-1001', amount: 10 } }, confirmationId: c.id });
    await mem.authorize({ tenant: t, session: s, action: { type: 'pay', args: { to: 'ACCT-1000', amount: 10 } } });
    await mem.authorize({ tenant: t, action: { type: 'draft', args: { text: 'hello' } } });
    await mem.delete({ tenant: t, id: ids[3] as string });
  }
  await mem.close(); // signs a checkpoint of each tenant's head (database + sidecar)
}

function runCli(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, ...args], { cwd, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    p.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    p.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

interface TenantRep {
  tenant: string;
  ok: boolean;
  message: string;
  chain: { ok: boolean; firstBadSeq?: number };
  checkpoint: { ok: boolean; problem?: string } | null;
  records: { bad: Array<{ id: string; problem: string }> };
}

function judge(rep: { ok: boolean; tenants: TenantRep[] }, exp: Expect): string | null {
  if (rep.ok) return 'verify reported ok';
  const t = rep.tenants.find((x) => x.tenant === exp.tenant);
  if (!t) return `tenant ${exp.tenant} missing from the report`;
  if (t.ok) return `tenant ${exp.tenant} reported ok`;
  if ('chainSeq' in exp) return t.chain.firstBadSeq === exp.chainSeq ? null : `expected chain broken at ${exp.chainSeq}; got: ${t.message}`;
  if ('checkpoint' in exp) return t.checkpoint && !t.checkpoint.ok && exp.checkpoint.includes(t.checkpoint.problem ?? '') ? null : `expected checkpoint ${exp.checkpoint.join('|')}; got: ${t.message}`;
  if (!t.chain.ok) return `expected record ${exp.recordId} named; got: ${t.message}`;
  const first = t.records.bad[0];
  if (!first || first.id !== exp.recordId || (exp.problem !== undefined && first.problem !== exp.problem)) return `expected ${exp.recordId} ${exp.problem ?? ''} first; got: ${t.message}`;
  if (!t.message.includes(exp.recordId)) return `message does not name ${exp.recordId}: ${t.message}`;
  return null;
}

export async function run(o: Options): Promise<SuiteResult> {
  const tally = new Tally('tamper: audit verify (CLI)');
  const r = rng(o.seed ^ 0x7a3);
  const base = tempDir();
  const policyFile = join(base, 'policy.json');
  writeFileSync(policyFile, JSON.stringify(REL_POLICY));
  await buildBase(base);
  // sanity: the untouched base verifies
  const clean = await runCli(['--db', join(base, 'memauth.db'), '--json', 'audit', 'verify'], base);
  tally.ok(clean.code === 0, () => `untampered base: exit ${clean.code}: ${clean.stdout}${clean.stderr}`);

  const perKind = o.long ? 16 : 1;
  const jobs: Array<{ m: Mutation; i: number }> = [];
  for (const m of MUTATIONS) for (let i = 0; i < perKind; i += 1) jobs.push({ m, i });
  const kinds = new Map<string, { tried: number; detected: number }>();
  let forgedDenied = 0;
  let forgedCited = 0;
  const worker = async (): Promise<void> => {
    for (let job = jobs.shift(); job; job = jobs.shift()) {
      const { m } = job;
      const dir = tempDir();
      try {
        for (const f of ['memauth.db', 'memauth.db.key', 'memauth.db.checkpoints']) if (existsSync(join(base, f))) copyFileSync(join(base, f), join(dir, f));
        const db = new Database(join(dir, 'memauth.db'));
        let exp: Expect;
        try {
          exp = m.apply(db, r, dir);
        } finally {
          db.close();
        }
        const k = kinds.get(m.kind) ?? { tried: 0, detected: 0 };
        kinds.set(m.kind, k);
        k.tried += 1;
        let okBoth = true;
        for (const pass of [1, 2]) {
          const res = await runCli(['--db', 'memauth.db', '--json', 'audit', 'verify'], dir);
          let verdict: string | null;
          if (res.code !== 1) verdict = `exit ${res.code} (want 1): ${res.stdout.slice(0, 300)}${res.stderr.slice(0, 300)}`;
          else {
            try {
              verdict = judge(JSON.parse(res.stdout) as never, exp);
            } catch {
              verdict = `unparseable output: ${res.stdout.slice(0, 300)}`;
            }
          }
          okBoth = tally.ok(verdict === null, () => `${m.kind} (verify run ${pass}): ${verdict}`) && okBoth;
        }
        if (okBoth) k.detected += 1;
        if (m.citeForged && 'recordId' in exp) {
          const mem = await openStore(join(dir, 'memauth.db'), { checkpointKey: false });
          try {
            forgedCited += 1;
            const d = await mem.authorize({
              tenant: exp.tenant,
              action: { type: 'pay', args: { to: 'ACCT-FORGED-1', amount: 5 } },
              dependsOn: [exp.recordId],
              userTurn: { principal: 'alice', text: 'pay ACCT-FORGED-1 5' },
            });
            const v = await mem.get({ tenant: exp.tenant, id: exp.recordId }).catch(() => null);
            const ok = d.outcome === 'deny' && (v === null || v.actionAuthority === 'external_untrusted');
            if (tally.ok(ok, () => `forged record ${exp.recordId} cited: outcome ${d.outcome}, reasons ${d.reasons.map((x) => x.code).join(',')}, view authority ${v?.actionAuthority}`))
              forgedDenied += 1;
          } finally {
            await mem.close();
          }
        }
      } finally {
        rmDir(dir);
      }
    }
  };
  await Promise.all([worker(), worker()]);
  rmDir(base);
  const summary = [...kinds].map(([k, v]) => `${k} ${v.detected}/${v.tried}`).join(', ');
  tally.note(`${[...kinds.values()].reduce((a, v) => a + v.tried, 0)} mutations (each verified twice by the real CLI), detected and first bad entry named: ${summary}`);
  tally.note(`forged records cited in a decision: ${forgedDenied}/${forgedCited} denied`);
  return tally.result();
}
