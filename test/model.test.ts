/**
 * Model-based tests (fast-check `commands` + `asyncModelRun`): random command sequences run on
 * the real Memory API over a real SQLite file and, in lock step, on a small reference model of
 * docs/design.md's rules written here from scratch. The model predicts every record's authority,
 * every corroborated action authority, every decision's dependencies, outcome and consumed
 * confirmation; the implementation must agree exactly.
 *
 * Reference model (independent of src/core): the lattice min; origin = min(principal ceiling,
 * source); taint = min over the writer's origin, declared inputs and every session read;
 * corroboration counted once per independent domain and evidence upstream, k = 2; scoped
 * confirmations matched on action and exact arguments, unexpired, single use; the high-tier rule.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { type Memory, isMemauthError, openMemory } from '../src/index.js';
import { P, TEST_POLICY, manualClock, registerCast } from './helpers.js';

// ------------------------------------------------------------------ the reference model

/** Lattice levels: external_untrusted 0 < model_inferred 1 < trusted_tool_verified 2 < user_confirmed 3 < system_policy 4. */
const LEVELS = ['external_untrusted', 'model_inferred', 'trusted_tool_verified', 'user_confirmed', 'system_policy'] as const;
const TRUSTED = 2;
type Kind = 'system' | 'user' | 'tool' | 'agent' | 'external';
const CEILING: Record<Kind, number> = { system: 4, user: 3, tool: 2, agent: 1, external: 0 };
/** The cast of test/helpers.ts registerCast: kind and independence domain. */
const CAST: Record<string, { kind: Kind; domain: string }> = {
  [P.browser]: { kind: 'tool', domain: 'browser.vendor' },
  [P.browser2]: { kind: 'tool', domain: 'browser.vendor' },
  [P.alice]: { kind: 'user', domain: 'alice' },
  [P.agent]: { kind: 'agent', domain: 'agent' },
  [P.mallory]: { kind: 'external', domain: 'mallory.example' },
  [P.pipeline]: { kind: 'system', domain: 'pipeline' },
  [P.bank]: { kind: 'tool', domain: 'bank.example' },
  [P.bank2]: { kind: 'tool', domain: 'bank.example' },
  [P.registry]: { kind: 'tool', domain: 'registry.example' },
  [P.crm]: { kind: 'tool', domain: 'crm.example' },
};
const who = (p: string): { kind: Kind; domain: string } => CAST[p] as { kind: Kind; domain: string };

/** TEST_POLICY's source rules, restated: verified upstreams are trusted_tool_verified, the web and mail untrusted; a non-tool speaking for itself has its ceiling. */
function sourceLevel(src: string, p: string): number {
  if (/^(bankapi|registry|crm):/.test(src)) return 2;
  if (/^(https?:\/\/|mailto:|email:)/.test(src)) return 0;
  if (src === `principal:${p}` && who(p).kind !== 'tool') return CEILING[who(p).kind];
  return 0;
}
const originLevel = (p: string, src: string): number => Math.min(CEILING[who(p).kind], sourceLevel(src, p));

interface MRec {
  id: string;
  writer: string;
  payee: string;
  level: number; // taint.lowestAuthority
  parents: number[]; // recorded derivation edges (declared + session)
  deleted: boolean;
}
interface MCorr {
  p: string;
  level: number;
  ev: { ref: string } | { rec: number };
  at: number;
}
interface MConf {
  id: string;
  action: string;
  payee: string;
  createdAt: number;
  expiresAt: number;
  used: boolean;
}
interface Model {
  now: number;
  recs: MRec[];
  corrs: Map<number, MCorr[]>;
  confs: MConf[];
  reads: [Set<number>, Set<number>];
  stats: Record<string, number>;
}
interface Real {
  mem: Memory;
  tenant: string;
  tick: () => void;
}

