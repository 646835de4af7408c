/**
 * Replaying a decision from the audit log alone (docs/design.md § Audit log: every decision can be
 * replayed): rebuild the gate's input from the chain's entries, run `decide` again, and report
 * whether the outcome and reasons match what was recorded.
 */
import type { AuditEntry } from '../core/audit.js';
import { TRUSTED_THRESHOLD } from '../core/authority.js';
import { hashCanonical } from '../core/canonical.js';
import { MemauthError } from '../core/errors.js';
import { type FactsBundle, type RecordFacts, dependencyFacts, memoryRefId } from '../core/facts.js';
import { type ConfirmationCandidate, type DependencyFacts, type GateResult, decide } from '../core/gate.js';
import { type Policy, argumentSuppliers, argumentTypes, disallowedArguments, loadPolicy, modeFor, riskTier } from '../core/policy.js';
import { prefixMatches, withSessionEdges } from '../core/session.js';
import type { Action, Confirmation, Corroboration, DependencyWhy, IntentProvenance, PrincipalKind, Reason, SessionRef, ValueProvenance } from '../core/types.js';
import type { Requester } from '../core/confirmation.js';
import type { StorageDriver } from '../store/driver.js';
import { type ChainState, currentVersions, versionConflicts } from '../core/versions.js';
import { yielder } from './yielder.js';

/** What a replay rebuilt and whether the re-evaluation agrees with the recorded decision. */
export interface ReplayResult {
  readonly decisionId: string;
  readonly auditSeq: number;
  readonly policyVersion: string;
  readonly policyText: string;
  readonly action: Action;
  readonly recorded: { readonly outcome: string; readonly reasons: readonly Reason[]; readonly confirmationId: string | null };
  readonly replayed: GateResult;
  /** true when outcome, reasons and the consumed confirmation are identical. */
  readonly matches: boolean;
  /** the dependencies as rebuilt from the log, with their lineage down to the roots. */
  readonly dependencies: ReadonlyArray<{ memoryId: string; why: readonly DependencyWhy[]; lowestAuthority: string; actionAuthority: string; status: string; known: boolean }>;
  readonly lineage: ReadonlyArray<{ from: string; to: string; transform: string; kind: string }>;
  readonly origins: Readonly<Record<string, { principalId: string; authority: string; sourceRef: string }>>;
  readonly corroborations: readonly Corroboration[];
  readonly confirmations: readonly Confirmation[];
}

interface LogState {
  records: Map<string, RecordFacts>;
  origins: Map<string, { principalId: string; authority: string; sourceRef: string }>;
  domains: Map<string, string>;
  /** principal kinds, for the requester of a decision. */
  kinds: Map<string, PrincipalKind>;
  corroborations: Map<string, Corroboration[]>;
  confirmations: Map<string, Confirmation>;
  /** confirmations by `actionType NUL argsHash`, in log order (so a replay does not filter every confirmation). */
  confirmationsByArgs: Map<string, Confirmation[]>;
  uses: Map<string, number>;
  policies: Map<string, string>;
  /** records written in a session whose context is not spelled out in `records` yet (see {@link spellOutContexts}). */
  contexts: Map<string, SessionRef>;
  /** versions (core/versions.ts): each chain's later versions in log order, the chain of each record in one, and every record's write seq. */
  chains: Map<string, string[]>;
  chainOf: Map<string, string>;
  seqs: Map<string, number>;
}

function emptyState(): LogState {
  return {
    records: new Map(),
    origins: new Map(),
    domains: new Map(),
    kinds: new Map(),
    corroborations: new Map(),
    confirmations: new Map(),
    confirmationsByArgs: new Map(),
    uses: new Map(),
    policies: new Map(),
    contexts: new Map(),
    chains: new Map(),
    chainOf: new Map(),
    seqs: new Map(),
  };
}

const argsKey = (actionType: string, argsHash: string): string => `${actionType}\u0000${argsHash}`;

function push<T>(m: Map<string, T[]>, key: string, v: T): void {
  const list = m.get(key);
  if (list) list.push(v);
  else m.set(key, [v]);
}

