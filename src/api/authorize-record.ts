/**
 * Recording a decision of the action gate (docs/design.md § Action gate, § Audit log): the `decide`
 * audit entry, the decision row, the confirmation use, and the session claimed on first use — or,
 * for the dry run, the evaluation that records nothing. Part of `authorize` (api/authorize.ts).
 * Imports from src/core, src/store's port, and api/ modules below the facade.
 */
import { contentHashOf, newContentKey } from '../core/content-hash.js';
import type { GateResult } from '../core/gate.js';
import { unlistedActionNotice } from '../core/policy.js';
import type { Action, Decision, Dependency, IntentProvenance, Mode, Tier } from '../core/types.js';
import type { StorageTx } from '../store/driver.js';
import type { Dependencies } from './authorize-values.js';
import { type OpContext, type Parsed, appendAudit, newId } from './context.js';
import { type StoreOptions, runBeforeRecord } from './options.js';
import type { Evaluation } from './requesters.js';
import { joinSession } from './sessions.js';

/** One gate call once decided: its validated input, what was derived from it, and the gate's result. */
export interface Decided {
  readonly a: Parsed<'authorize'>;
  readonly action: Action;
  readonly argsHash: string;
  readonly tier: Tier;
  readonly mode: Mode;
  readonly contextMode: 'session' | 'declared';
  readonly deps: Dependencies;
  readonly result: GateResult;
  readonly now: string;
  /** the intent facts of a `high` decision (api/authorize-intent.ts). */
  readonly intent: IntentProvenance | undefined;
}

/** The intent fields of a decision and its audit entry: `intent` on `high`, `contextWaived` when the gate waived the context (both absent otherwise, as on older entries). */
function intentFields(d: Decided): { intent?: IntentProvenance; contextWaived?: true } {
  return { ...(d.intent !== undefined ? { intent: d.intent } : {}), ...(d.result.contextWaived ? { contextWaived: true as const } : {}) };
}

/** The dependencies as a decision row lists them (no `verified`, no `corroborationAttempted`). */
function dependencyRows(d: Decided): Dependency[] {
  return d.deps.facts.map((x) => ({ memoryId: x.memoryId, why: x.why, lowestAuthority: x.lowestAuthority, actionAuthority: x.actionAuthority, status: x.status }));
}

/** The dry run's result: the decision the gate would make, with nothing recorded (see {@link Evaluation}). */
export function evaluation(ctx: Pick<OpContext, 'policy'>, d: Decided): Evaluation {
  const { a, action, argsHash, tier, mode, now } = d;
  const { outcome, reasons, confirmationId } = d.result;
  const text = unlistedActionNotice(ctx.policy, action.type);
  const notice = text !== undefined ? { notice: text } : {};
  return {
    dryRun: true,
    tenant: a.tenant,
    sessionId: a.session ?? null,
    requester: a.requester ?? null,
    at: now,
    action,
    argsHash,
    tier,
    mode,
    outcome,
    reasons,
    dependencies: dependencyRows(d),
    values: d.deps.values,
    ...intentFields(d),
    confirmationId,
    policyVersion: ctx.policy.version,
    ...notice,
  };
}

/** Options of a recorded decision ({@link Memory.authorize}'s second argument): `beforeRecord` sees {@link recordedBytes}. */
export type AuthorizeOptions = StoreOptions;

/**
 * What a recorded decision stores, in bytes: its JSON in the decision row and again in its audit
 * entry — twice the UTF-8 size of its JSON.
 * @param d - the decision (or the evaluation it is made from: the few fields they differ by are counted as 96 bytes).
 * @returns bytes (UTF-8).
 */
export const recordedBytes = (d: object): number => 2 * (Buffer.byteLength(JSON.stringify(d), 'utf8') + 96);

/**
 * Inside the decision's transaction: append the `decide` entry, claim the session when this is its
 * first use, insert the decision row and the confirmation use. `mark` reports the timing phases;
 * `options.beforeRecord` sees the bytes before any of them is written.
 * @returns the stored decision.
 */
export async function recordDecision(
  ctx: Pick<OpContext, 'policy' | 'clock'>,
  tx: StorageTx,
  d: Decided,
  sessionExists: boolean,
  mark: (phase: 'decided' | 'written') => void,
  options: AuthorizeOptions = {},
): Promise<Decision> {
  const { a, action, argsHash, tier, mode, result, now } = d;
  // the decision is what the dry run reports, with its id and the seq of the entry that recorded it
  const { dryRun: _dryRun, ...made } = evaluation(ctx, d);
  runBeforeRecord(options, () => recordedBytes(made));
  const id = newId('dec');
  // keyed like content hashes: a plain SHA-256 of a short turn ("Pay $1,200 to ACCT-1234") can be guessed
  const userTurnHash = a.userTurn !== undefined ? contentHashOf(a.userTurn.text, await tx.ensureTenantContentKey(a.tenant, newContentKey, now)) : null;
  const payload = {
    decisionId: id,
    sessionId: a.session ?? null,
    requester: a.requester ?? null,
    action,
    argsHash,
    tier,
    mode,
    contextMode: d.contextMode,
    userTurn: a.userTurn !== undefined ? { principal: a.userTurn.principal, textHash: userTurnHash } : null,
    dependencies: d.deps.facts.map((x) => ({ memoryId: x.memoryId, why: x.why })),
    values: d.deps.values,
    ...intentFields(d),
    citedConfirmationId: a.confirmationId ?? null,
    confirmationId: result.confirmationId,
    outcome: result.outcome,
    reasons: result.reasons,
    at: now,
  };
  mark('decided');
  // the first use of a session claims it for the requester
  if (a.session !== undefined && !sessionExists) await joinSession(tx, a.tenant, a.session, a.requester ?? null, now);
  const entry = await appendAudit(ctx, tx, a.tenant, 'decide', payload);
  const decision: Decision = { formatVersion: 1, id, ...made, auditSeq: entry.seq };
  await tx.insertDecision(decision);
  if (result.confirmationId !== null) await tx.insertConfirmationUse(a.tenant, result.confirmationId, id, now);
  mark('written');
  return decision;
}
