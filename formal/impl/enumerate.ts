/**
 * formal/impl/enumerate.ts — exhaustive implementation check of memauth.
 *
 * Enumerates every operation sequence up to a fixed depth over a small universe
 * (formal/impl/universe.ts) against the REAL `Memory` facade on a REAL SQLite engine
 * (better-sqlite3, `:memory:`, the project's own driver, schema and triggers), breadth-first,
 * and checks on every transition:
 *
 *  (a) the memauth invariant: every allowed high-risk action has every dependency of truly
 *      trusted origin, or corroborated by k = 2 independent truly trusted principals (distinct
 *      principal, domain and evidence upstream, none the writer), or is covered by a matching,
 *      unused user confirmation; and its payee is supplied by such a record;
 *  (b) non-malleability: no record's `taint.lowestAuthority` is above the ground-truth minimum
 *      of the origins it was computed from, and no operation changes any existing record's
 *      origin, taint or derivation edges (so never raises a lowestAuthority);
 *  (c) every decision replays from the audit log alone to the same outcome.
 *
 * Ground truth (who wrote what from which source, what the agent had read) is tracked by the
 * enumerator itself and never given to memauth.
 *
 * How one engine explores a tree of states: the driver's `BEGIN IMMEDIATE` / `COMMIT` /
 * `ROLLBACK` are executed as `SAVEPOINT` / `RELEASE` / `ROLLBACK TO` (same connection, same
 * SQL, same triggers), so the enumerator can undo an operation with `ROLLBACK TO`. Distinct
 * states are identified by a canonical form (ground truth + what the store recorded, with
 * record ids replaced by creation index); each distinct state is expanded once (the
 * representative path is re-executed on the real store to reach it), and the number of
 * operation sequences covered is counted exactly over the resulting transition graph.
 *
 *   node dist/formal/impl/enumerate.js [--profile wide|deep|all|lookalike|evidence|echo|resource|widened]
 *                                       [--widened] [--depth N] [--workers 2] [--mutant none|k1|web-trusted|one-domain|all] [--quiet]
 *
 * The widened profiles (`WIDENED`, universes in formal/impl/widened.ts) add look-alike identifiers
 * and amounts, free text another principal attaches to a record (the views the agent reads are
 * inspected), echo variants of a fetched page, and the action's `resource`. Their oracle also
 * tracks what the agent was SHOWN beyond the session's records, and compares values as docs/design.md
 * says (identifiers exact, amounts exact decimals) — never with memauth's matching code.
 *
 * Exit status: 0 iff the observed verdict equals --expect (default holds) and, for `holds`,
 * every allow path (trusted, corroborated, confirmed) was reached for the legitimate payee.
 */
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { DEFAULT_POLICY, MemauthError, Memory, SqliteDriver, loadPolicy, type Decision, type MemoryRecord, type PolicyInput } from '../../src/index.js';
import {
  ACTIONS,
  type ActionType,
  type Auth,
  PAYEE_KEYS,
  PRINCIPALS,
  PRINCIPAL_IDS,
  type PrincipalId,
  SOR_RULE,
  SOURCES,
  type SourceKey,
  TRUE_KIND_AUTH,
  TRUE_SOURCE_AUTH,
  TRUE_TRUSTED_KIND,
  USER_TURN,
  evidenceRef,
  gmin,
  isTrusted,
  lvl,
} from './universe.js';
import {
  AMOUNT_ARGUMENTS,
  POLICY_ARGUMENT_TYPES_FIELD,
  UNIVERSES,
  type UniverseName,
  type UniverseSpec,
  VARIANTS,
  type Variant,
  actionOf,
  evidenceText,
  noteText,
  oracleEchoText,
  oracleSame,
  rootText,
  summaryText,
  variantExtraStates,
  variantText,
} from './widened.js';

// ------------------------------------------------------------------ configuration

/**
 * Configuration mutants: memauth itself unchanged, but configured or fed in a way that breaks one
 * of its assumptions. Each must make the checker report a violation (the checks are not vacuous).
 * - `k1`: policy corroboration k = 1 (one trusted vouch lifts an untrusted record);
 * - `web-trusted`: a policy source rule that trusts the attacker's site (trusted-tool echo laundered);
 * - `one-domain`: toolB registered in its own domain although it truly shares toolA's (correlated
 *   corroboration counted as independent).
 */
export const MUTANTS = ['none', 'k1', 'web-trusted', 'one-domain'] as const;
export type Mutant = (typeof MUTANTS)[number];

/** A write of the alphabet: principal, source, payee stated (a value key of the universe). */
export type WriteSpec = readonly [PrincipalId, keyof typeof SOURCES, string];

/** The operation alphabet and bounds of one exploration. */
export interface Profile {
  readonly name: string;
  readonly depth: number;
  readonly maxRecords: number;
  readonly maxSessions: number;
  readonly maxCorroborations: number;
  readonly maxConfirmations: number;
  readonly maxDeletes: number;
  readonly writes: readonly WriteSpec[];
  readonly corroborators: readonly PrincipalId[];
  readonly confirmActions: readonly ActionType[];
  /** the universe of values and texts (formal/impl/widened.ts); default `base`. */
  readonly universe?: UniverseName;
  /** value keys an agent note may state (default L, A). */
  readonly noteValues?: readonly string[];
  /** authorize probes (`type,k1,k2,@R`) offered before the depth bound (default: pay and answer x L, A). */
  readonly probes?: readonly string[];
  /** authorize probes at the depth bound (default: pay x L, A). */
  readonly leafProbes?: readonly string[];
  /** probes alice confirms exactly (default: confirmActions x L, A). */
  readonly confirms?: readonly string[];
  /** principals that attach free-text evidence to any record, and the value keys their text states. */
  readonly attachers?: readonly PrincipalId[];
  readonly attachValues?: readonly string[];
  /** echo variants of a session record that toolA fetches from the web in the session (as ToolGate writes a tool result). */
  readonly fetchVariants?: readonly Variant[];
  /** after each read, look at the view for attached text (what the agent was shown). */
  readonly inspectViews?: boolean;
  /** allow paths that must be reached (non-vacuity), as `path:probe` (default trusted, corroborated, confirmed for pay,L). */
  readonly mustAllow?: readonly string[];
}

const ALL_WRITES: WriteSpec[] = [];
for (const p of PRINCIPAL_IDS) if (p !== 'agent') for (const src of ['SOR', 'WEB'] as const) for (const v of PAYEE_KEYS) ALL_WRITES.push([p, src, v]);

export const PROFILES: Readonly<Record<'wide' | 'deep', Profile>> = {
  /** every principal x source x payee, every corroborator, every confirmation; shallow. */
  wide: {
    name: 'wide',
    depth: 3,
    maxRecords: 4,
    maxSessions: 2,
    maxCorroborations: 3,
    maxConfirmations: 2,
    maxDeletes: 1,
    writes: ALL_WRITES,
    corroborators: ['toolA', 'toolB', 'toolC', 'mallory'],
    confirmActions: ['pay', 'answer'],
  },
  /**
   * deeper, with the writes that matter: the system of record states the legitimate payee (through
   * toolA or toolC), tools echo the attacker's page (either payee), the attacker writes its page
   * or forges a system-of-record source; toolB is toolA's correlated twin and only corroborates.
   */
  deep: {
    name: 'deep',
    depth: 4,
    maxRecords: 3,
    maxSessions: 2,
    maxCorroborations: 3,
    maxConfirmations: 2,
    maxDeletes: 1,
    writes: [
      ['toolA', 'SOR', 'L'],
      ['toolA', 'WEB', 'L'],
      ['toolA', 'WEB', 'A'],
      ['toolC', 'SOR', 'L'],
      ['toolC', 'WEB', 'L'],
      ['toolC', 'WEB', 'A'],
      ['mallory', 'WEB', 'L'],
      ['mallory', 'WEB', 'A'],
      ['mallory', 'SOR', 'A'],
    ],
    corroborators: ['toolA', 'toolB', 'toolC'],
    confirmActions: ['pay'],
  },
};

const WIDE_BOUNDS = { depth: 3, maxRecords: 3, maxSessions: 2, maxCorroborations: 2, maxConfirmations: 1, maxDeletes: 1 } as const;

/**
 * The widened universes, one dimension each (so that a counterexample names its mechanism), each
 * on a slice of the base alphabet: the system of record states the legitimate values (through
 * toolA or toolC), the attacker's page and the trusted-tool echo of it state the attacker's.
 */