/** A `corroborate` entry: the corroboration joins its record's list. */
function applyCorroboration(s: LogState, tenant: string, p: Record<string, any>): void {
  // eslint-disable-line @typescript-eslint/no-explicit-any -- corroborate payload, hashed in the chain
  const c: Corroboration = {
    id: p.corroborationId,
    tenant,
    recordId: p.recordId,
    principalId: p.principalId,
    authority: p.authority,
    domain: p.domain,
    evidenceRef: p.evidenceRef,
    at: p.at,
  };
  s.corroborations.set(c.recordId, [...(s.corroborations.get(c.recordId) ?? []), c]);
}

/** A `confirm` entry: the confirmation, indexed by action type and arguments hash. */
function applyConfirmation(s: LogState, c: Confirmation): void {
  const fresh = !s.confirmations.has(c.id);
  s.confirmations.set(c.id, c);
  if (fresh) push(s.confirmationsByArgs, argsKey(c.actionType, c.argsHash), c);
  else {
    // a repeated id (only in a forged log) keeps its first position, as in the map: re-index
    s.confirmationsByArgs.clear();
    for (const x of s.confirmations.values()) push(s.confirmationsByArgs, argsKey(x.actionType, x.argsHash), x);
  }
}

/** Apply one audit entry to the state rebuilt from the log (refused attempts change nothing). */
function apply(s: LogState, e: AuditEntry): void {
  const p = e.payload as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- payloads are checked by the chain hash; shape by op
  if (p.refused !== undefined) return;
  switch (e.op) {
    case 'policy':
      s.policies.set(String(p.policyVersion), String(p.text));
      break;
    case 'principal':
      s.domains.set(String(p.principalId), String(p.domain));
      if (typeof p.kind === 'string') s.kinds.set(String(p.principalId), p.kind as PrincipalKind);
      break;
    case 'write':
    case 'derive':
      s.records.set(p.recordId, {
        id: p.recordId,
        lowestAuthority: p.taint.lowestAuthority,
        originPrincipal: p.origin.principalId,
        status: 'active',
        expiresAt: p.expiresAt ?? null,
        derivedFrom: p.derivedFrom,
        verified: true,
      });
      s.origins.set(p.recordId, { principalId: p.origin.principalId, authority: p.origin.authority, sourceRef: p.origin.sourceRef });
      if (p.sessionContext !== undefined) s.contexts.set(p.recordId, p.sessionContext as SessionRef);
      s.seqs.set(p.recordId, e.seq);
      if (p.version !== undefined) {
        push(s.chains, String(p.version.of), p.recordId);
        s.chainOf.set(p.recordId, String(p.version.of)).set(String(p.version.of), String(p.version.of));
      }
      break;
    case 'delete': {
      const r = s.records.get(p.recordId);
      if (r) s.records.set(r.id, { ...r, status: 'deleted' });
      break;
    }
    case 'corroborate':
      applyCorroboration(s, e.tenant, p);
      break;
    case 'confirm':
      applyConfirmation(s, p.confirmation as Confirmation);
      break;
    case 'decide':
      if (p.confirmationId) s.uses.set(p.confirmationId, (s.uses.get(p.confirmationId) ?? 0) + 1);
      break;
    case 'session':
      break;
  }
}

/** Audit entries read per page by a replay (a batch yields to the event loop between pages). */
const PAGE = 200;

/**
 * Rebuild a decision from its tenant's audit log alone and re-evaluate it with the pure gate
 * (docs/design.md § Audit log: replay). Uses no table but the audit chain — and, for a record
 * written in a session, that session's read log, trusted only where it hashes to what the chain holds.
 *
 * @throws MemauthError `DECISION_NOT_FOUND`, `POLICY_NOT_FOUND`.
 */
