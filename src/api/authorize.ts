/**
 * The action gate's operation (docs/design.md § Action gate): `authorize` decides, records and
 * audits one proposed action; `evaluate` is its dry run. In one transaction: check the user's
 * turn and the requester, load the candidates (authorize-candidates.ts) and their facts
 * (provenance.ts), trace the argument values (authorize-values.ts), let core/gate.ts `decide`, and
 * record the decision (authorize-record.ts). `Memory` in memory.ts holds the documentation.
 * Imports from src/core, src/store's port, and api/ modules below the facade.
 */
import { TRUSTED_THRESHOLD } from '../core/authority.js';
import { argsHashOf } from '../core/confirmation.js';
import { MemauthError } from '../core/errors.js';
import { type DependencyFacts, decide } from '../core/gate.js';
import { argumentSuppliers, argumentTypes, disallowedArguments, modeFor, riskTier } from '../core/policy.js';
import type { TurnReading } from '../core/request-grammar.js';
import type { Action, Decision, IntentProvenance, MemoryRecord, Tier } from '../core/types.js';
import type { StorageTx } from '../store/driver.js';
import { type Candidates, confirmationCandidates, loadCandidates } from './authorize-candidates.js';
import { auditEntriesAt } from './audit-entries.js';
import { destinationArguments, intentOf, recordedTurn, trustedNow, turnReading, turnRecordCandidates } from './authorize-intent.js';
import { type AuthorizeOptions, type Decided, evaluation, recordDecision } from './authorize-record.js';
import { boundedReferences, dependencies, destinationHolders } from './authorize-values.js';
import { type In, type OpContext, nowOf, startTiming, transact } from './context.js';
import { principalIn, refusing } from './refusals.js';
import { type Evaluation, resolveRequester } from './requesters.js';
import { checkSession } from './sessions.js';
import { gateConflicts } from './versions.js';
import { yielder } from './yielder.js';
import { parseAuthorize } from './validation.js';

/** {@link Memory.authorize} (`dryRun` false) and {@link Memory.evaluate} (`dryRun` true). */
export function gate(ctx: OpContext, input: In<'authorize'>, dryRun: true): Promise<Evaluation>;
export function gate(ctx: OpContext, input: In<'authorize'>, dryRun: false, options?: AuthorizeOptions): Promise<Decision>;
export async function gate(ctx: OpContext, input: In<'authorize'>, dryRun: boolean, options?: AuthorizeOptions): Promise<Decision | Evaluation> {
  const t0 = startTiming(ctx);
  const a = parseAuthorize(input);
  const action: Action = a.action.resource !== undefined ? { type: a.action.type, args: a.action.args, resource: a.action.resource } : { type: a.action.type, args: a.action.args };
  const tier = riskTier(ctx.policy, action);
  const mode = modeFor(ctx.policy, tier);
  const contextMode = a.context ?? 'session';
  const argsHash = argsHashOf(action.args);
  return refusing(ctx, a.tenant, dryRun ? null : 'decide', () =>
    transact(ctx, a.tenant, 'authorize', t0, async (tx, mark): Promise<Decision | Evaluation> => {
      if (a.userTurn !== undefined) await checkUserTurn(ctx, tx, a.tenant, a.userTurn.principal);
      const now = nowOf(ctx);
      const requester = await resolveRequester(tx, a.tenant, a.requester);
      // only read here: a write this early would keep this transaction's reads out of the read cache
      const sessionExists = a.session !== undefined && (await checkSession(tx, a.tenant, a.session, a.requester ?? null));
      const candidates = await loadCandidates(tx, a.tenant, a.dependsOn, a.session, contextMode);
      const { k, minAuthority: floor } = ctx.policy.document.corroboration;
      const verdicts = ctx.provenance.dependencyVerdicts(tx, a.tenant, candidates.list, k, floor, now);
      const factsOf = verdicts instanceof Map ? verdicts : await verdicts;
      await prepareTexts(ctx, candidates.list);
      const turn = a.userTurn !== undefined ? turnReading(ctx.policy, action, a.userTurn.text, candidates.list, factsOf, now) : undefined;
      const deps = dependencies(ctx, action, candidates, factsOf, a.userTurn?.text, turn, now);
      boundedReferences(deps.values);
      const depIds = new Set(deps.facts.map((f) => f.memoryId));
      const depRecords = candidates.list.filter((r) => depIds.has(r.id));
      const conflicts = await gateConflicts(ctx, tx, a.tenant, depRecords, now);
      const found = await intentFacts(ctx, tx, a, action, tier, depRecords, turn, now);
      // a destination the turn writes waives only when the turn was recorded before the session read anything weak
      const turnRecord = found !== undefined && found.sources.length > 0 ? await turnRecordOf(ctx, tx, a, action, candidates, factsOf, now) : undefined;
      const intent = found !== undefined && turnRecord !== undefined ? { ...found, turnRecord } : found;
      const confirmations = await confirmationCandidates(ctx, tx, a.tenant, action.type, argsHash, a.confirmationId ?? null, now);
      const result = decide({
        action,
        argsHash,
        tier,
        mode,
        now,
        dependencies: deps.facts,
        values: deps.values,
        disallowedArguments: disallowedArguments(ctx.policy, action),
        argumentTypes: argumentTypes(ctx.policy, action.type),
        confirmations,
        citedConfirmationId: a.confirmationId ?? null,
        requester,
        conflicts,
        threshold: TRUSTED_THRESHOLD,
        suppliers: argumentSuppliers(ctx.policy, action.type),
        ...(intent !== undefined ? { intent } : {}),
      });
      const decided: Decided = { a, action, argsHash, tier, mode, contextMode, deps, result, now, intent };
      if (dryRun) return evaluation(ctx, decided);
      return recordDecision(ctx, tx, decided, sessionExists, mark, options);
    }),
  );
}