export const WIDENED: Readonly<Record<'lookalike' | 'evidence' | 'echo' | 'resource', Profile>> = {
  /** look-alike identifiers (same double, leading zero, digit grouping) and an amount equal as a double but not as a decimal. */
  lookalike: {
    name: 'lookalike',
    universe: 'lookalike',
    ...WIDE_BOUNDS,
    writes: [
      ['toolA', 'SOR', 'L'],
      ['toolC', 'SOR', 'L'],
      ['mallory', 'WEB', 'A'],
      ['mallory', 'WEB', 'Z'],
      ['mallory', 'WEB', 'G'],
      ['toolA', 'WEB', 'A'],
    ],
    corroborators: ['toolA', 'toolC'],
    confirmActions: [],
    confirms: ['pay,L', 'pay,A'],
    noteValues: ['L', 'A'],
    probes: ['pay,L', 'pay,A', 'pay,Z', 'pay,G', 'pay,L,Q'],
    leafProbes: ['pay,L', 'pay,A', 'pay,Z', 'pay,G', 'pay,L,Q'],
    mustAllow: ['trusted:pay,L', 'confirmed:pay,L', 'confirmed:pay,A'],
  },
  /** an external principal attaches free text (carrying a payee) to any record; the views the agent reads are inspected. */
  evidence: {
    name: 'evidence',
    universe: 'evidence',
    ...WIDE_BOUNDS,
    maxCorroborations: 3,
    writes: [
      ['toolA', 'SOR', 'L'],
      ['toolC', 'SOR', 'L'],
      ['mallory', 'WEB', 'A'],
      ['toolA', 'WEB', 'A'],
    ],
    corroborators: ['toolA', 'toolC'],
    attachers: ['mallory'],
    attachValues: ['L', 'A'],
    confirmActions: [],
    confirms: ['pay,L'],
    noteValues: ['L', 'A'],
    probes: ['pay,L', 'pay,A'],
    leafProbes: ['pay,L', 'pay,A'],
    inspectViews: true,
    mustAllow: ['trusted:pay,L', 'confirmed:pay,L', 'corroborated:pay,L'],
  },
  /** toolA fetches an external page repeating a session record: changed (case, ✔, punctuation, hidden tag characters) or the same text (CRLF, NFD). */
  echo: {
    name: 'echo',
    universe: 'echo',
    ...WIDE_BOUNDS,
    depth: 4,
    maxDeletes: 0,
    maxCorroborations: 0,
    writes: [
      ['toolA', 'SOR', 'L'],
      ['mallory', 'WEB', 'A'],
    ],
    corroborators: [],
    confirmActions: [],
    confirms: ['pay,L'],
    noteValues: ['L'],
    fetchVariants: VARIANTS,
    probes: ['pay,L', 'pay,A'],
    leafProbes: ['pay,L', 'pay,A'],
    mustAllow: ['trusted:pay,L', 'confirmed:pay,L'],
  },
  /** actions with a resource: deploy and export_data with no arguments, pay with a resource. */
  resource: {
    name: 'resource',
    universe: 'resource',
    ...WIDE_BOUNDS,
    writes: [
      ['toolA', 'SOR', 'L'],
      ['toolC', 'SOR', 'L'],
      ['mallory', 'WEB', 'A'],
      ['toolA', 'WEB', 'A'],
    ],
    corroborators: ['toolA', 'toolC'],
    confirmActions: [],
    confirms: ['deploy,@RL', 'deploy,@RA'],
    noteValues: ['L'],
    probes: ['deploy,@RL', 'deploy,@RA', 'export_data,@XL', 'export_data,@XA', 'pay,L', 'pay,L,@L', 'pay,L,@A'],
    leafProbes: ['deploy,@RL', 'deploy,@RA', 'export_data,@XL', 'export_data,@XA', 'pay,L', 'pay,L,@L', 'pay,L,@A'],
    mustAllow: ['trusted:deploy,@RL', 'trusted:export_data,@XL', 'trusted:pay,L,@L', 'confirmed:deploy,@RL', 'confirmed:deploy,@RA'],
  },
};

const probesOf = (b: Profile, leaf: boolean): readonly string[] => (leaf ? b.leafProbes : b.probes) ?? (leaf ? (['pay'] as const) : ACTIONS).flatMap((a) => PAYEE_KEYS.map((v) => `${a},${v}`));
const confirmsOf = (b: Profile): readonly string[] => b.confirms ?? b.confirmActions.flatMap((a) => PAYEE_KEYS.map((v) => `${a},${v}`));
/** Principal kinds whose ceiling is below the corroboration floor: their corroborations are refused (docs/design.md § Corroboration). */
const BELOW_FLOOR_KIND: ReadonlySet<string> = new Set(['agent', 'external']);

const mustAllowOf = (b: Profile): readonly string[] => b.mustAllow ?? ['trusted:pay,L', 'corroborated:pay,L', 'confirmed:pay,L'];

export interface Config {
  readonly profile: Profile;
  readonly mutant: Mutant;
  readonly stopAtFirst: boolean;
  /** merge states that differ only by the numbering of records (default true). */
  readonly renumber: boolean;
}

function policyFor(mutant: Mutant): PolicyInput {
  let base: PolicyInput = { ...DEFAULT_POLICY, name: 'memauth-formal-impl', sources: [...(DEFAULT_POLICY.sources ?? []), SOR_RULE] };
  if (POLICY_ARGUMENT_TYPES_FIELD !== null) {
    // declare the amounts the oracle assumes (AMOUNT_ARGUMENTS) with the policy's own field
    const actions: Record<string, Record<string, unknown>> = { ...(base.actions as Record<string, Record<string, unknown>>) };
    for (const [type, args] of Object.entries(AMOUNT_ARGUMENTS))
      actions[type] = { ...(actions[type] ?? { tier: 'high' }), [POLICY_ARGUMENT_TYPES_FIELD]: Object.fromEntries(args.map((a) => [a, 'amount'])) };
    base = { ...base, actions: actions as PolicyInput['actions'] };
  }
  if (mutant === 'k1') return { ...base, corroboration: { k: 1, minAuthority: 'trusted_tool_verified' } };
  if (mutant === 'web-trusted') return { ...base, sources: [{ match: 'https://evil.example/*', authority: 'trusted_tool_verified' }, ...(base.sources ?? [])] };
  return base;
}

// ------------------------------------------------------------------ operations

/** One operation of the universe. Record operands are creation indices (r0, r1, ...). */
export type Op =
  | { k: 'W'; p: PrincipalId; s: keyof typeof SOURCES; v: string } // root write (no session)
  | { k: 'N'; v: string } // agent note in the session: derivation edge not declared ("dropped")
  | { k: 'S'; r: number } // agent summary of r in the session: edge declared
  | { k: 'R'; r: number } // get r in the session
  | { k: 'X' } // new session (context cleared, memory kept)
  | { k: 'C'; p: PrincipalId; r: number; ev: 'ref' | number } // corroborate r; evidence: own lookup ref, or own record
  | { k: 'E'; p: PrincipalId; r: number; v: string } // p attaches free-text evidence stating v to r (a corroboration)
  | { k: 'F'; r: number; variant: Variant } // toolA fetches a web page repeating r (variant) in the session, as ToolGate writes a tool result
  | { k: 'K'; q: string } // alice confirms exactly the probe q (type, args, resource)
  | { k: 'D'; r: number } // delete r
  | { k: 'Z'; q: string }; // authorize the probe q in the session

export function opString(o: Op): string {
  switch (o.k) {
    case 'W':
      return `write(${o.p},${o.s},${o.v})`;
    case 'N':
      return `agentNote(${o.v})`;
    case 'S':
      return `agentSummary(r${o.r})`;
    case 'R':
      return `read(r${o.r})`;
    case 'X':
      return 'newSession';
    case 'C':
      return `corroborate(${o.p},r${o.r},${o.ev === 'ref' ? 'lookup' : `r${o.ev}`})`;
    case 'E':
      return `attach(${o.p},r${o.r},${o.v})`;
    case 'F':
      return `fetch(r${o.r},${o.variant})`;
    case 'K':
      return `confirm(${o.q})`;
    case 'D':
      return `delete(r${o.r})`;
    case 'Z':
      return `authorize(${o.q})`;
  }
}

export function parseOp(s: string): Op {
  const m = /^(\w+)(?:\((.*)\))?$/.exec(s);
  if (!m) throw new Error(`bad op ${s}`);
  const args = (m[2] ?? '').split(',');
  const rec = (x: string | undefined): number => Number((x ?? '').replace(/^r/, ''));
  const a0 = args[0] ?? '';
  switch (m[1]) {
    case 'write':
      return { k: 'W', p: a0 as PrincipalId, s: args[1] as keyof typeof SOURCES, v: args[2] as string };
    case 'agentNote':
      return { k: 'N', v: a0 };
    case 'agentSummary':
      return { k: 'S', r: rec(a0) };
    case 'read':
      return { k: 'R', r: rec(a0) };
    case 'newSession':
      return { k: 'X' };
    case 'corroborate':
      return { k: 'C', p: a0 as PrincipalId, r: rec(args[1]), ev: args[2] === 'lookup' ? 'ref' : rec(args[2]) };
    case 'confirm':
      return { k: 'K', q: m[2] ?? '' };
    case 'attach':
      return { k: 'E', p: a0 as PrincipalId, r: rec(args[1]), v: args[2] as string };
    case 'fetch':
      return { k: 'F', r: rec(a0), variant: args[1] as Variant };
    case 'delete':
      return { k: 'D', r: rec(a0) };
    case 'authorize':
      return { k: 'Z', q: m[2] ?? '' };
  }
  throw new Error(`bad op ${s}`);
}