export async function replayDecision(driver: StorageDriver, tenant: string, decisionId: string): Promise<ReplayResult> {
  const head = await driver.auditHead(tenant);
  const state = emptyState();
  let entry: AuditEntry | undefined;
  const pause = yielder();
  outer: for (let from = 1; head && from <= head.seq; from += PAGE) {
    for (const e of await driver.auditRange(tenant, from, from + PAGE - 1)) {
      if (e.op === 'decide' && (e.payload as Record<string, unknown>).decisionId === decisionId) {
        entry = e;
        break outer;
      }
      apply(state, e);
    }
    await pause();
  }
  if (!entry) throw new MemauthError('DECISION_NOT_FOUND', `no decision ${JSON.stringify(decisionId)} in the audit log of tenant ${JSON.stringify(tenant)}`, { id: decisionId, tenant });
  return evaluate(driver, state, entry, decisionId);
}

/**
 * Replay many decisions in ONE pass over the tenant's audit log (docs/design.md § Audit log: replay;
 * § Metrics: decision replay rate): the log is scanned once, page by page, and each wanted
 * decision is re-evaluated when its `decide` entry is reached, from the state rebuilt from the
 * entries before it — the same result as {@link replayDecision} of that decision alone, at the
 * cost of one scan instead of one scan per decision. The scan yields to the event loop every few
 * milliseconds ({@link yielder}) so that other requests (other tenants) are served meanwhile.
 *
 * @param decisionIds - the decisions to replay (duplicates are replayed once).
 * @returns a map from decision id to its replay, or to the `MemauthError` its replay throws
 *   (`DECISION_NOT_FOUND` for an id with no `decide` entry, `POLICY_NOT_FOUND`).
 */
export async function replayDecisions(driver: StorageDriver, tenant: string, decisionIds: readonly string[]): Promise<Map<string, ReplayResult | MemauthError>> {
  const wanted = new Set(decisionIds);
  const out = new Map<string, ReplayResult | MemauthError>();
  const head = wanted.size > 0 ? await driver.auditHead(tenant) : null;
  const state = emptyState();
  const pause = yielder();
  for (let from = 1; head && from <= head.seq && out.size < wanted.size; from += PAGE) {
    for (const e of await driver.auditRange(tenant, from, from + PAGE - 1)) {
      await pause();
      const id = e.op === 'decide' ? (e.payload as Record<string, unknown>).decisionId : undefined;
      if (typeof id === 'string' && wanted.has(id) && !out.has(id)) {
        try {
          out.set(id, await evaluate(driver, state, e, id));
        } catch (err) {
          if (!(err instanceof MemauthError)) throw err;
          out.set(id, err);
        }
      }
      apply(state, e);
    }
  }
  for (const id of wanted) {
    if (!out.has(id)) out.set(id, new MemauthError('DECISION_NOT_FOUND', `no decision ${JSON.stringify(id)} in the audit log of tenant ${JSON.stringify(tenant)}`, { id, tenant }));
  }
  return out;
}