/**
 * Prepare the candidates' texts for value matching (memoised per record) before the gate's
 * synchronous tracing, yielding to the event loop between records: a session that read megabytes
 * of fresh text would otherwise hold every other request of every tenant until it is tokenized.
 */
async function prepareTexts(ctx: OpContext, records: readonly MemoryRecord[]): Promise<void> {
  const pause = yielder();
  for (const r of records) {
    ctx.provenance.matchText(r);
    await pause();
  }
}

/**
 * The intent facts of a decision (api/authorize-intent.ts `intentOf`), once per action type and
 * session, and one waiver per session: when the session already holds an allowed decision of this
 * action type, or any decision allowed with its context waived, they name it
 * (`repeatOf`) and the gate grants no waiver — a duplicate payment a page talked the model into
 * needs a confirmation (docs/design.md § Claims and intent). Recorded in the decision, so replay
 * reproduces it from the log.
 */
async function intentFacts(
  ctx: OpContext,
  tx: StorageTx,
  a: ReturnType<typeof parseAuthorize>,
  action: Action,
  tier: Tier,
  dependencies: MemoryRecord[],
  turn: TurnReading | undefined,
  now: string,
): Promise<IntentProvenance | undefined> {
  const requester = a.requester;
  const intent = await intentOf(tx, { policy: ctx.policy, tenant: a.tenant, action, tier, turn, asserted: a.intent, requester, dependencies, now });
  if (intent === undefined || intent.sources.length === 0) return intent;
  // once per session needs a session: a decision without one is never waived (it could be asked again and again)
  if (a.session === undefined) return { ...intent, sessionless: true };
  // by action type, not by arguments: "1200" and 1200, a memo or a flag more, would each be another action; and one
  // waiver per session: a turn whose words request two types ("pay … and order …") buys one action
  const earlier = await tx.allowedInSession(a.tenant, a.session, action.type);
  return earlier === null ? intent : { ...intent, repeatOf: earlier.id };
}

/** {@link recordedTurn} for this decision, reading the write audit entries of the records that could be the turn. */
async function turnRecordOf(
  ctx: OpContext,
  tx: StorageTx,
  a: ReturnType<typeof parseAuthorize>,
  action: Action,
  candidates: Candidates,
  factsOf: ReadonlyMap<string, DependencyFacts>,
  now: string,
): Promise<string | undefined> {
  if (a.userTurn === undefined || a.session === undefined) return undefined;
  const own = turnRecordCandidates(a.userTurn, candidates.list, now);
  if (own.length === 0) return undefined;
  const entries = await auditEntriesAt(tx, a.tenant, own, (r) => r.audit.seq);
  const writtenIn = new Map(own.map((r) => [r.id, (entries.get(r.audit.seq)?.payload.sessionId as string | null | undefined) ?? null]));
  const weak = candidates.list.filter((r) => !trustedNow(factsOf, r.id));
  const holders = destinationHolders(ctx.provenance, weak, destinationArguments(ctx.policy, action));
  const agents = new Set<string>();
  for (const id of new Set(weak.filter((r) => holders.has(r.id)).map((r) => r.origin.principalId))) if ((await tx.getPrincipal(a.tenant, id))?.kind === 'agent') agents.add(id);
  return recordedTurn({ turn: a.userTurn, session: a.session, readOrder: candidates.readOrder, candidates: candidates.list, factsOf, writtenIn, holders, agents, now });
}

/**
 * The user's turn must be by a registered user principal.
 * @throws a refusal `UNKNOWN_PRINCIPAL` (logged), `INVALID_ARGUMENT` for a principal of another kind.
 */
async function checkUserTurn(ctx: OpContext, tx: StorageTx, tenant: string, principal: string): Promise<void> {
  const u = await principalIn(ctx, tx, tenant, principal);
  if (u.kind !== 'user') throw new MemauthError('INVALID_ARGUMENT', `authorize: userTurn.principal ${u.id} is of kind ${u.kind}, not a user`, { field: 'userTurn.principal' });
}
