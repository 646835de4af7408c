/**
 * Chain coverage of principals and tokens (docs/design.md § Audit log: every row that can grant
 * authority or identity is checked against the chain). Many out-of-band forgeries, each on a
 * fresh copy of one store, made with the database file open in better-sqlite3 and every trigger
 * dropped (an attacker with the file): inserted principals of each kind (with and without a
 * token, in a tenant with a chain or without one), altered kind / ceiling / domain / creation
 * time, inserted tokens (principal and admin), altered tokens (re-pointed principal or tenant,
 * turned into an admin token, changed hash or time), un-revoked tokens, deleted registration and
 * token_issue entries, and entries rewritten in place with a recomputed hash. Each must be refused
 * by the gate (`UNKNOWN_PRINCIPAL`) or by authentication (401), and named by `audit verify`.
 */
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { entryHash } from '../src/core/audit.js';
import { KIND_CEILING } from '../src/core/types.js';
import type { Memory } from '../src/index.js';
import { TokenService, tokenHash } from '../src/server/tokens.js';
import { KINDS, type Kind, type Options, type SuiteResult, Tally, openStore, registerCast, rmDir, rng, tempDir } from './common.js';

type Db = Database.Database;
type Rng = ReturnType<typeof rng>;
const CAST = ['browser', 'alice', 'agent', 'mallory', 'pipeline', 'bank', 'bank2', 'registry', 'crm'] as const;
const AUTH = ['system_policy', 'user_confirmed', 'trusted_tool_verified', 'model_inferred', 'external_untrusted'];
const NOW = '2025-06-01T00:00:00.000Z';

/** The base store: who holds which secret. */
interface Base {
  readonly file: string;
  /** principal id (tenant acme) → token id and secret of an active token. */
  readonly active: Map<string, { id: string; secret: string }>;
  /** revoked tokens (acme). */
  readonly revoked: Array<{ id: string; secret: string; principal: string }>;
  readonly admin: { id: string; secret: string };
}

/** What a mutation expects: refusals to check on the opened store and what verify must name. */
interface Expect {
  /** principals (tenant, id) every use of which must be UNKNOWN_PRINCIPAL. */
  readonly unknown: Array<{ tenant: string; id: string; user?: boolean }>;
  /** secrets that must not authenticate. */
  readonly refusedSecrets: string[];
  /** verify must fail; when given, this tenant must name this row id (with this problem prefix). */
  readonly named: { tenant: string; id: string; problem: string } | null;
}