// ------------------------------------------------------------------ ground truth

interface GRec {
  id: string;
  writer: PrincipalId;
  source: SourceKey;
  payee: string;
  /** every value key the text states (its payee first). */
  states: string[];
  kind: 'root' | 'note' | 'summary' | 'page';
  declared: number | null;
  /** what the writer's output truly depends on: the declared input and everything read in its session. */
  inputs: number[];
  /** ground-truth origin: min(what the writer truly is, what the source truly is). */
  gtOrigin: Auth;
  /** ground-truth authority: min of the origin and of every input's ground truth. */
  gtAuth: Auth;
  status: 'active' | 'deleted';
  content: string;
}
interface GCorr {
  p: PrincipalId;
  r: number;
  /** own lookup ref, own record, or free text stating the value key `text`. */
  ev: 'ref' | number | 'text';
  text?: string;
  /** a truly trusted principal vouching with truly trusted evidence. */
  trusted: boolean;
  /** where the evidence really comes from. */
  upstream: string;
}
interface GConf {
  id: string;
  /** the probe alice confirmed exactly. */
  q: string;
  uses: number;
}
/** A text the agent was shown that no record read in the session holds (evidence in a view, a page stored as an "echo"). */
interface GShown {
  by: PrincipalId;
  /** its true authority. */
  auth: Auth;
  states: string[];
  /** how it was shown (`attach`, `fetch:<variant>`): part of the state, so each variant keeps its own counterexample. */
  via: string;
  what: string;
}
interface G {
  recs: GRec[];
  corrs: GCorr[];
  confs: GConf[];
  /** current session number (also: sessions used so far). */
  session: number;
  /** records read into (or written in) the current session, sorted. */
  reads: number[];
  /** texts shown in the current session beyond its records (ground truth: what the agent saw). */
  shown: GShown[];
  deletes: number;
}

const initialG = (): G => ({ recs: [], corrs: [], confs: [], session: 0, reads: [], shown: [], deletes: 0 });
const cloneG = (g: G): G => ({
  recs: g.recs.map((r) => ({ ...r, inputs: [...r.inputs], states: [...r.states] })),
  corrs: g.corrs.map((c) => ({ ...c })),
  confs: g.confs.map((c) => ({ ...c })),
  session: g.session,
  reads: [...g.reads],
  shown: g.shown.map((x) => ({ ...x, states: [...x.states] })),
  deletes: g.deletes,
});
const sessionId = (g: G): string => `ses${g.session}`;
const addRead = (g: G, r: number): void => {
  if (!g.reads.includes(r)) {
    g.reads.push(r);
    g.reads.sort((a, b) => a - b);
  }
};

/** Ground-truth lineage of record r (every record it truly depends on, transitively). */
function gtLineage(g: G, r: number): Set<number> {
  const seen = new Set<number>();
  const stack = [...(g.recs[r]?.inputs ?? [])];
  while (stack.length > 0) {
    const x = stack.pop() as number;
    if (seen.has(x)) continue;
    seen.add(x);
    stack.push(...(g.recs[x]?.inputs ?? []));
  }
  return seen;
}

/** k = 2 truly trusted corroborations of r, pairwise distinct principal, domain and upstream, none by r's writer, evidence not r's own lineage. */
function gtCorroborated(g: G, r: number): boolean {
  const rec = g.recs[r] as GRec;
  const lineage = gtLineage(g, r);
  const ok = g.corrs.filter((c) => {
    if (c.r !== r || !c.trusted || c.p === rec.writer) return false;
    if (c.ev === 'ref') return true;
    if (c.ev === 'text') return false;
    return c.ev !== r && !lineage.has(c.ev) && !gtLineage(g, c.ev).has(r);
  });
  for (let i = 0; i < ok.length; i++) {
    for (let j = i + 1; j < ok.length; j++) {
      const a = ok[i] as GCorr;
      const b = ok[j] as GCorr;
      if (a.p !== b.p && PRINCIPALS[a.p].domain !== PRINCIPALS[b.p].domain && a.upstream !== b.upstream) return true;
    }
  }
  return false;
}

const gtOk = (g: G, r: number): boolean => isTrusted((g.recs[r] as GRec).gtAuth) || gtCorroborated(g, r);

// ------------------------------------------------------------------ enabled operations

/** Operations enabled in a state. Leaves (at the depth bound) are only probed with `pay`. */
function enabledOps(g: G, b: Profile, probeOnly: boolean): Op[] {
  const out: Op[] = [];
  const active = g.recs.map((r, i) => (r.status === 'active' ? i : -1)).filter((i) => i >= 0);
  if (!probeOnly) {
    if (g.recs.length < b.maxRecords) {
      for (const [p, s, v] of b.writes) out.push({ k: 'W', p, s, v });
      for (const v of b.noteValues ?? PAYEE_KEYS) out.push({ k: 'N', v });
      for (const r of active) out.push({ k: 'S', r });
      // an external page repeating what the session read (a fetched tool result; it may resolve to an echo)
      for (const r of g.reads) if ((g.recs[r] as GRec).status === 'active') for (const variant of b.fetchVariants ?? []) out.push({ k: 'F', r, variant });
    }
    for (const r of active) if (!g.reads.includes(r)) out.push({ k: 'R', r });
    if (g.reads.length > 0 && g.session + 1 < b.maxSessions) out.push({ k: 'X' });
    if (g.corrs.length < b.maxCorroborations) {
      for (const r of active) {
        // only records whose ground truth is below trusted_tool_verified: for the others the
        // invariant holds whatever their corroborations are
        if (isTrusted((g.recs[r] as GRec).gtAuth)) continue;
        for (const p of b.corroborators) {
          const evs: Array<'ref' | number> = ['ref'];
          if (PRINCIPALS[p].kind === 'tool') for (const e of active) if (e !== r && (g.recs[e] as GRec).writer === p) evs.push(e);
          for (const ev of evs) if (!g.corrs.some((c) => c.p === p && c.r === r && c.ev === ev)) out.push({ k: 'C', p, r, ev });
        }
      }
      // free text attached to ANY record, trusted ones above all (that is the attack)
      for (const r of active) for (const p of b.attachers ?? []) for (const v of b.attachValues ?? []) if (!g.corrs.some((c) => c.p === p && c.r === r && c.text === v)) out.push({ k: 'E', p, r, v });
    }
    if (g.confs.length < b.maxConfirmations) for (const q of confirmsOf(b)) out.push({ k: 'K', q });
    if (g.deletes < b.maxDeletes) for (const r of active) out.push({ k: 'D', r });
  }
  for (const q of probesOf(b, probeOnly)) out.push({ k: 'Z', q });
  return out;
}

/** All permutations of 0..n-1 (n <= 4 here). */
function permutations(n: number): number[][] {
  if (n === 0) return [[]];
  return permutations(n - 1).flatMap((p) => Array.from({ length: n }, (_, i) => [...p.slice(0, i), n - 1, ...p.slice(i)]));
}
const PERMS: number[][][] = [0, 1, 2, 3, 4, 5].map(permutations);

// ------------------------------------------------------------------ the real store

const TENANT = 't';
const SCOPE = 'main';
const T0 = Date.parse('2026-01-01T00:00:00.000Z');

interface Violation {
  readonly path: readonly string[];
  readonly check: string;
  readonly message: string;
}

type Stats = Record<string, number>;
const bump = (s: Stats, k: string, n = 1): void => {
  s[k] = (s[k] ?? 0) + n;
};

interface TransitionOut {
  readonly op: string;
  readonly key: string;
  /** for authorize transitions: outcome label used by the non-vacuity counts. */
  readonly label: string | null;
}

class Runner {
  readonly mem: Memory;
  private readonly raw: (sql: string) => void;
  private tick = 0;
  violations: Violation[] = [];
  stats: Stats = {};
  /** one example sequence per informational category (first seen). */
  samples: Record<string, string> = {};
  private current: readonly string[] = [];

  private renumber = true;
  /** the universe of values and texts, and whether reads inspect the view for attached text. */
  private uname: UniverseName = 'base';
  private u: UniverseSpec = UNIVERSES.base;
  private inspectViews = false;

  private constructor(mem: Memory, raw: (sql: string) => void) {
    this.mem = mem;
    this.raw = raw;
  }