function ancestors(m: Model, r: number): Set<number> {
  const seen = new Set<number>();
  const stack = [...(m.recs[r]?.parents ?? [])];
  while (stack.length > 0) {
    const x = stack.pop() as number;
    if (!seen.has(x)) {
      seen.add(x);
      stack.push(...(m.recs[x]?.parents ?? []));
    }
  }
  return seen;
}

/** Action authority: the record's level, or the k-th best of k = 2 independent corroborations. */
function actionLevel(m: Model, r: number): number {
  const rec = m.recs[r] as MRec;
  const lineage = ancestors(m, r);
  const linPrincipals = new Set([rec.writer, ...[...lineage].map((x) => (m.recs[x] as MRec).writer)]);
  const linDomains = new Set([...linPrincipals].map((p) => who(p).domain));
  const eligible = (m.corrs.get(r) ?? []).filter((c) => {
    if (c.level < TRUSTED || linPrincipals.has(c.p) || linDomains.has(who(c.p).domain)) return false;
    if ('ref' in c.ev) return true;
    const e = c.ev.rec;
    return e !== r && !ancestors(m, e).has(r) && !lineage.has(e) && !(m.recs[e] as MRec).deleted;
  });
  eligible.sort((a, b) => b.level - a.level || a.at - b.at);
  const domains = new Set<string>();
  const upstreams = new Set<string>();
  const counted: MCorr[] = [];
  for (const c of eligible) {
    const up = 'ref' in c.ev ? `ref:${c.ev.ref}` : `domain:${who((m.recs[c.ev.rec] as MRec).writer).domain}`;
    if (domains.has(who(c.p).domain) || upstreams.has(up)) continue;
    domains.add(who(c.p).domain);
    upstreams.add(up);
    counted.push(c);
  }
  return counted.length >= 2 ? Math.max(rec.level, (counted[1] as MCorr).level) : rec.level;
}

/** The gate, restated: dependencies, hard reasons, the high-tier rule, then one matching unused confirmation. */
function predictDecision(
  m: Model,
  a: { action: string; payee: string; session: number | null; declared: number | null; contextSession: boolean },
): { outcome: string; deps: Map<number, Set<string>>; conf: MConf | null; path: string } {
  const reads = a.session === null ? new Set<number>() : m.reads[a.session as 0 | 1];
  const candidates = new Set([...reads, ...(a.declared !== null ? [a.declared] : [])]);
  const deps = new Map<number, Set<string>>();
  const add = (r: number, why: string): void => void deps.set(r, (deps.get(r) ?? new Set()).add(why));
  if (a.declared !== null) add(a.declared, 'declared');
  if (a.contextSession) for (const r of reads) add(r, 'context');
  const suppliers = [...candidates].filter((r) => !(m.recs[r] as MRec).deleted && (m.recs[r] as MRec).payee === a.payee);
  for (const r of suppliers) add(r, 'value');
  const high = a.action === 'pay';
  let hard = false;
  let soft = false;
  let corroborated = false;
  for (const [r, why] of deps) {
    const direct = why.has('declared') || why.has('value');
    if ((m.recs[r] as MRec).deleted && direct) hard = true;
    else if (actionLevel(m, r) >= TRUSTED) corroborated ||= (m.recs[r] as MRec).level < TRUSTED;
    else if (high) soft = true;
  }
  // the payee must be supplied by a trusted dependency (the user's turn names none)
  if (high && !suppliers.some((r) => actionLevel(m, r) >= TRUSTED)) soft = true;
  if (hard) return { outcome: 'deny', deps, conf: null, path: 'hard' };
  if (!soft) return { outcome: 'allow', deps, conf: null, path: corroborated ? 'corroborated' : 'trusted' };
  const conf = [...m.confs].sort((x, y) => x.createdAt - y.createdAt).find((c) => c.action === a.action && c.payee === a.payee && c.expiresAt > m.now && !c.used) ?? null;
  return { outcome: conf ? 'allow' : 'deny', deps, conf, path: conf ? 'confirmed' : 'denied' };
}

