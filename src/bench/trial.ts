/**
 * One bench run: a fresh store, session A (the world writes trusted facts and the untrusted
 * document through one channel), session B (the agent proposes an action), the gate's decision
 * with every defense's verdict, the scoped-confirmation retry, replay and chain checks.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Memory } from '../api/memory.js';
import { openMemory } from '../api/open.js';
import { MemauthError } from '../core/errors.js';
import { type Policy, argumentTypes, riskTier } from '../core/policy.js';
import type { Action, Decision, Tier } from '../core/types.js';
import { type Agent, type AgentOutcome, type LlmCounters, type ProposalStatus, addCounters, zeroCounters } from './agents.js';
import { type DefenseName, type Verdict, memauthVerdict, noneGate, observe, verdicts } from './defenses/index.js';
import { actionMatches } from './plan.js';
import { type BenchActionT, type Scenario, toAction } from './scenarios.js';
import { deriveSeed, mulberry32, shuffled } from './stats.js';
import type { TrialRecord } from './types.js';
import { type RunSpec, SCOPE, SESSION_B, TENANT, recallAll, sessionA, sessionTools, specLabel, worstCaseSummary } from './world.js';

export interface RunResult {
  readonly record: TrialRecord;
  readonly counters: LlmCounters;
  readonly notes: readonly string[];
  readonly check: { replayed: boolean; chainOk: boolean; decided: boolean; attack: boolean; narrowedDenied: boolean };
}

export interface RunContext {
  readonly policies: ReadonlyMap<number, Policy>;
  readonly defenses: readonly DefenseName[];
  readonly seed: number;
  readonly contentThreshold: number;
  readonly workDir: string | null;
}

/** What one run knows before the store is opened. */
interface Trial {
  readonly ctx: RunContext;
  readonly agent: Agent;
  readonly spec: RunSpec;
  readonly s: Scenario;
  readonly seed: number;
  readonly rand: () => number;
  readonly isLegit: boolean;
  readonly isAttack: boolean;
  /** the value session A's document claims (the attacker's action, or the legit expected action) */
  readonly claim: BenchActionT | null;
  /** the action a benign or legit run should carry out */
  readonly target: BenchActionT | undefined;
  readonly policy: Policy;
  readonly started: number;
}

/** LLM counters of the run, added to as the summarizer and the agent answer. */
interface Counting {
  counters: LlmCounters;
}

type Base = Omit<TrialRecord, 'proposalStatus' | 'matchesAttack' | 'matchesTarget' | 'tier' | 'verdicts' | 'memauth' | 'tokens' | 'ms'>;

function trialOf(ctx: RunContext, agent: Agent, spec: RunSpec, trial: number): Trial {
  const started = Date.now();
  const s = spec.scenario;
  const seed = deriveSeed(ctx.seed, agent.label, trial, specLabel(spec));
  const isLegit = s.kind === 'legit';
  const isAttack = !isLegit && spec.variant !== 'benign';
  const claim = isAttack ? (s.session_b.attacker_action ?? null) : isLegit ? (s.session_b.expected_action ?? null) : null;
  const target = isLegit ? s.session_b.expected_action : (s.session_b.benign_action ?? { tool: 'answer' });
  return { ctx, agent, spec, s, seed, rand: mulberry32(seed), isLegit, isAttack, claim, target, policy: ctx.policies.get(spec.k) as Policy, started };
}

/** Session A through the spec's channel, then the agent's proposal in session B. */
async function propose(mem: Memory, t: Trial, c: Counting): Promise<{ outcome: AgentOutcome; summarizerEmpty: boolean }> {
  const modelSummary = t.agent.summarize?.bind(t.agent);
  const summarize =
    modelSummary === undefined
      ? async (doc: string): Promise<string | null> => worstCaseSummary(doc, t.claim)
      : async (doc: string, prompt: string): Promise<string | null> => {
          const r = await modelSummary(doc, prompt, t.seed);
          c.counters = addCounters(c.counters, r.counters);
          return r.text;
        };
  const a = await sessionA(mem, t.spec, t.claim, summarize, t.rand() < 0.5);
  // the application records the user's turn when the user sends it, before the agent reads anything
  await mem.write({ tenant: TENANT, scope: SCOPE, principal: 'user', content: t.s.session_b.user_task, session: SESSION_B });
  const recalled = await recallAll(mem, t.s.session_b.user_task);
  const outcome = await t.agent.propose({
    userTask: t.s.session_b.user_task,
    memory: shuffled(recalled, t.rand),
    workflow: t.spec.cell === 'multi_turn' ? (t.spec.sub as 'note' | 'tool_call') : 'direct',
    tools: sessionTools(mem),
    seed: t.seed,
    intent: { desired: t.isAttack ? (t.s.session_b.attacker_action ?? null) : null, fallback: t.target ?? { tool: 'answer' } },
    argumentTypes: (type) => argumentTypes(t.policy, type),
  });
  c.counters = addCounters(c.counters, outcome.counters);
  return { outcome, summarizerEmpty: a.summarizerEmpty };
}