/** Re-evaluate the decision of `entry` over the state rebuilt from the entries before it (read only; nothing of `state` is kept by reference that a later entry mutates). */
async function evaluate(driver: StorageDriver, state: LogState, entry: AuditEntry, decisionId: string): Promise<ReplayResult> {
  const p = entry.payload as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- decide payload, hashed in the chain
  const { text, policy } = await policyOf(driver, state, entry, decisionId);
  const action = p.action as Action;
  const at = String(p.at);
  const tier = riskTier(policy, action);
  const mode = modeFor(policy, tier);
  const bundle: FactsBundle = { records: state.records, domains: state.domains, corroborations: state.corroborations };
  const { k, minAuthority } = policy.document.corroboration;
  const depIds = (p.dependencies as Array<{ memoryId: string }>).map((d) => d.memoryId);
  const chainOf = chainsOf(state, depIds);
  await spellOutContexts(
    driver,
    entry.tenant,
    state,
    [...depIds, ...[...chainOf.values()].flatMap((c) => [c, ...(state.chains.get(c) ?? [])])].map((memoryId) => ({ memoryId })),
  );
  const deps = (p.dependencies as Array<{ memoryId: string; why: DependencyWhy[] }>).map((d) => dependencyFacts(d.memoryId, d.why, bundle, k, minAuthority, at));
  const chainStates = chainStatesAt(state, new Set(chainOf.values()), (id) => dependencyFacts(id, [], bundle, k, minAuthority, at));
  const cited: string | null = p.citedConfirmationId ?? null;
  const confs = confirmationsAt(state, cited, action.type, String(p.argsHash), at);
  const requester = requesterOf(state, p.requester);
  const candidates: ConfirmationCandidate[] = confs.map((confirmation) => ({ confirmation, usesSoFar: state.uses.get(confirmation.id) ?? 0 }));
  const replayed = decide({
    action,
    argsHash: String(p.argsHash),
    tier,
    mode,
    now: at,
    dependencies: deps,
    values: p.values as ValueProvenance[],
    disallowedArguments: disallowedArguments(policy, action),
    argumentTypes: argumentTypes(policy, action.type),
    confirmations: candidates,
    citedConfirmationId: cited,
    requester,
    conflicts: versionConflicts(depIds, chainOf, chainStates),
    threshold: TRUSTED_THRESHOLD,
    suppliers: argumentSuppliers(policy, action.type),
    ...(p.intent !== undefined ? { intent: p.intent as IntentProvenance } : {}),
  });
  const recorded = { outcome: String(p.outcome), reasons: p.reasons as Reason[], confirmationId: (p.confirmationId ?? null) as string | null };
  const matches =
    replayed.outcome === recorded.outcome &&
    hashCanonical(replayed.reasons) === hashCanonical(recorded.reasons) &&
    replayed.confirmationId === recorded.confirmationId &&
    replayed.contextWaived === (p.contextWaived === true) &&
    tier === p.tier &&
    mode === p.mode &&
    hashCanonical(action.args) === p.argsHash;
  return { decisionId, auditSeq: entry.seq, policyVersion: entry.policyVersion, policyText: text, action, recorded, replayed, matches, ...evidenceOf(state, deps), confirmations: confs };
}

/**
 * Spell out the session contexts in the lineage of `deps` and of the evidence their
 * corroborations cite: a record written in a session derives from every record of its session's
 * read log up to the length its entry holds — read from the store's log and used only when it
 * hashes to the entry's hash (otherwise the record counts as not matching its entry, as a forged
 * row does at the gate).
 */
async function spellOutContexts(driver: StorageDriver, tenant: string, state: LogState, deps: ReadonlyArray<{ memoryId: string }>): Promise<void> {
  if (state.contexts.size === 0) return;
  const todo = deps.map((d) => d.memoryId);
  for (const d of deps) for (const c of state.corroborations.get(d.memoryId) ?? []) todo.push(memoryRefId(c.evidenceRef) ?? '');
  const seen = new Set<string>();
  const logs = new Map<string, string[]>();
  while (todo.length > 0) {
    const id = todo.pop() as string;
    if (seen.has(id)) continue;
    seen.add(id);
    const r = state.records.get(id);
    if (r === undefined) continue;
    const ref = state.contexts.get(id);
    if (ref !== undefined) {
      let log = logs.get(ref.sessionId);
      if (log === undefined || log.length < ref.length) logs.set(ref.sessionId, (log = (await driver.sessionLogPrefixes(tenant, new Map([[ref.sessionId, ref.length]]))).get(ref.sessionId) ?? []));
      state.records.set(id, { ...r, derivedFrom: withSessionEdges(r.derivedFrom, ref, log), verified: r.verified && prefixMatches(log, ref.length, ref.hash) });
      state.contexts.delete(id);
    }
    for (const e of state.records.get(id)?.derivedFrom ?? []) todo.push(e.from);
  }
}

/** The chain of each of `ids` that holds more than one version in the log. */
const chainsOf = (state: LogState, ids: readonly string[]): Map<string, string> => new Map(ids.filter((id) => state.chainOf.has(id)).map((id) => [id, state.chainOf.get(id) as string]));