  static async open(mutant: Mutant, renumber: boolean, profile?: Profile): Promise<Runner> {
    const driver = SqliteDriver.open({ path: ':memory:' });
    const db = driver.unsafeDatabase();
    const exec = db.exec.bind(db);
    // The driver's transaction brackets become savepoints so that the enumerator can undo a step.
    const bracket: Readonly<Record<string, string>> = { 'BEGIN IMMEDIATE': 'SAVEPOINT memauth_tx', COMMIT: 'RELEASE memauth_tx', ROLLBACK: 'ROLLBACK TO memauth_tx; RELEASE memauth_tx' };
    db.exec = (sql: string) => exec(bracket[sql] ?? sql);
    const runner: Runner = new Runner(new Memory({ driver, policy: loadPolicy(policyFor(mutant)), clock: (): Date => new Date(T0 + runner.tick * 1000) }), (sql) => void exec(sql));
    for (const p of PRINCIPAL_IDS) {
      // mutant one-domain: memauth is told toolB is independent of toolA; the ground truth knows better
      const domain = mutant === 'one-domain' && p === 'toolB' ? 'vendor-x-second-account' : PRINCIPALS[p].domain;
      await runner.mem.registerPrincipal({ tenant: TENANT, id: p, kind: PRINCIPALS[p].kind, domain });
    }
    runner.raw('SAVEPOINT root');
    runner.renumber = renumber;
    runner.uname = profile?.universe ?? 'base';
    runner.u = UNIVERSES[runner.uname];
    runner.inspectViews = profile?.inspectViews === true;
    return runner;
  }

  async observe(): Promise<Map<string, MemoryRecord>> {
    const list = await this.mem.list({ tenant: TENANT, includeDeleted: true, limit: 1000 });
    return new Map(list.map((r) => [r.id, r]));
  }

  /**
   * Canonical form of a state: the ground truth plus what the store recorded (taint, channels,
   * derivation edges, status), record ids replaced by creation index, minimised over every
   * renumbering of the records (creation order does not matter to the rules; corroborations and
   * confirmations keep their order, which does).
   */
  key(g: G, obs: ReadonlyMap<string, MemoryRecord>): string {
    const idx = new Map(g.recs.map((r, i) => [r.id, i]));
    let best: string | null = null;
    const perms = this.renumber ? (PERMS[g.recs.length] ?? []) : [g.recs.map((_, i) => i)];
    for (const pi of perms) {
      const m = (i: number): number => pi[i] as number;
      const order: number[] = [];
      pi.forEach((to, from) => (order[to] = from));
      const recs = order.map((i) => {
        const r = g.recs[i] as GRec;
        const o = obs.get(r.id);
        const edges = (o?.derivedFrom ?? []).map((e) => `${m(idx.get(e.from) ?? -1)}/${e.kind}/${e.transform}`).sort();
        return [
          r.writer,
          r.source,
          r.states.length > 1 ? r.states : r.payee,
          r.kind,
          r.declared === null ? null : m(r.declared),
          r.inputs.map(m).sort(),
          r.status,
          o?.status,
          o?.taint.lowestAuthority,
          o?.taint.channels,
          edges,
        ];
      });
      const corrs = g.corrs.map((c) => [c.p, m(c.r), c.ev === 'ref' ? 'ref' : c.ev === 'text' ? `t:${c.text}` : m(c.ev)]);
      const shown = g.shown.map((x) => JSON.stringify([x.by, x.auth, x.states, x.via])).sort();
      const body = JSON.stringify([recs, corrs, g.confs.map((c) => [c.q, c.uses]), g.session, g.reads.map(m).sort(), g.deletes, ...(shown.length > 0 ? [shown] : [])]);
      if (best === null || body < best) best = body;
    }
    return createHash('sha1')
      .update(best ?? '')
      .digest('base64');
  }

  /** Reset to the empty store and re-execute `path` (no checks: they ran when it was first executed). */
  async reach(path: readonly string[]): Promise<G> {
    this.raw('ROLLBACK TO root');
    const g = initialG();
    for (let i = 0; i < path.length; i++) {
      this.tick = i + 1;
      await this.apply(g, parseOp(path[i] as string), null);
    }
    return g;
  }

  /**
   * Execute one operation on the real store and update the ground truth. With `check`, verify
   * (a), (b), (c) and the session context against the ground truth; returns the outcome label.
   */
  async apply(g: G, op: Op, check: { path: readonly string[]; before: ReadonlyMap<string, MemoryRecord> } | null): Promise<{ label: string | null; after: Map<string, MemoryRecord> | null }> {
    const { mem } = this;
    const fail = (what: string, message: string): void => {
      if (check) this.violations.push({ path: [...check.path, opString(op)], check: what, message });
    };
    if (check) this.current = check.path;
    let label: string | null = null;
    switch (op.k) {
      case 'W': {
        const { content, states } = rootText(this.uname, op.p, op.s, op.v);
        const res = await mem.write({ tenant: TENANT, scope: SCOPE, principal: op.p, content, source: SOURCES[op.s] });
        const gtOrigin = gmin(TRUE_KIND_AUTH[PRINCIPALS[op.p].kind], TRUE_SOURCE_AUTH[op.s]);
        g.recs.push({ id: res.record.id, writer: op.p, source: op.s, payee: op.v, states, kind: 'root', declared: null, inputs: [], gtOrigin, gtAuth: gtOrigin, status: 'active', content });
        break;
      }
      case 'N': {
        const content = noteText(this.uname, op.v);
        const inputs = [...g.reads];
        const res = await mem.write({ tenant: TENANT, scope: SCOPE, principal: 'agent', content, session: sessionId(g) });
        const echoes = inputs.filter((r) => g.recs[r]?.status === 'active' && g.recs[r]?.content === content);
        const echo = echoes[0];
        if (!res.created) {
          // recalled text re-ingested: resolves to the original record (any one with this text), adds nothing
          if (!echoes.some((r) => g.recs[r]?.id === res.echoOf)) fail('echo', `write resolved to ${res.echoOf} as an echo, but the session holds no such record`);
          bump(this.stats, 'recallEchoes');
          break;
        }
        if (echo !== undefined) fail('echo', `an exact echo of r${echo} created a new record`);
        const gtOrigin = TRUE_KIND_AUTH.agent;
        const gtAuth = gmin(gtOrigin, ...inputs.map((r) => (g.recs[r] as GRec).gtAuth));
        g.recs.push({ id: res.record.id, writer: 'agent', source: 'SELF', payee: op.v, states: [op.v], kind: 'note', declared: null, inputs, gtOrigin, gtAuth, status: 'active', content });
        addRead(g, g.recs.length - 1);
        break;
      }
      case 'S': {
        const from = g.recs[op.r] as GRec;
        const content = summaryText(this.uname, from.payee);
        const inputs = [...new Set([op.r, ...g.reads])].sort((a, b) => a - b);
        const rec = await mem.derive({ tenant: TENANT, principal: 'agent', from: [from.id], content, transform: 'summarize', session: sessionId(g) });
        const gtOrigin = TRUE_KIND_AUTH.agent;
        const gtAuth = gmin(gtOrigin, ...inputs.map((r) => (g.recs[r] as GRec).gtAuth));
        g.recs.push({ id: rec.id, writer: 'agent', source: 'SELF', payee: from.payee, states: [from.payee], kind: 'summary', declared: op.r, inputs, gtOrigin, gtAuth, status: 'active', content });
        addRead(g, g.recs.length - 1);
        break;
      }
      case 'R': {
        const view = await mem.get({ tenant: TENANT, id: (g.recs[op.r] as GRec).id, session: sessionId(g) });
        addRead(g, op.r);
        if (this.inspectViews) this.shownInView(g, op.r, view);
        break;
      }
      case 'X':
        g.session += 1;
        g.reads = [];
        g.shown = [];
        break;
      case 'E': {
        const target = g.recs[op.r] as GRec;
        try {
          await mem.corroborate({ tenant: TENANT, recordId: target.id, principal: op.p, evidence: evidenceText(this.uname, op.p, op.v) });
        } catch (e) {
          // a store may refuse free text from a principal that cannot vouch: then nothing is attached
          if (e instanceof MemauthError) {
            bump(this.stats, 'attachRefused');
            break;
          }
          throw e;
        }
        g.corrs.push({ p: op.p, r: op.r, ev: 'text', text: op.v, trusted: false, upstream: `text:${op.p}` });
        break;
      }
      case 'F':
        await this.fetchPage(g, op, fail);
        break;
      case 'C': {
        const target = g.recs[op.r] as GRec;
        const evidence = op.ev === 'ref' ? evidenceRef(op.p) : `memory:${(g.recs[op.ev] as GRec).id}`;
        // a principal below the corroboration floor (an agent, an external one) is refused and nothing is stored; anyone else must be recorded
        const refused = await mem.corroborate({ tenant: TENANT, recordId: target.id, principal: op.p, evidence }).then(
          () => false,
          (e: unknown) => {
            if (e instanceof MemauthError && e.code === 'CORROBORATOR_BELOW_FLOOR' && BELOW_FLOOR_KIND.has(PRINCIPALS[op.p].kind)) return true;
            throw e;
          },
        );
        if (refused) {
          bump(this.stats, 'corroborationRefused');
          break;
        }
        const trustedPrincipal = TRUE_TRUSTED_KIND.has(PRINCIPALS[op.p].kind);
        const evTrusted = op.ev === 'ref' ? PRINCIPALS[op.p].kind === 'tool' : isTrusted((g.recs[op.ev] as GRec).gtAuth);
        // the upstream of a lookup is the principal's own system of record; of a record, its writer's domain
        const upstream = op.ev === 'ref' ? evidence : `domain:${PRINCIPALS[(g.recs[op.ev] as GRec).writer].domain}`;
        g.corrs.push({ p: op.p, r: op.r, ev: op.ev, trusted: trustedPrincipal && evTrusted, upstream });
        break;
      }
      case 'K': {
        const { type, args, resource } = actionOf(this.u, op.q);
        const c = await mem.confirm({ tenant: TENANT, principal: 'alice', action: { type, args, ...(resource !== undefined ? { resource } : {}) } });
        g.confs.push({ id: c.id, q: op.q, uses: 0 });
        break;
      }
      case 'D': {
        await mem.delete({ tenant: TENANT, id: (g.recs[op.r] as GRec).id });
        (g.recs[op.r] as GRec).status = 'deleted';
        g.deletes += 1;
        break;
      }
      case 'Z': {
        const { type, args, resource } = actionOf(this.u, op.q);
        const d = await mem.authorize({
          tenant: TENANT,
          action: { type, args, ...(resource !== undefined ? { resource } : {}) },
          session: sessionId(g),
          userTurn: { principal: 'alice', text: USER_TURN },
        });
        label = check ? await this.checkDecision(g, op, d, fail) : null;
        if (d.confirmationId !== null) {
          const c = g.confs.find((x) => x.id === d.confirmationId);
          if (c) c.uses += 1;
        }
        break;
      }
    }
    const after = check ? await this.checkState(g, op, check.before, fail) : null;
    return { label, after };
  }