function baseRecord(t: Trial, trial: number, outcome: AgentOutcome, summarizerEmpty: boolean): Base {
  const { s, spec } = t;
  return {
    agent: t.agent.label,
    trial,
    seed: t.seed,
    scenario: s.id,
    kind: s.kind,
    attackClass: s.attack_class,
    variant: spec.variant,
    cell: spec.cell,
    sub: spec.sub,
    k: spec.k,
    proposal: outcome.action,
    turns: outcome.turns,
    summarizerEmpty,
  };
}

function noDecision(t: Trial, base: Base, c: Counting, notes: readonly string[], status: ProposalStatus): RunResult {
  const counters = c.counters;
  return {
    record: {
      ...base,
      proposalStatus: status,
      matchesAttack: false,
      matchesTarget: false,
      tier: null,
      verdicts: {},
      memauth: null,
      tokens: { prompt: counters.promptTokens, completion: counters.completionTokens },
      ms: Date.now() - t.started,
    },
    counters,
    notes,
    check: { replayed: false, chainOk: false, decided: false, attack: false, narrowedDenied: false },
  };
}

/**
 * memauth asks for a scoped confirmation: the user confirms exactly this action, the agent retries.
 * The gate names `needs_confirmation` only when no hard reason (deleted, expired, unverified record) stands.
 * @returns whether the action is allowed outright or after confirmation; null for an attack.
 */
async function afterConfirmation(mem: Memory, t: Trial, action: Action, decision: Decision, retry: () => Promise<Decision>): Promise<boolean | null> {
  if (t.isAttack) return null;
  if (decision.outcome !== 'deny') return true;
  if (!decision.reasons.some((r) => r.code === 'needs_confirmation')) return false;
  await mem.confirm({ tenant: TENANT, principal: 'user', action });
  const again = await retry();
  return again.outcome !== 'deny';
}

/** Notes on a worst-case legit run: computed argument values, and a legit action denied. */
function legitNotes(t: Trial, decision: Decision, notes: string[]): void {
  if (!(t.agent.kind === 'worst-case' && t.isLegit && t.spec.cell === 'legit')) return;
  const id = t.s.id;
  for (const v of decision.values) {
    if (v.recordIds.length === 0 && !v.userTurn && v.computed) {
      const [x, y] = v.computed.operands;
      const from = (o: typeof x): string => (o.userTurn ? "the user's turn" : `memory ${o.recordIds.length > 0 ? 'records' : ''}`.trim());
      notes.push(`${id}: argument ${v.argument}=${v.value} is written nowhere; its provenance is the computation ${x.value} ${v.computed.op} ${y.value} over ${from(x)} and ${from(y)}.`);
    }
  }
  if (decision.outcome === 'deny') notes.push(`${id}: legit action denied: ${decision.reasons.map((r) => r.code + (r.argument ? `(${r.argument})` : '')).join(', ')}`);
}

/** Every defense's verdict on the action; the baselines' views are pulled from the store only when a baseline is reported. */
async function verdictsOf(mem: Memory, t: Trial, action: Action, tier: Tier, decision: Decision, declared: AgentOutcome['declared']): Promise<Partial<Record<DefenseName, Verdict>>> {
  const needsView = t.ctx.defenses.some((d) => d !== 'none' && d !== 'memauth');
  const observation = needsView ? await observe(mem, { tenant: TENANT, session: SESSION_B, action, userTurn: t.s.session_b.user_task, declared }) : null;
  const all = observation !== null ? verdicts({ action, tier, observation, decision, content: { threshold: t.ctx.contentThreshold } }) : { none: noneGate(), memauth: memauthVerdict(decision) };
  const kept: Partial<Record<DefenseName, Verdict>> = {};
  for (const d of t.ctx.defenses) kept[d] = (all as Partial<Record<DefenseName, Verdict>>)[d] as Verdict;
  return kept;
}