/** The state of each chain of `chains` at `at` (core/versions.ts), from the facts rebuilt from the log; a version that does not match its entry is no part of it. */
function chainStatesAt(state: LogState, chains: Iterable<string>, facts: (id: string) => DependencyFacts): Map<string, ChainState> {
  const out = new Map<string, ChainState>();
  for (const c of chains) {
    const versions = [c, ...(state.chains.get(c) ?? [])].map((id) => ({ id, seq: state.seqs.get(id) ?? 0, ...facts(id) })).filter((v) => v.verified);
    out.set(c, currentVersions(versions));
  }
  return out;
}

/** The confirmations a replayed decision may use: the cited one, or the unexpired ones for its exact arguments. */
function confirmationsAt(state: LogState, cited: string | null, actionType: string, argsHash: string, at: string): Confirmation[] {
  if (cited !== null) return [state.confirmations.get(cited)].filter((c): c is Confirmation => c !== undefined);
  return (state.confirmationsByArgs.get(argsKey(actionType, argsHash)) ?? []).filter((c) => c.expiresAt > at);
}

/** The requester as the log knows it (decisions recorded before requesters were: the application). */
function requesterOf(state: LogState, recorded: unknown): Requester {
  if (typeof recorded !== 'string') return null;
  return { id: recorded, kind: state.kinds.get(recorded) ?? 'external' };
}

/** What a replay shows of a decision's dependencies: their facts, lineage, origins and corroborations, from the log. */
function evidenceOf(state: LogState, deps: readonly DependencyFacts[]): Pick<ReplayResult, 'dependencies' | 'lineage' | 'origins' | 'corroborations'> {
  const { lineage, origins } = lineageOf(
    state,
    deps.map((d) => d.memoryId),
  );
  const dependencies = deps.map((d) => ({
    memoryId: d.memoryId,
    why: d.why,
    lowestAuthority: d.lowestAuthority,
    actionAuthority: d.actionAuthority,
    status: d.status,
    known: state.records.has(d.memoryId),
  }));
  return { dependencies, lineage, origins, corroborations: deps.flatMap((d) => state.corroborations.get(d.memoryId) ?? []) };
}

/**
 * The policy a decision was made under, from the log (or the store's policy texts).
 * @throws `POLICY_NOT_FOUND` when its text is missing or does not hash to its version.
 */
async function policyOf(driver: StorageDriver, state: LogState, entry: AuditEntry, decisionId: string): Promise<{ text: string; policy: Policy }> {
  const text = state.policies.get(entry.policyVersion) ?? (await driver.getPolicyText(entry.policyVersion));
  if (text === null || text === undefined)
    throw new MemauthError('POLICY_NOT_FOUND', `policy ${entry.policyVersion} of decision ${decisionId} is not in the log`, { policyVersion: entry.policyVersion });
  const policy: Policy = loadPolicy(JSON.parse(text));
  if (policy.version !== entry.policyVersion) throw new MemauthError('POLICY_NOT_FOUND', `policy text in the log does not hash to ${entry.policyVersion}`, { policyVersion: entry.policyVersion });
  return { text, policy };
}

/** The derivation edges from `ids` down to their roots, and the origins of every record reached, as the log knows them. */
function lineageOf(
  state: LogState,
  ids: readonly string[],
): { lineage: Array<{ from: string; to: string; transform: string; kind: string }>; origins: Record<string, { principalId: string; authority: string; sourceRef: string }> } {
  const lineage: Array<{ from: string; to: string; transform: string; kind: string }> = [];
  const seen = new Set<string>();
  const stack = [...ids];
  while (stack.length) {
    const id = stack.pop() as string;
    if (seen.has(id)) continue;
    seen.add(id);
    for (const e of state.records.get(id)?.derivedFrom ?? []) {
      lineage.push({ from: e.from, to: id, transform: e.transform, kind: e.kind });
      stack.push(e.from);
    }
  }
  const origins: Record<string, { principalId: string; authority: string; sourceRef: string }> = {};
  for (const id of seen) {
    const o = state.origins.get(id);
    if (o) origins[id] = o;
  }
  return { lineage, origins };
}