// ------------------------------------------------------------------ commands

const PAYEES = ['ACCT-1111', 'ACCT-6666'] as const;
const WRITERS = [P.bank, P.registry, P.browser, P.mallory, P.alice, P.agent, P.pipeline] as const;
const SOURCES = [undefined, 'https://evil.example/page', 'bankapi:acct/1', 'registry:vendor/2', 'email:billing@vendor.example'] as const;
const DERIVERS = [P.agent, P.pipeline, P.alice, P.browser] as const;
const CORROBORATORS = [P.bank, P.bank2, P.registry, P.crm, P.browser, P.mallory, P.alice, P.agent] as const;
const EVIDENCE = ['bankapi:verify/1', 'registry:check/2', 'crm:lookup/3', 'https://blog.example/post', 'principal:alice', 'MEMORY'] as const;
const sessionName = (real: Real, s: number): string => `${real.tenant}-s${s}`;
/** The i-th most recent record (small i are likely: commands tend to act on what was just written). */
const pick = (n: number, i: number): number => n - 1 - (i % n);
let counter = 0;
const contentFor = (p: string, payee: string): string => {
  const n = ++counter;
  return `entry ${n} from ${p}: the payee is ${payee}; entry ${n}`;
};

type Cmd = fc.AsyncCommand<Model, Real>;

class WriteCmd implements Cmd {
  constructor(
    readonly p: string,
    readonly src: string | undefined,
    readonly payee: string,
    readonly session: number | null,
  ) {}
  check(): boolean {
    return true;
  }
  async run(m: Model, r: Real): Promise<void> {
    r.tick();
    const content = contentFor(this.p, this.payee);
    const res = await r.mem.write({
      tenant: r.tenant,
      scope: 'main',
      principal: this.p,
      content,
      ...(this.src !== undefined ? { source: this.src } : {}),
      ...(this.session !== null ? { session: sessionName(r, this.session) } : {}),
    });
    assert.equal(res.created, true);
    const reads = this.session === null ? [] : [...m.reads[this.session as 0 | 1]];
    const parents = who(this.p).kind === 'agent' ? reads : [];
    const level = Math.min(originLevel(this.p, this.src ?? `principal:${this.p}`), ...parents.map((x) => (m.recs[x] as MRec).level));
    m.recs.push({ id: res.record.id, writer: this.p, payee: this.payee, level, parents, deleted: false });
    if (this.session !== null) m.reads[this.session as 0 | 1].add(m.recs.length - 1);
    assert.equal(res.record.taint.lowestAuthority, LEVELS[level], `${this.toString()}: taint`);
  }
  toString(): string {
    return `write(${this.p}, ${this.src ?? 'self'}, ${this.payee}, s${this.session})`;
  }
}

class DeriveCmd implements Cmd {
  constructor(
    readonly p: string,
    readonly from: number | null,
    readonly session: number | null,
  ) {}
  check(m: Readonly<Model>): boolean {
    return this.from === null || m.recs.length > 0;
  }
  async run(m: Model, r: Real): Promise<void> {
    r.tick();
    const from = this.from === null ? [] : [pick(m.recs.length, this.from)];
    const src = m.recs[from[0] ?? -1];
    const payee = src?.payee ?? PAYEES[0];
    const rec = await r.mem.derive({
      tenant: r.tenant,
      scope: 'main',
      principal: this.p,
      from: from.map((i) => (m.recs[i] as MRec).id),
      content: contentFor(this.p, payee),
      transform: 'summarize',
      ...(this.session !== null ? { session: sessionName(r, this.session) } : {}),
    });
    const reads = this.session === null ? [] : [...m.reads[this.session as 0 | 1]].filter((x) => !from.includes(x));
    const parents = [...from, ...reads];
    const level = Math.min(originLevel(this.p, `principal:${this.p}`), ...parents.map((x) => (m.recs[x] as MRec).level), ...(parents.length === 0 ? [1] : []));
    m.recs.push({ id: rec.id, writer: this.p, payee, level, parents, deleted: false });
    if (this.session !== null) m.reads[this.session as 0 | 1].add(m.recs.length - 1);
    assert.equal(rec.taint.lowestAuthority, LEVELS[level], `${this.toString()}: taint`);
  }
  toString(): string {
    return `derive(${this.p}, from ${this.from ?? '-'}, s${this.session})`;
  }
}