  /** (a) and (c) for one decision; returns its label. */
  private async checkDecision(g: G, op: Extract<Op, { k: 'Z' }>, d: Decision, fail: (what: string, msg: string) => void): Promise<string> {
    const st = this.stats;
    bump(st, 'decisions');
    const r = await this.mem.replay({ tenant: TENANT, decisionId: d.id });
    bump(st, 'replays');
    if (!r.matches || r.recorded.outcome !== d.outcome) fail('(c) replay', `decision ${d.outcome} ${JSON.stringify(d.reasons)} replays to ${r.replayed.outcome} ${JSON.stringify(r.replayed.reasons)}`);
    const act = actionOf(this.u, op.q);
    const expectedTier = act.type === 'answer' ? 'read_only' : 'high';
    if (d.tier !== expectedTier) fail('tier', `${act.type} decided at tier ${d.tier}`);
    // every record of the session is a dependency (context taint), whatever the decision says
    const depIds = new Set(d.dependencies.map((x) => x.memoryId));
    for (const i of g.reads) if (!depIds.has((g.recs[i] as GRec).id)) fail('(a) dependencies', `session record r${i} is missing from the decision's dependencies`);
    const idxOf = new Map(g.recs.map((x, i) => [x.id, i]));
    for (const dep of d.dependencies) if (!idxOf.has(dep.memoryId)) fail('(a) dependencies', `unknown dependency ${dep.memoryId}`);
    if (expectedTier !== 'high') {
      bump(st, d.outcome === 'allow' ? 'answer.allow' : 'answer.deny');
      return `answer:${d.outcome}`;
    }
    // ground truth of this request: what the agent was shown in this session, who truly wrote it,
    // and which values it truly states (the user's turn states none)
    const trustedShown: string[][] = [
      ...g.reads.filter((i) => (g.recs[i] as GRec).status === 'active' && gtOk(g, i)).map((i) => (g.recs[i] as GRec).states),
      ...g.shown.filter((x) => isTrusted(x.auth)).map((x) => x.states),
    ];
    const unsupplied = act.values.filter((x) => !trustedShown.some((states) => states.some((k) => oracleSame(this.u.values[k] ?? '', x.value, x.amount))));
    const depsOk = g.reads.every((i) => gtOk(g, i)) && g.shown.every((x) => isTrusted(x.auth));
    const valueOk = unsupplied.length === 0;
    const conf = g.confs.find((c) => c.q === op.q && c.uses === 0);
    if (d.outcome !== 'allow') {
      bump(st, 'high.deny');
      if (depsOk && valueOk) {
        bump(st, 'high.deny.groundTruthWouldPermit');
        this.samples.stricter ??= `${[...this.current, opString(op)].join(' ; ')}  -> ${d.reasons.map((x) => `${x.code}${x.detail ? `/${x.detail}` : ''}`).join(', ')}`;
      }
      if ((!depsOk || !valueOk) && conf) bump(st, 'high.deny.withUnusedMatchingConfirmation');
      return `deny:${op.q}`;
    }
    let path: 'trusted' | 'corroborated' | 'confirmed';
    const what = `${op.q} (${JSON.stringify({ args: act.args, ...(act.resource !== undefined ? { resource: act.resource } : {}) })})`;
    if (d.confirmationId !== null) {
      path = 'confirmed';
      const c = g.confs.find((x) => x.id === d.confirmationId);
      if (!c) fail('(a) confirmation', `allowed by unknown confirmation ${d.confirmationId}`);
      else {
        if (c.q !== op.q) fail('(a) confirmation', `${what} allowed by a confirmation of ${c.q}`);
        if (c.uses !== 0) fail('(a) confirmation', `${what} allowed by a confirmation already used ${c.uses} time(s)`);
      }
    } else {
      for (const i of g.reads) {
        if (!gtOk(g, i))
          fail(
            '(a) invariant',
            `${what} allowed although dependency r${i} (written by ${(g.recs[i] as GRec).writer}, true authority ${(g.recs[i] as GRec).gtAuth}) is neither truly trusted nor corroborated by 2 independent trusted principals, and no confirmation was used`,
          );
      }
      for (const x of g.shown) {
        if (!isTrusted(x.auth))
          fail('(a) shown text', `${what} allowed although the agent was shown ${x.what} (true authority ${x.auth}), which no record read in the session holds, and no confirmation was used`);
      }
      for (const x of unsupplied)
        fail(
          '(a) value',
          `${what} allowed although no truly trusted (or independently corroborated) text the agent saw, nor the user's turn, states ${x.argument} = ${JSON.stringify(x.value)}${x.amount ? ' (as an exact decimal)' : ' (as an exact identifier)'}`,
        );
      path = g.reads.every((i) => isTrusted((g.recs[i] as GRec).gtAuth)) ? 'trusted' : 'corroborated';
    }
    bump(st, `high.allow.${path}.${op.q}`);
    return `allow:${path}:${op.q}`;
  }

  /**
   * What a view showed the agent beyond the record's own text: free text attached to the record
   * (corroboration evidence) appears anywhere in the view but its `content`. The checker knows who
   * attached it; the view does not have to say.
   */
  private shownInView(g: G, r: number, view: unknown): void {
    const strings: string[] = [];
    const walk = (x: unknown, top: boolean): void => {
      if (typeof x === 'string') strings.push(x);
      else if (Array.isArray(x)) x.forEach((y) => walk(y, false));
      else if (x !== null && typeof x === 'object') for (const [k, y] of Object.entries(x)) if (!(top && k === 'content')) walk(y, false);
    };
    walk(view, true);
    g.corrs.forEach((c, ci) => {
      if (c.r !== r || c.ev !== 'text' || c.text === undefined) return;
      const text = evidenceText(this.uname, c.p, c.text);
      const value = this.u.values[c.text] ?? text;
      if (!strings.some((x) => x.includes(text) || x.includes(value))) return;
      // free text has no source: a tool is a channel, so only the principal's own word counts
      const kind = PRINCIPALS[c.p].kind;
      const auth = kind === 'tool' ? TRUE_SOURCE_AUTH.WEB : TRUE_KIND_AUTH[kind];
      const what = `evidence text attached by ${c.p} to r${r} (corroboration ${ci}), stating ${value}, in the view of r${r}`;
      if (!g.shown.some((x) => x.what === what)) g.shown.push({ by: c.p, auth, states: [c.text], via: 'attach', what });
      bump(this.stats, 'attachedTextShown');
    });
  }