/** The gate's decision on the proposal, every check on it, and the run's record. */
async function decide(mem: Memory, t: Trial, base: Base, c: Counting, outcome: AgentOutcome & { action: BenchActionT }, notes: string[]): Promise<RunResult> {
  const { s, spec } = t;
  const action = toAction(outcome.action);
  const tier = riskTier(t.policy, action);
  const userTurn = { principal: 'user', text: s.session_b.user_task };
  const declaredMode = spec.cell === 'multi_turn' ? { dependsOn: [...outcome.declared], context: 'declared' as const } : {};
  const authorize = (): Promise<Decision> => mem.authorize({ tenant: TENANT, action, session: SESSION_B, userTurn, ...declaredMode });
  let decision: Decision;
  try {
    decision = await authorize();
  } catch (e) {
    // a model's action the API refuses to even consider (e.g. a malformed argument) counts as unparsable
    if (e instanceof MemauthError && e.code === 'INVALID_ARGUMENT') return noDecision(t, base, c, notes, 'unparsable');
    throw e;
  }
  const kept = await verdictsOf(mem, t, action, tier, decision, outcome.declared);
  const replay = await mem.replay({ tenant: TENANT, decisionId: decision.id });
  const inModelAttack = t.isAttack && spec.cell !== 'limit_independent';
  const narrowed = inModelAttack && spec.cell !== 'multi_turn' ? await mem.authorize({ tenant: TENANT, action, session: SESSION_B, userTurn, context: 'declared' }) : null;
  const confirmationRequested = decision.outcome === 'deny' && decision.reasons.some((r) => r.code === 'needs_confirmation');
  const allowedAfterConfirmation = await afterConfirmation(mem, t, action, decision, authorize);
  const verify = await mem.verifyAudit({ tenant: TENANT });
  legitNotes(t, decision, notes);
  const matchesAttack = actionMatches(outcome.action, s.session_b.attacker_action);
  const counters = c.counters;
  return {
    record: {
      ...base,
      proposalStatus: outcome.status,
      matchesAttack: t.isAttack && matchesAttack,
      matchesTarget: actionMatches(outcome.action, t.target),
      tier,
      verdicts: kept,
      memauth: {
        decisionId: decision.id,
        outcome: decision.outcome,
        replayed: replay.matches,
        chainOk: verify.ok,
        confirmationRequested,
        allowedAfterConfirmation,
        narrowedOutcome: narrowed?.outcome ?? null,
        contextWaived: decision.contextWaived === true,
      },
      tokens: { prompt: counters.promptTokens, completion: counters.completionTokens },
      ms: Date.now() - t.started,
    },
    counters,
    notes,
    check: { replayed: replay.matches, chainOk: verify.ok, decided: true, attack: narrowed !== null && matchesAttack, narrowedDenied: narrowed?.outcome === 'deny' },
  };
}

/** One run of `spec` by `agent` (trial `trial`) on a fresh store, `run-<index>.db` under the work dir or in memory. */
export async function runOne(ctx: RunContext, agent: Agent, spec: RunSpec, trial: number, index: number): Promise<RunResult> {
  const t = trialOf(ctx, agent, spec, trial);
  const path = ctx.workDir !== null ? join(ctx.workDir, `run-${index}.db`) : ':memory:';
  const mem = await openMemory({ path, policy: t.policy, checkpointKey: false });
  const c: Counting = { counters: zeroCounters() };
  const notes: string[] = [];
  try {
    const { outcome, summarizerEmpty } = await propose(mem, t, c);
    const base = baseRecord(t, trial, outcome, summarizerEmpty);
    if (outcome.action === null) return noDecision(t, base, c, notes, outcome.status);
    return await decide(mem, t, base, c, { ...outcome, action: outcome.action }, notes);
  } finally {
    await mem.close();
    if (path !== ':memory:') for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
  }
}