class ReadCmd implements Cmd {
  constructor(
    readonly target: number,
    readonly session: number,
  ) {}
  check(m: Readonly<Model>): boolean {
    return m.recs.length > 0;
  }
  async run(m: Model, r: Real): Promise<void> {
    r.tick();
    const i = pick(m.recs.length, this.target);
    const rec = m.recs[i] as MRec;
    const view = await r.mem.get({ tenant: r.tenant, id: rec.id, session: sessionName(r, this.session) });
    if (!rec.deleted) m.reads[this.session as 0 | 1].add(i);
    assert.equal(view.taint.lowestAuthority, LEVELS[rec.level]);
    assert.equal(view.actionAuthority, LEVELS[actionLevel(m, i)], `read r${i}: action authority`);
  }
  toString(): string {
    return `read(${this.target}, s${this.session})`;
  }
}

class CorroborateCmd implements Cmd {
  constructor(
    readonly p: string,
    readonly target: number,
    readonly ev: string,
    readonly evRec: number,
  ) {}
  check(m: Readonly<Model>): boolean {
    return m.recs.length > 0;
  }
  async run(m: Model, r: Real): Promise<void> {
    r.tick();
    const i = pick(m.recs.length, this.target);
    const e = pick(m.recs.length, this.evRec);
    const evidence = this.ev === 'MEMORY' ? `memory:${(m.recs[e] as MRec).id}` : this.ev;
    const call = r.mem.corroborate({ tenant: r.tenant, recordId: (m.recs[i] as MRec).id, principal: this.p, evidence });
    // a principal below the corroboration floor is refused before anything else, and nothing is stored
    if (CEILING[who(this.p).kind] < TRUSTED) {
      await assert.rejects(call, (err: unknown) => isMemauthError(err) && err.code === 'CORROBORATOR_BELOW_FLOOR');
      return;
    }
    if ((m.recs[i] as MRec).deleted) {
      await assert.rejects(call, (err: unknown) => isMemauthError(err) && err.code === 'RECORD_DELETED');
      return;
    }
    const res = await call;
    const evLevel = this.ev === 'MEMORY' ? (m.recs[e] as MRec).level : sourceLevel(this.ev, this.p);
    const c: MCorr = { p: this.p, level: Math.min(CEILING[who(this.p).kind], evLevel), ev: this.ev === 'MEMORY' ? { rec: e } : { ref: this.ev }, at: m.now };
    m.corrs.set(i, [...(m.corrs.get(i) ?? []), c]);
    assert.equal(res.corroboration.authority, LEVELS[c.level], `${this.toString()}: corroboration authority`);
    assert.equal(res.actionAuthority, LEVELS[actionLevel(m, i)], `${this.toString()}: action authority`);
  }
  toString(): string {
    return `corroborate(${this.p}, ${this.target}, ${this.ev === 'MEMORY' ? `memory ${this.evRec}` : this.ev})`;
  }
}

class ConfirmCmd implements Cmd {
  constructor(
    readonly action: string,
    readonly payee: string,
  ) {}
  check(): boolean {
    return true;
  }
  async run(m: Model, r: Real): Promise<void> {
    r.tick();
    const c = await r.mem.confirm({ tenant: r.tenant, principal: P.alice, action: { type: this.action, args: { to: this.payee } } });
    m.confs.push({ id: c.id, action: this.action, payee: this.payee, createdAt: m.now, expiresAt: m.now + 900, used: false });
  }
  toString(): string {
    return `confirm(${this.action}, ${this.payee})`;
  }
}