  /**
   * toolA fetches a web page repeating session record r (a variant of its text) and writes it in
   * the session, then reads it, as ToolGate does with a tool result. Ground truth: the same text
   * up to {@link oracleEchoText} is an echo (nothing new was shown); any other text is new text
   * from the web, whatever the store decides.
   */
  private async fetchPage(g: G, op: Extract<Op, { k: 'F' }>, fail: (what: string, msg: string) => void): Promise<void> {
    const base = g.recs[op.r] as GRec;
    const content = variantText(this.uname, base.content, op.variant);
    const res = await this.mem.write({ tenant: TENANT, scope: SCOPE, principal: 'toolA', content, source: SOURCES.WEB, session: sessionId(g) });
    await this.mem.get({ tenant: TENANT, id: res.record.id, session: sessionId(g) });
    const states = [...new Set([...base.states, ...variantExtraStates(op.variant)])];
    const auth = gmin(TRUE_KIND_AUTH.tool, TRUE_SOURCE_AUTH.WEB);
    const same = g.reads.filter((i) => (g.recs[i] as GRec).status === 'active' && oracleEchoText((g.recs[i] as GRec).content) === oracleEchoText(content));
    if (!res.created) {
      const to = g.recs.findIndex((x) => x.id === res.echoOf);
      if (same.length > 0) {
        if (!same.includes(to)) fail('echo', `fetch resolved to r${to} as an echo, but its text is not the page's`);
        bump(this.stats, 'pageEchoes');
        return;
      }
      // the store swallowed a different text: the agent saw it, the session did not record it
      bump(this.stats, 'pagesNotRecorded');
      const what = `a web page fetched by toolA (${op.variant} variant of r${op.r}) that the store resolved as an echo of r${to}`;
      if (!g.shown.some((x) => x.what === what)) g.shown.push({ by: 'toolA', auth, states, via: `fetch:${op.variant}`, what });
      return;
    }
    if (same.length > 0) bump(this.stats, 'pageEchoesStoredAsNew');
    g.recs.push({ id: res.record.id, writer: 'toolA', source: 'WEB', payee: base.payee, states, kind: 'page', declared: null, inputs: [], gtOrigin: auth, gtAuth: auth, status: 'active', content });
    addRead(g, g.recs.length - 1);
  }

  /** (b): non-malleability against the ground truth and the state before the operation; the session context. */
  private async checkState(g: G, op: Op, before: ReadonlyMap<string, MemoryRecord>, fail: (what: string, msg: string) => void): Promise<Map<string, MemoryRecord>> {
    const after = await this.observe();
    bump(this.stats, 'stateChecks');
    for (const [id, r0] of before) {
      const r1 = after.get(id);
      if (!r1) {
        fail('(b) record vanished', `${id} is gone`);
        continue;
      }
      if (JSON.stringify(r1.origin) !== JSON.stringify(r0.origin)) fail('(b) origin changed', `${id}: ${JSON.stringify(r0.origin)} -> ${JSON.stringify(r1.origin)}`);
      if (JSON.stringify(r1.taint) !== JSON.stringify(r0.taint)) fail('(b) taint changed', `${id}: ${JSON.stringify(r0.taint)} -> ${JSON.stringify(r1.taint)}`);
      if (lvl(r1.taint.lowestAuthority) > lvl(r0.taint.lowestAuthority)) fail('(b) taint raised', `${id}: ${r0.taint.lowestAuthority} -> ${r1.taint.lowestAuthority}`);
      if (JSON.stringify(r1.derivedFrom) !== JSON.stringify(r0.derivedFrom)) fail('(b) derivation changed', id);
      if (r1.status !== r0.status && !(op.k === 'D' && r0.status === 'active' && r1.status === 'deleted')) fail('(b) status changed', `${id}: ${r0.status} -> ${r1.status}`);
    }
    if (after.size !== g.recs.length) fail('(b) records', `store has ${after.size} records, ground truth ${g.recs.length}`);
    g.recs.forEach((gr, i) => {
      const r = after.get(gr.id);
      if (!r) return fail('(b) records', `r${i} missing from the store`);
      if (lvl(r.taint.lowestAuthority) > lvl(gr.gtAuth))
        fail('(b) non-malleability', `r${i} (${gr.kind} by ${gr.writer}) carries ${r.taint.lowestAuthority}, above the ground-truth minimum ${gr.gtAuth} of its inputs' origins`);
      if (lvl(r.origin.authority) > lvl(gr.gtOrigin)) fail('(b) origin', `r${i} origin ${r.origin.authority} above the ground truth ${gr.gtOrigin}`);
      if (r.status !== gr.status) fail('(b) status', `r${i} is ${r.status}, ground truth ${gr.status}`);
      if (lvl(r.taint.lowestAuthority) < lvl(gr.gtAuth)) bump(this.stats, 'recordsBelowGroundTruth');
    });
    // the session context memauth keeps is exactly what the agent saw
    const ids = await this.mem.driver.sessionReads(TENANT, sessionId(g));
    const idx = new Map(g.recs.map((x, i) => [x.id, i]));
    const got = ids.map((id) => idx.get(id) ?? -1).sort((a, b) => a - b);
    if (JSON.stringify(got) !== JSON.stringify(g.reads)) fail('session context', `session reads ${JSON.stringify(got)}, ground truth ${JSON.stringify(g.reads)}`);
    return after;
  }