const secretOf = (i: number): string => `mat_${Buffer.from(`forged-${i}-`.padEnd(32, 'x')).toString('base64url').slice(0, 43)}`;
const dropTriggers = (db: Db): void => {
  for (const { name } of db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger'").all() as Array<{ name: string }>) db.exec(`DROP TRIGGER "${name}"`);
};
const insertPrincipal = (db: Db, tenant: string, id: string, kind: string, max: string, domain: string): void => {
  db.prepare('INSERT INTO principals (tenant, id, kind, max_authority, domain, created_at) VALUES (?, ?, ?, ?, ?, ?)').run(tenant, id, kind, max, domain, NOW);
};
const insertToken = (db: Db, id: string, tenant: string | null, principal: string | null, secret: string): void => {
  db.prepare('INSERT INTO tokens (id, tenant, principal_id, hash, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL)').run(id, tenant, principal, tokenHash(secret), NOW);
};
/** The audit row of `op` in `tenant` whose payload names `field` = `value`. */
const entryOf = (db: Db, tenant: string, op: string, field: string, value: string): { seq: number; prev_hash: string; payload: string; policy_version: string } =>
  db.prepare(`SELECT * FROM audit WHERE tenant = ? AND op = ? AND json_extract(payload, '$.${field}') = ?`).get(tenant, op, value) as {
    seq: number;
    prev_hash: string;
    payload: string;
    policy_version: string;
  };
/** Rewrite an entry's payload in place and recompute its own hash (its successor's link breaks). */
const rewriteEntry = (db: Db, tenant: string, op: string, field: string, value: string, change: (p: Record<string, unknown>) => void): void => {
  const e = entryOf(db, tenant, op, field, value);
  const payload = JSON.parse(e.payload) as Record<string, unknown>;
  change(payload);
  const hash = entryHash({ seq: e.seq, prevHash: e.prev_hash, op: op as 'principal', payload, policyVersion: e.policy_version });
  db.prepare('UPDATE audit SET payload = ?, hash = ? WHERE tenant = ? AND seq = ?').run(JSON.stringify(payload), hash, tenant, e.seq);
};

type Mutation = (db: Db, r: Rng, base: Base, i: number) => Expect;

const MUTATIONS: Record<string, Mutation> = {
  insert_principal: (db, r, _b, i) => {
    const kind = r.pick(KINDS);
    const tenant = r.pick(['acme', 'globex', 'newco']);
    const id = `forged${i}`;
    insertPrincipal(db, tenant, id, kind, r.next() < 0.5 ? KIND_CEILING[kind] : r.pick(AUTH), r.pick(['alice', 'bank.example', `d${i}.example`]));
    return { unknown: [{ tenant, id, user: kind === 'user' }], refusedSecrets: [], named: { tenant, id: `principal:${id}`, problem: 'principal_not_in_audit' } };
  },
  insert_principal_and_token: (db, r, _b, i) => {
    const kind = r.pick(KINDS);
    const tenant = r.pick(['acme', 'newco']);
    const id = `forged${i}`;
    insertPrincipal(db, tenant, id, kind, KIND_CEILING[kind], `d${i}.example`);
    insertToken(db, `tok_forged${i}`, tenant, id, secretOf(i));
    return { unknown: [{ tenant, id, user: kind === 'user' }], refusedSecrets: [secretOf(i)], named: { tenant, id: `tok_forged${i}`, problem: 'token_no_audit_entry' } };
  },
  alter_principal: (db, r, b) => {
    const id = r.pick(CAST);
    const col = r.pick(['kind', 'max_authority', 'domain', 'created_at']);
    const value =
      col === 'kind'
        ? r.pick(KINDS.filter((k) => k !== (db.prepare('SELECT kind FROM principals WHERE tenant = ? AND id = ?').get('acme', id) as { kind: Kind }).kind))
        : col === 'max_authority'
          ? r.pick(['system_policy', 'user_confirmed'])
          : col === 'domain'
            ? r.pick(['independent.example', 'alice', 'registry.example'])
            : '2020-01-01T00:00:00.000Z';
    const n = db.prepare(`UPDATE principals SET ${col} = ? WHERE tenant = ? AND id = ? AND ${col} <> ?`).run(value, 'acme', id, value).changes;
    if (n === 0) db.prepare("UPDATE principals SET created_at = '2020-01-01T00:00:00.000Z' WHERE tenant = ? AND id = ?").run('acme', id);
    return {
      unknown: [{ tenant: 'acme', id, user: true }],
      refusedSecrets: [(b.active.get(id) as { secret: string }).secret],
      named: { tenant: 'acme', id: `principal:${id}`, problem: 'principal_not_in_audit' },
    };
  },
  insert_token: (db, r, _b, i) => {
    const admin = r.next() < 0.3;
    const tenant = admin ? null : r.pick(['acme', 'globex']);
    insertToken(db, `tok_forged${i}`, tenant, admin ? null : r.pick(CAST), secretOf(i));
    return { unknown: [], refusedSecrets: [secretOf(i)], named: { tenant: tenant ?? '(admin)', id: `tok_forged${i}`, problem: 'token_no_audit_entry' } };
  },
  alter_token: (db, r, b, i) => {
    const holder = r.pick(CAST);
    const t = b.active.get(holder) as { id: string; secret: string };
    const how = r.pick(['principal', 'tenant', 'admin', 'created_at', 'hash']);
    let secret = t.secret;
    if (how === 'principal') db.prepare('UPDATE tokens SET principal_id = ? WHERE id = ?').run(r.pick(CAST.filter((c) => c !== holder)), t.id);
    else if (how === 'tenant') db.prepare("UPDATE tokens SET tenant = 'globex' WHERE id = ?").run(t.id);
    else if (how === 'admin') db.prepare('UPDATE tokens SET tenant = NULL, principal_id = NULL WHERE id = ?').run(t.id);
    else if (how === 'created_at') db.prepare("UPDATE tokens SET created_at = '2020-01-01T00:00:00.000Z' WHERE id = ?").run(t.id);
    else {
      secret = secretOf(i);
      db.prepare('UPDATE tokens SET hash = ? WHERE id = ?').run(tokenHash(secret), t.id);
    }
    const tenant = how === 'tenant' ? 'globex' : how === 'admin' ? '(admin)' : 'acme';
    return { unknown: [], refusedSecrets: [secret], named: { tenant, id: t.id, problem: how === 'admin' || how === 'tenant' ? 'token_' : 'token_row_differs_from_audit' } };
  },
  unrevoke_token: (db, r, b) => {
    const t = r.pick(b.revoked);
    db.prepare('UPDATE tokens SET revoked_at = NULL WHERE id = ?').run(t.id);
    return { unknown: [], refusedSecrets: [t.secret], named: { tenant: 'acme', id: t.id, problem: 'token_revocation_missing_from_row' } };
  },
  delete_registration_entry: (db, r, b) => {
    const id = r.pick(CAST);
    db.prepare("DELETE FROM audit WHERE tenant = 'acme' AND op = 'principal' AND json_extract(payload, '$.principalId') = ?").run(id);
    return { unknown: [{ tenant: 'acme', id, user: true }], refusedSecrets: [(b.active.get(id) as { secret: string }).secret], named: null };
  },
  delete_token_issue_entry: (db, r, b) => {
    const t = b.active.get(r.pick(CAST)) as { id: string; secret: string };
    db.prepare("DELETE FROM audit WHERE tenant = 'acme' AND op = 'token_issue' AND json_extract(payload, '$.tokenId') = ?").run(t.id);
    return { unknown: [], refusedSecrets: [t.secret], named: null };
  },
  rewrite_registration_entry: (db, r, b) => {
    // raise the row and its registration together, the entry's own hash recomputed
    const id = r.pick(['mallory', 'agent', 'browser', 'bank']);
    db.prepare("UPDATE principals SET kind = 'user', max_authority = 'user_confirmed' WHERE tenant = 'acme' AND id = ?").run(id);
    rewriteEntry(db, 'acme', 'principal', 'principalId', id, (p) => {
      p.kind = 'user';
      p.maxAuthority = 'user_confirmed';
    });
    return { unknown: [{ tenant: 'acme', id, user: true }], refusedSecrets: [(b.active.get(id) as { secret: string }).secret], named: null };
  },
  rewrite_token_issue_entry: (db, r, b) => {
    const holder = r.pick(['mallory', 'agent', 'browser']);
    const t = b.active.get(holder) as { id: string; secret: string };
    db.prepare("UPDATE tokens SET principal_id = 'alice' WHERE id = ?").run(t.id);
    rewriteEntry(db, 'acme', 'token_issue', 'tokenId', t.id, (p) => {
      p.principalId = 'alice';
    });
    return { unknown: [], refusedSecrets: [t.secret], named: null };
  },
};

async function buildBase(dir: string): Promise<Base> {
  const file = join(dir, 'base.db');
  const mem = await openStore(file, { checkpointKey: false });
  try {
    for (const t of ['acme', 'globex']) await registerCast(mem, t);
    await mem.write({ tenant: 'acme', scope: 'notes', principal: 'agent', content: 'Vendor ACME is paid to ACCT-1234' });
    const ts = new TokenService(mem.driver);
    const active = new Map<string, { id: string; secret: string }>();
    const revoked: Base['revoked'] = [];
    for (const p of CAST) {
      const a = await ts.issue({ tenant: 'acme', principal: p });
      active.set(p, { id: a.info.id, secret: a.token });
      const old = await ts.issue({ tenant: 'acme', principal: p });
      await ts.revoke(old.info.id);
      revoked.push({ id: old.info.id, secret: old.token, principal: p });
    }
    const admin = (await ts.ensureAdmin()) as { token: string; info: { id: string } };
    const report = await mem.verifyAudit({});
    if (!report.ok) throw new Error(`base store does not verify: ${report.tenants.map((x) => x.message).join('; ')}`);
    return { file, active, revoked, admin: { id: admin.info.id, secret: admin.token } };
  } finally {
    await mem.close();
  }
}

/** Every refusal the mutation expects, on the opened copy; returns what went wrong, or null. */
async function check(mem: Memory, e: Expect): Promise<string | null> {
  const code = async (fn: () => Promise<unknown>): Promise<string> => {
    try {
      await fn();
      return 'allowed';
    } catch (err) {
      return (err as { code?: string }).code ?? String(err);
    }
  };
  for (const u of e.unknown) {
    const w = await code(() => mem.write({ tenant: u.tenant, scope: 'chat', principal: u.id, content: 'pay ACCT-EVIL' }));
    if (w !== 'UNKNOWN_PRINCIPAL') return `write by ${u.tenant}/${u.id}: ${w}`;
    if (u.user === true) {
      const c = await code(() => mem.confirm({ tenant: u.tenant, principal: u.id, action: { type: 'pay', args: { to: 'ACCT-EVIL', amount: '9000' } } }));
      if (c !== 'UNKNOWN_PRINCIPAL') return `confirm by ${u.tenant}/${u.id}: ${c}`;
      const a = await code(() => mem.authorize({ tenant: u.tenant, action: { type: 'pay', args: { to: 'ACCT-EVIL' } }, userTurn: { principal: u.id, text: 'pay ACCT-EVIL' } }));
      if (a !== 'UNKNOWN_PRINCIPAL') return `user turn of ${u.tenant}/${u.id}: ${a}`;
    }
    if ((await mem.listPrincipals({ tenant: u.tenant })).some((p) => p.id === u.id)) return `${u.id} listed`;
  }
  const ts = new TokenService(mem.driver);
  for (const s of e.refusedSecrets) {
    const r = await code(() => ts.authenticate(s));
    if (r !== 'UNAUTHENTICATED') return `a token authenticated: ${r}`;
  }
  const report = await mem.verifyAudit({});
  if (report.ok) return 'verify says OK';
  if (e.named !== null) {
    const n = e.named;
    const bad = report.tenants.find((t) => t.tenant === n.tenant)?.records.bad ?? [];
    if (!bad.some((b) => b.id === n.id && b.problem.startsWith(n.problem))) return `verify does not name ${n.tenant}/${n.id} ${n.problem}: ${JSON.stringify(bad).slice(0, 300)}`;
  }
  return null;
}

/** The suite. Fast: 10 forgeries of each of the 10 kinds; long: 40 of each. */
export async function run(o: Options): Promise<SuiteResult> {
  const tally = new Tally('chain coverage of principals/tokens');
  const r = rng(o.seed);
  const dir = tempDir('memauth-rel-chain-');
  try {
    const base = await buildBase(dir);
    const per = o.long ? 40 : 10;
    let i = 0;
    for (const [kind, mutate] of Object.entries(MUTATIONS)) {
      for (let n = 0; n < per; n += 1) {
        i += 1;
        const file = join(dir, `case${i}.db`);
        copyFileSync(base.file, file);
        if (existsSync(`${base.file}-wal`)) copyFileSync(`${base.file}-wal`, `${file}-wal`);
        const db = new Database(file);
        let expect: Expect;
        try {
          dropTriggers(db);
          expect = mutate(db, r, base, i);
        } finally {
          db.close();
        }
        const mem = await openStore(file, { checkpointKey: false });
        try {
          const problem = await check(mem, expect);
          tally.ok(problem === null, () => `${kind} #${n}: ${problem}`);
        } finally {
          await mem.close();
        }
      }
    }
    tally.note(`${Object.keys(MUTATIONS).length} forgery kinds × ${per}: each refused by the gate or authentication and reported by audit verify`);
  } finally {
    rmDir(dir);
  }
  return tally.result();
}