class DeleteCmd implements Cmd {
  constructor(readonly target: number) {}
  check(m: Readonly<Model>): boolean {
    return m.recs.length > 0;
  }
  async run(m: Model, r: Real): Promise<void> {
    r.tick();
    const rec = m.recs[pick(m.recs.length, this.target)] as MRec;
    await r.mem.delete({ tenant: r.tenant, id: rec.id });
    rec.deleted = true;
  }
  toString(): string {
    return `delete(${this.target})`;
  }
}

class TickCmd implements Cmd {
  check(): boolean {
    return true;
  }
  async run(m: Model, r: Real): Promise<void> {
    for (let i = 0; i < 500; i++) r.tick();
    assert.ok(m.now > 0);
  }
  toString(): string {
    return 'wait(500 s)';
  }
}

class AuthorizeCmd implements Cmd {
  constructor(
    readonly action: string,
    readonly payee: string,
    readonly session: number | null,
    readonly declared: number | null,
    readonly contextSession: boolean,
  ) {}
  check(m: Readonly<Model>): boolean {
    return this.declared === null || m.recs.length > 0;
  }
  async run(m: Model, r: Real): Promise<void> {
    r.tick();
    const declared = this.declared === null ? null : pick(m.recs.length, this.declared);
    // LATEST: the payee the latest record states (what an agent acting on it would propose)
    const payee = this.payee === 'LATEST' ? (m.recs[m.recs.length - 1]?.payee ?? PAYEES[0]) : this.payee;
    const want = predictDecision(m, { action: this.action, payee, session: this.session, declared, contextSession: this.contextSession });
    const d = await r.mem.authorize({
      tenant: r.tenant,
      action: { type: this.action, args: { to: payee } },
      ...(this.session !== null ? { session: sessionName(r, this.session) } : {}),
      ...(declared !== null ? { dependsOn: [(m.recs[declared] as MRec).id] } : {}),
      ...(this.contextSession ? {} : { context: 'declared' as const }),
      userTurn: { principal: P.alice, text: 'yes, go ahead' },
    });
    const idx = new Map(m.recs.map((x, i) => [x.id, i]));
    const got = new Map(d.dependencies.map((x) => [idx.get(x.memoryId) ?? -1, new Set(x.why)]));
    assert.deepEqual(got, want.deps, `${this.toString()}: dependencies`);
    for (const dep of d.dependencies) assert.equal(dep.actionAuthority, LEVELS[actionLevel(m, idx.get(dep.memoryId) ?? -1)], `${this.toString()}: action authority of ${dep.memoryId}`);
    assert.equal(d.outcome, want.outcome, `${this.toString()}: outcome ${d.outcome} ${JSON.stringify(d.reasons)}, model ${want.outcome}`);
    assert.equal(d.confirmationId, want.conf?.id ?? null, `${this.toString()}: consumed confirmation`);
    if (want.conf) want.conf.used = true;
    if (this.action === 'pay') m.stats[`pay.${want.path}`] = (m.stats[`pay.${want.path}`] ?? 0) + 1;
  }
  toString(): string {
    return `authorize(${this.action}, ${this.payee}, s${this.session}, dependsOn ${this.declared ?? '-'}, context ${this.contextSession ? 'session' : 'declared'})`;
  }
}