  /** Expand one state: reach it, then execute every enabled operation from it (undoing each). */
  async expand(path: readonly string[], expectedKey: string, bounds: Profile, probeOnly: boolean): Promise<{ transitions: TransitionOut[]; replayMismatch: boolean }> {
    const g = await this.reach(path);
    // every decision taken on the way still replays to its recorded outcome at this later state
    for (const d of await this.mem.listDecisions({ tenant: TENANT, limit: 1000 })) {
      const r = await this.mem.replay({ tenant: TENANT, decisionId: d.id });
      bump(this.stats, 'laterReplays');
      if (!r.matches)
        this.violations.push({
          path,
          check: '(c) later replay',
          message: `decision ${d.id} (${d.action.type} ${JSON.stringify(d.action.args)} -> ${d.outcome}) replays to ${r.replayed.outcome} at a later state`,
        });
    }
    const before = await this.observe();
    const replayMismatch = this.key(g, before) !== expectedKey;
    const transitions: TransitionOut[] = [];
    for (const op of enabledOps(g, bounds, probeOnly)) {
      const g2 = cloneG(g);
      this.raw('SAVEPOINT step');
      this.tick = path.length + 1;
      let label: string | null = null;
      let after: Map<string, MemoryRecord> | null = null;
      try {
        ({ label, after } = await this.apply(g2, op, { path, before }));
      } catch (e) {
        this.violations.push({ path: [...path, opString(op)], check: 'error', message: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
      }
      const key = this.key(g2, after ?? (await this.observe()));
      this.raw('ROLLBACK TO step');
      this.raw('RELEASE step');
      bump(this.stats, 'transitions');
      transitions.push({ op: opString(op), key, label });
    }
    return { transitions, replayMismatch };
  }

  async rootKey(): Promise<string> {
    const g = await this.reach([]);
    return this.key(g, await this.observe());
  }
}

// ------------------------------------------------------------------ worker

interface ExpandJob {
  readonly type: 'expand';
  readonly items: ReadonlyArray<{ id: number; path: string[]; key: string }>;
  readonly probeOnly: boolean;
}
interface ExpandReply {
  readonly type: 'expanded';
  readonly results: ReadonlyArray<{ id: number; transitions: TransitionOut[]; replayMismatch: boolean }>;
  readonly stats: Stats;
  readonly violations: Violation[];
  readonly samples: Record<string, string>;
}

async function workerMain(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('not a worker');
  const cfg = workerData as Config;
  const runner = await Runner.open(cfg.mutant, cfg.renumber, cfg.profile);
  port.postMessage({ type: 'ready', rootKey: await runner.rootKey() });
  port.on('message', (job: ExpandJob | { type: 'exit' }) => {
    if (job.type === 'exit') {
      void runner.mem.close().then(() => process.exit(0));
      return;
    }
    void (async () => {
      const results: Array<{ id: number; transitions: TransitionOut[]; replayMismatch: boolean }> = [];
      for (const it of job.items) results.push({ id: it.id, ...(await runner.expand(it.path, it.key, cfg.profile, job.probeOnly)) });
      const reply: ExpandReply = { type: 'expanded', results, stats: runner.stats, violations: runner.violations, samples: runner.samples };
      runner.stats = {};
      runner.samples = {};
      runner.violations = [];
      port.postMessage(reply);
    })();
  });
}

// ------------------------------------------------------------------ main: breadth-first search

export interface Result {
  readonly statesByDepth: number[];
  readonly states: number;
  readonly transitions: number;
  readonly sequences: number;
  readonly sequencesByLength: number[];
  readonly probeSequences: number;
  readonly labelSequences: Record<string, number>;
  readonly labelTransitions: Record<string, number>;
  readonly stats: Stats;
  readonly violations: Violation[];
  readonly samples: Record<string, string>;
  readonly replayMismatches: number;
  readonly seconds: number;
}

export async function explore(cfg: Config, workers: number, log: (s: string) => void): Promise<Result> {
  const t0 = performance.now();
  const { depth } = cfg.profile;
  const file = fileURLToPath(import.meta.url);
  const pool: Array<{ w: Worker; busy: boolean }> = [];
  let rootKey = '';
  await Promise.all(
    Array.from(
      { length: workers },
      () =>
        new Promise<void>((resolve, reject) => {
          const w = new Worker(file, { workerData: cfg });
          w.once('error', reject);
          w.once('message', (m: { type: string; rootKey: string }) => {
            rootKey = m.rootKey;
            pool.push({ w, busy: false });
            resolve();
          });
        }),
    ),
  );

  // state table
  const keyToId = new Map<string, number>([[rootKey, 0]]);
  const keyOfId: string[] = [rootKey];
  const parent: number[] = [-1];
  const viaOp: string[] = [''];
  const minDepth: number[] = [0];
  const edges: Array<Int32Array | null> = [null];
  const labelled: Array<{ s: number; label: string }> = [];
  const stats: Stats = {};
  const samples: Record<string, string> = {};
  const violations: Violation[] = [];
  let replayMismatches = 0;
  let transitions = 0;
  const statesByDepth = [1];
  const pathOf = (s: number): string[] => {
    const p: string[] = [];
    for (let x = s; x > 0; x = parent[x] as number) p.push(viaOp[x] as string);
    return p.reverse();
  };

  let frontier = [0];
  for (let level = 0; level <= depth && frontier.length > 0; level++) {
    const probeOnly = level === depth;
    const next: number[] = [];
    const chunk = Math.max(1, Math.min(64, Math.ceil(frontier.length / (workers * 8))));
    let cursor = 0;
    await new Promise<void>((resolve, reject) => {
      let outstanding = 0;
      for (const slot of pool) slot.w.removeAllListeners('error').once('error', reject);
      const dispatch = (slot: { w: Worker; busy: boolean }): void => {
        if (cursor >= frontier.length || (cfg.stopAtFirst && violations.length > 0)) {
          if (outstanding === 0) resolve();
          return;
        }
        const ids = frontier.slice(cursor, cursor + chunk);
        cursor += ids.length;
        outstanding++;
        slot.busy = true;
        const job: ExpandJob = { type: 'expand', probeOnly, items: ids.map((id) => ({ id, path: pathOf(id), key: keyOfId[id] as string })) };
        slot.w.once('message', (reply: ExpandReply) => {
          outstanding--;
          slot.busy = false;
          for (const [k, v] of Object.entries(reply.stats)) bump(stats, k, v);
          for (const [k, v] of Object.entries(reply.samples)) samples[k] ??= v;
          violations.push(...reply.violations);
          for (const res of reply.results) {
            if (res.replayMismatch) {
              replayMismatches++;
              if (replayMismatches <= 3) log(`  replay mismatch: ${pathOf(res.id).join(' ; ')}`);
            }
            transitions += res.transitions.length;
            const out = new Int32Array(probeOnly ? 0 : res.transitions.length);
            res.transitions.forEach((t, i) => {
              if (t.label !== null) labelled.push({ s: res.id, label: t.label });
              if (probeOnly) return;
              let c = keyToId.get(t.key);
              if (c === undefined) {
                c = parent.length;
                keyToId.set(t.key, c);
                keyOfId.push(t.key);
                parent.push(res.id);
                viaOp.push(t.op);
                minDepth.push(level + 1);
                edges.push(null);
                next.push(c);
              }
              out[i] = c;
            });
            if (!probeOnly) edges[res.id] = out;
          }
          dispatch(slot);
        });
        slot.w.postMessage(job);
      };
      for (const slot of pool) dispatch(slot);
    });
    if (!probeOnly) {
      statesByDepth.push(next.length);
      log(`  depth ${level + 1}: ${next.length} new states (${parent.length} total, ${transitions} transitions, ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    }
    if (cfg.stopAtFirst && violations.length > 0) break;
    frontier = probeOnly ? [] : next;
  }
  for (const slot of pool) slot.w.postMessage({ type: 'exit' });
  if (statesByDepth.length > depth + 1) statesByDepth.length = depth + 1;
  while (statesByDepth.length > 1 && statesByDepth[statesByDepth.length - 1] === 0) statesByDepth.pop();

  // exact count of sequences: fwd[k][s] = number of operation sequences of length k from the empty store to s
  const n = parent.length;
  let fwd = new Float64Array(n);
  fwd[0] = 1;
  const sequencesByLength: number[] = [1];
  const reach = new Float64Array(n); // sum over k <= depth of fwd[k][s]
  reach[0] = 1;
  for (let k = 1; k <= depth; k++) {
    const nf = new Float64Array(n);
    for (let s = 0; s < n; s++) {
      const f = fwd[s] as number;
      if (f === 0) continue;
      const es = edges[s];
      if (!es) continue;
      for (const c of es) nf[c] = (nf[c] as number) + f;
    }
    fwd = nf;
    let total = 0;
    for (let s = 0; s < n; s++) {
      total += fwd[s] as number;
      reach[s] = (reach[s] as number) + (fwd[s] as number);
    }
    sequencesByLength.push(total);
  }
  // every sequence of exactly `depth` operations is also extended by each authorize probe
  let probeSequences = 0;
  for (let s = 0; s < n; s++) {
    const f = fwd[s] as number;
    if (f === 0) continue;
    probeSequences += f * probesOf(cfg.profile, true).length;
  }
  const labelSequences: Record<string, number> = {};
  const labelTransitions: Record<string, number> = {};
  for (const { s, label } of labelled) {
    labelTransitions[label] = (labelTransitions[label] ?? 0) + 1;
    // sequences ending with this authorize: every path of <= depth operations to s, then it
    labelSequences[label] = (labelSequences[label] ?? 0) + (reach[s] as number);
  }
  return {
    statesByDepth,
    states: n,
    transitions,
    sequences: sequencesByLength.reduce((a, b) => a + b, 0),
    sequencesByLength,
    probeSequences,
    labelSequences,
    labelTransitions,
    stats,
    violations,
    samples,
    replayMismatches,
    seconds: (performance.now() - t0) / 1000,
  };
}

// ------------------------------------------------------------------ CLI

function argValue(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

const fmt = (x: number): string => Math.round(x).toLocaleString('en-US');
const ALLOW_PATHS = ['trusted', 'corroborated', 'confirmed'] as const;

/** Print one exploration's figures; returns whether it met its expectation. */
function report(cfg: Config, r: Result, expect: 'holds' | 'violation'): boolean {
  const { profile: p } = cfg;
  if (expect === 'violation') {
    // the search stops at the first violation: only the counterexample (shortest: breadth-first) is meaningful
    const v = r.violations[0];
    console.log(
      `-- mutant ${cfg.mutant} (profile ${p.name}, depth ${p.depth}): ${v ? `counterexample after ${fmt(r.states)} states / ${fmt(r.transitions)} transitions, ${r.seconds.toFixed(1)} s` : `NO violation in ${fmt(r.states)} states — MISMATCH`}`,
    );
    if (v) {
      console.log(`     ${v.check}: ${v.message}`);
      console.log(`     sequence: ${v.path.join(' ; ')}`);
    }
    return v !== undefined;
  }
  const seq = (label: string): string => `${fmt(r.labelSequences[label] ?? 0)} sequences / ${fmt(r.labelTransitions[label] ?? 0)} transitions`;
  const u = UNIVERSES[p.universe ?? 'base'];
  const leaf = probesOf(p, true);
  console.log(
    `-- profile ${p.name}${cfg.mutant !== 'none' ? `, mutant ${cfg.mutant}` : ''}: depth ${p.depth} operations + a final probe (${leaf.join(' | ')}); <= ${p.maxRecords} records, ${p.maxSessions} sessions, ${p.maxCorroborations} corroborations, ${p.maxConfirmations} confirmations, ${p.maxDeletes} deletion`,
  );
  console.log(
    `   writes: ${p.writes.length === ALL_WRITES.length ? 'every principal x source x payee' : p.writes.map(([a, b, c]) => `${a}/${b}/${c}`).join(' ')}; corroborators: ${p.corroborators.join(', ') || 'none'}; confirmations: ${confirmsOf(p).join(' | ')}`,
  );
  if (p.universe !== undefined && p.universe !== 'base') {
    console.log(
      `   values: ${Object.entries(u.values)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')}; amounts (exact decimals): ${Object.entries(AMOUNT_ARGUMENTS)
        .map(([t, a]) => `${t}.${a.join('/')}`)
        .join(' ')}`,
    );
    const extra = [
      p.attachers?.length ? `attach by ${p.attachers.join(', ')} stating ${(p.attachValues ?? []).join('/')}; views inspected` : '',
      p.fetchVariants?.length ? `fetch variants ${p.fetchVariants.join(', ')}` : '',
    ].filter((x) => x !== '');
    if (extra.length > 0) console.log(`   new operations: ${extra.join('; ')}`);
  }
  console.log(`   distinct states:      ${fmt(r.states)} (by depth: ${r.statesByDepth.map(fmt).join(', ')})`);
  console.log(`   transitions executed: ${fmt(r.transitions)} real API operations, each followed by the checks`);
  console.log(
    `   sequences covered:    ${fmt(r.sequences)} of length <= ${p.depth} (by length: ${r.sequencesByLength.map(fmt).join(', ')}) + ${fmt(r.probeSequences)} of length ${p.depth} followed by a pay probe`,
  );
  console.log(
    `   decisions checked:    ${fmt(r.stats.decisions ?? 0)} authorize calls, each replayed (${fmt(r.stats.replays ?? 0)}), plus ${fmt(r.stats.laterReplays ?? 0)} replays of earlier decisions at later states; ${fmt(r.stats.stateChecks ?? 0)} post-state checks`,
  );
  for (const q of leaf) {
    console.log(`   ${`${q} allowed`.padEnd(21)} ${ALLOW_PATHS.map((path) => `${path} ${seq(`allow:${path}:${q}`)}`).join('; ')}`);
  }
  console.log(
    `   high-risk denied:     ${fmt(r.stats['high.deny'] ?? 0)} decisions; ground truth would have permitted ${fmt(r.stats['high.deny.groundTruthWouldPermit'] ?? 0)} of them (memauth stricter than the invariant)`,
  );
  if (r.samples.stricter !== undefined) console.log(`     e.g. ${r.samples.stricter}`);
  console.log(
    `   recall echoes:        ${fmt(r.stats.recallEchoes ?? 0)} resolved to the original; records carried below their ground truth: ${fmt(r.stats.recordsBelowGroundTruth ?? 0)} observations`,
  );
  if (p.fetchVariants?.length)
    console.log(
      `   fetched pages:        ${fmt(r.stats.pageEchoes ?? 0)} same-text pages resolved to the record they repeat, ${fmt(r.stats.pageEchoesStoredAsNew ?? 0)} stored as new records; ${fmt(r.stats.pagesNotRecorded ?? 0)} different texts swallowed as echoes (shown, not recorded)`,
    );
  if (p.attachers?.length) console.log(`   attached text:        shown in a view ${fmt(r.stats.attachedTextShown ?? 0)} times; attach refused ${fmt(r.stats.attachRefused ?? 0)} times`);
  console.log(`   representative paths reproduced their state: ${r.replayMismatches === 0 ? 'always' : `NO (${r.replayMismatches} mismatches)`}`);
  console.log(`   violations:           ${r.violations.length}`);
  // one shortest counterexample per kind: the check, the new operations on the path, the final operation
  const byKind = new Map<string, Violation>();
  for (const v of r.violations) {
    const kind = violationKind(v);
    const seen = byKind.get(kind);
    if (!seen || v.path.length < seen.path.length || (v.path.length === seen.path.length && v.path.join(';') < seen.path.join(';'))) byKind.set(kind, v);
  }
  if (byKind.size > 0) console.log(`   counterexamples:      ${byKind.size} kinds (check | new operations on the path | final operation), the shortest of each:`);
  for (const [kind, v] of [...byKind.entries()].sort(([a], [b]) => a.localeCompare(b)).slice(0, 40)) {
    console.log(`     [${kind}] ${v.check}: ${v.message}`);
    console.log(`       sequence: ${v.path.join(' ; ')}`);
  }
  console.log(`   time:                 ${r.seconds.toFixed(1)} s`);
  const missing = mustAllowOf(p).filter((pq) => (r.labelTransitions[`allow:${pq}`] ?? 0) === 0);
  if (missing.length > 0) console.log(`   => non-vacuity FAILED: never allowed: ${missing.join(', ')}`);
  const ok = r.violations.length === 0 && r.replayMismatches === 0 && missing.length === 0;
  console.log(ok ? '   => holds: invariant, non-malleability and replay on every transition' : '   => FAILED');
  return ok;
}

/** A counterexample's kind: its check, the widened operations on its path, and its final operation. */
export function violationKind(v: Violation): string {
  const ops = v.path.map(parseOp);
  const widened = [...new Set(ops.flatMap((o) => (o.k === 'F' ? [`fetch:${o.variant}`] : o.k === 'E' ? [`attach:${o.v}`] : [])))].sort();
  return `${v.check} | ${widened.join(',') || '-'} | ${v.path[v.path.length - 1] ?? ''}`;
}

async function cliMain(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(
      'usage: node dist/formal/impl/enumerate.js [--profile wide|deep|all|lookalike|evidence|echo|resource|widened] [--widened] [--depth N] [--workers N] [--mutant none|k1|web-trusted|one-domain|all] [--no-renumber] [--quiet]',
    );
    console.log('  default: both base profiles (wide at depth 3, deep at depth 4), memauth as configured; --mutant all: each configuration mutant must yield a counterexample');
    console.log('  --widened (= --profile widened): the four widened universes (look-alike values, attached text, echo variants, resources)');
    return;
  }
  const workers = Number(argValue(args, '--workers') ?? Math.max(1, Math.min(2, availableParallelism())));
  const mutantArg = argValue(args, '--mutant') ?? 'none';
  const profileArg = args.includes('--widened') ? 'widened' : (argValue(args, '--profile') ?? 'all');
  const depthArg = argValue(args, '--depth');
  const quiet = args.includes('--quiet');
  if (mutantArg !== 'all' && !(MUTANTS as readonly string[]).includes(mutantArg)) throw new Error(`unknown --mutant ${mutantArg}`);
  const named: Record<string, Profile> = { ...PROFILES, ...WIDENED };
  if (!['all', 'widened'].includes(profileArg) && named[profileArg] === undefined) throw new Error(`unknown --profile ${profileArg}`);
  const log = (s: string): void => {
    if (!quiet) console.log(s);
  };
  const chosen = profileArg === 'all' ? [PROFILES.wide, PROFILES.deep] : profileArg === 'widened' ? Object.values(WIDENED) : [named[profileArg] as Profile];
  const profiles = chosen.map((p) => (depthArg !== undefined ? { ...p, depth: Number(depthArg) } : p));
  const mutants: Mutant[] = mutantArg === 'all' ? MUTANTS.filter((m) => m !== 'none') : [mutantArg as Mutant];
  console.log('== Implementation check: exhaustive enumeration against the real Memory API on SQLite ==');
  console.log(`universe: ${PRINCIPAL_IDS.map((p) => `${p}(${PRINCIPALS[p].kind}, ${PRINCIPALS[p].domain})`).join(' ')}`);
  console.log(
    `          sources SOR=${SOURCES.SOR} WEB=${SOURCES.WEB}; payees L=${UNIVERSES.base.values.L} A=${UNIVERSES.base.values.A}; actions pay (high), answer (read_only); k = 2; ${workers} worker(s)`,
  );
  const t0 = performance.now();
  let ok = true;
  const totals = { states: 0, transitions: 0, sequences: 0, decisions: 0 };
  for (const mutant of mutants) {
    // mutants run on the deep profile at depth 3 unless --depth says otherwise: each has a counterexample of at most 4 operations
    for (const profile of mutant === 'none' ? profiles : [depthArg !== undefined ? { ...PROFILES.deep, depth: Number(depthArg) } : { ...PROFILES.deep, depth: 3 }]) {
      const expect = mutant === 'none' ? 'holds' : 'violation';
      const cfg: Config = { profile, mutant, stopAtFirst: expect === 'violation', renumber: !args.includes('--no-renumber') };
      const r = await explore(cfg, workers, log);
      ok = report(cfg, r, expect) && ok;
      if (mutant === 'none') {
        totals.states += r.states;
        totals.transitions += r.transitions;
        totals.sequences += r.sequences + r.probeSequences;
        totals.decisions += r.stats.decisions ?? 0;
      }
    }
  }
  if (mutants.includes('none'))
    console.log(`total: ${fmt(totals.states)} states, ${fmt(totals.transitions)} transitions, ${fmt(totals.sequences)} sequences, ${fmt(totals.decisions)} decisions checked`);
  console.log(`total time: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  console.log(ok ? 'RESULT: all observed results match the expected ones' : 'RESULT: MISMATCH');
  process.exitCode = ok ? 0 : 1;
}

if (isMainThread) {
  if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
    cliMain().catch((e: unknown) => {
      console.error(e);
      process.exit(2);
    });
  }
} else {
  void workerMain();
}