// every command advances the shared clock by one second; the model keeps the same time
function commandArbs(): Array<fc.Arbitrary<Cmd>> {
  const session = fc.option(fc.constantFrom(0, 1), { nil: null, freq: 3 });
  const payee = fc.constantFrom(...PAYEES);
  // independent verifiers checking a recent record against their own systems (the path that lifts authority)
  const verify = fc
    .tuple(fc.constantFrom([P.bank, 'bankapi:verify/1'], [P.bank2, 'bankapi:verify/9'], [P.registry, 'registry:check/2'], [P.crm, 'crm:lookup/3']), fc.nat({ max: 1 }))
    .map(([[p, ev], t]) => new CorroborateCmd(p as string, t, ev as string, 0));
  // an action proposing what the latest record states, in a session or resting on exactly that record
  const actOnLatest = fc.constantFrom(null, 0, 1).map((ses) => new AuthorizeCmd('pay', 'LATEST', ses, ses === null ? 0 : null, ses !== null));
  return [
    fc.tuple(fc.constantFrom(...WRITERS), fc.constantFrom(...SOURCES), payee, session).map(([p, s, v, ses]) => new WriteCmd(p, s, v, ses)),
    fc.tuple(fc.constantFrom(...DERIVERS), fc.option(fc.nat({ max: 3 }), { nil: null, freq: 4 }), session).map(([p, f, ses]) => new DeriveCmd(p, f, ses)),
    fc.tuple(fc.nat({ max: 3 }), fc.constantFrom(0, 1)).map(([t, ses]) => new ReadCmd(t, ses)),
    fc.tuple(fc.constantFrom(...CORROBORATORS), fc.nat({ max: 3 }), fc.constantFrom(...EVIDENCE), fc.nat({ max: 3 })).map(([p, t, ev, e]) => new CorroborateCmd(p, t, ev, e)),
    verify,
    verify,
    fc.tuple(fc.constantFrom('pay', 'answer'), payee).map(([a, v]) => new ConfirmCmd(a, v)),
    fc.nat({ max: 3 }).map((t) => new DeleteCmd(t)),
    fc.constant(new TickCmd()),
    fc
      .tuple(fc.constantFrom('pay', 'pay', 'answer'), payee, session, fc.option(fc.nat({ max: 3 }), { nil: null, freq: 3 }), fc.boolean())
      .map(([a, v, ses, dep, ctx]) => new AuthorizeCmd(a, v, ses, dep, ctx || ses === null)),
    fc.tuple(payee, fc.constantFrom(0, 1)).map(([v, ses]) => new AuthorizeCmd('pay', v, ses, null, true)),
    actOnLatest,
    actOnLatest,
  ];
}

describe('model-based: the implementation agrees with a reference model of the rules', () => {
  // the real SQLite engine, driver, schema and triggers; in memory so that 200 runs take seconds
  let mem: Memory;
  const clock = manualClock('2025-06-01T00:00:00.000Z');
  let run = 0;
  before(async () => {
    mem = await openMemory({ path: ':memory:', policy: TEST_POLICY, clock: clock.now, checkpointKey: false });
  });
  after(async () => {
    await mem.close();
  });

  test('record authority, action authority, dependencies, outcome and consumed confirmation match the model', async (t) => {
    const totals: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(fc.commands(commandArbs(), { maxCommands: 40, size: 'large' }), async (cmds) => {
        const tenant = `model${run++}`;
        await registerCast(mem, tenant);
        const model: Model = { now: 0, recs: [], corrs: new Map(), confs: [], reads: [new Set(), new Set()], stats: {} };
        const real: Real = {
          mem,
          tenant,
          tick: () => {
            clock.advance(1000);
            model.now += 1;
          },
        };
        await fc.asyncModelRun(() => Promise.resolve({ model, real }), cmds);
        for (const [k, v] of Object.entries(model.stats)) totals[k] = (totals[k] ?? 0) + v;
      }),
      { numRuns: 300 },
    );
    t.diagnostic(`pay decisions predicted: ${JSON.stringify(totals)}`);
    // the generator reaches every branch of the high-tier rule
    for (const path of ['trusted', 'corroborated', 'confirmed', 'denied', 'hard']) assert.ok((totals[`pay.${path}`] ?? 0) > 0, `no pay decision took the ${path} path: ${JSON.stringify(totals)}`);
  });
});
