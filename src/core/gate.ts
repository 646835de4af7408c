/**
 * The reference monitor (docs/design.md § Action gate): `decide`, a pure function from what the store
 * recorded about an action's dependencies and values to an outcome and its reasons.
 */
import { type Authority, atLeast } from './authority.js';
import { type ConfirmationMismatch, type Requester, confirmationMismatch } from './confirmation.js';
import { decimalOfText, multiplyDecimals } from './decimal.js';
import { DEFAULT_SUPPLIERS } from './policy.js';
import { topArgument } from './provenance.js';
import { argumentShapeProblems } from './values.js';
import {
  REASON_CODES,
  type Action,
  type ArgumentType,
  type Confirmation,
  type DependencyWhy,
  type IntentProvenance,
  type Mode,
  type Outcome,
  type Reason,
  type ReasonCode,
  type RecordStatus,
  type Tier,
  type ValueProvenance,
} from './types.js';

/** What the gate knows of one dependency — only what the store recorded. */
export interface DependencyFacts {
  readonly memoryId: string;
  readonly why: readonly DependencyWhy[];
  readonly lowestAuthority: Authority;
  /** lowestAuthority, or lifted by k independent corroborations. */
  readonly actionAuthority: Authority;
  /** status at decision time (`expired` when `expiresAt <= now`). */
  readonly status: RecordStatus;
  /** true when at least one recorded corroboration counts (eligible and independent) but fewer than k; one that can never count is no attempt. */
  readonly corroborationAttempted: boolean;
  /** true when the record has a write/derive audit entry that matches it; false for rows inserted outside the API. */
  readonly verified: boolean;
}

export interface ConfirmationCandidate {
  readonly confirmation: Confirmation;
  readonly usesSoFar: number;
}

/**
 * Principal kinds that may request a `high` action: those that act for the user (the user, a
 * system principal, an agent) — never a tool channel or an external principal, which write
 * memory but are not asked by anyone to act (docs/design.md § Action gate, Rules). The
 * application (requester `null`) always may.
 */
export const HIGH_REQUESTER_KINDS: ReadonlySet<string> = new Set(['user', 'system', 'agent']);

/** Everything the reference monitor decides on. Plain data: the decision is a pure function of it. */
export interface GateInput {
  readonly action: Action;
  readonly argsHash: string;
  readonly tier: Tier;
  readonly mode: Mode;
  readonly now: string;
  readonly dependencies: readonly DependencyFacts[];
  readonly values: readonly ValueProvenance[];
  readonly confirmations: readonly ConfirmationCandidate[];
  readonly citedConfirmationId: string | null;
  /** who asks for the decision: a confirmation is used only by a requester it admits (absent: the application). */
  readonly requester?: Requester;
  /** top-level arguments the policy does not allow for this action type. */
  readonly disallowedArguments?: readonly string[];
  /** the policy's argument types for the action's type (`argumentTypes(policy, type)`): an `amount` argument must be a scalar. */
  readonly argumentTypes?: Readonly<Record<string, ArgumentType>>;
  /**
   * Version conflicts among the dependencies (core/versions.ts `versionConflicts`): each the
   * dependencies in one chain with competing current versions or replaced, and its current versions.
   */
  readonly conflicts?: readonly (readonly string[])[];
  /** minimum action authority for `high` (trusted_tool_verified). */
  readonly threshold: Authority;
  /** the policy's suppliers for the action's type (`argumentSuppliers(policy, type)`); an argument not named: `user_turn`, `text`. */
  readonly suppliers?: Readonly<Record<string, readonly string[]>>;
  /** where the action's intent came from (core/intent.ts; absent: nowhere). */
  readonly intent?: IntentProvenance;
}

export interface GateResult {
  readonly outcome: Outcome;
  readonly reasons: readonly Reason[];
  /** the confirmation this decision consumes, if it was allowed by one. */
  readonly confirmationId: string | null;
  /** true when the action's intent and every value had trusted provenance, so context dependencies did not count (docs/design.md § Claims and intent). */
  readonly contextWaived: boolean;
}

class ReasonSet {
  private readonly map = new Map<string, { code: ReasonCode; ids: Set<string>; argument?: string; detail?: string }>();
  add(code: ReasonCode, ids: Iterable<string>, extra: { argument?: string; detail?: string } = {}): void {
    const key = `${code}\u0000${extra.argument ?? ''}\u0000${extra.detail ?? ''}`;
    let r = this.map.get(key);
    if (!r) {
      r = { code, ids: new Set(), ...extra };
      this.map.set(key, r);
    }
    for (const id of ids) r.ids.add(id);
  }
  get size(): number {
    return this.map.size;
  }
  ids(): string[] {
    const s = new Set<string>();
    for (const r of this.map.values()) for (const id of r.ids) s.add(id);
    return [...s].sort();
  }
  list(): Reason[] {
    return [...this.map.values()]
      .map((r): Reason => {
        const out: { code: ReasonCode; memoryIds: string[]; argument?: string; detail?: string } = { code: r.code, memoryIds: [...r.ids].sort() };
        if (r.argument !== undefined) out.argument = r.argument;
        if (r.detail !== undefined) out.detail = r.detail;
        return out;
      })
      .sort((a, b) => REASON_CODES.indexOf(a.code) - REASON_CODES.indexOf(b.code) || (a.argument ?? '').localeCompare(b.argument ?? '') || (a.detail ?? '').localeCompare(b.detail ?? ''));
  }
}

/**
 * An amount the user's turn supplies as quantity × unit price (both marked as such in the turn,
 * src/core/values.ts `findProduct`), checked here in exact decimal arithmetic: the operands must
 * be the user's turn's and their product the amount's canonical decimal, exactly.
 */
function productOfUserNumbers(v: ValueProvenance): boolean {
  const c = v.computed;
  if (!c || c.op !== '*' || !c.operands.every((o) => o.userTurn)) return false;
  const [a, b] = c.operands.map((o) => decimalOfText(o.value));
  const target = v.amount ?? decimalOfText(v.value);
  return a != null && b != null && target !== null && multiplyDecimals(a, b) === target;
}

/**
 * The action gate — memauth's reference monitor (docs/design.md § Action gate). Pure and total.
 *
 * All tiers: a declared or value dependency that is deleted (`deleted_source`) or expired
 * (`expired`), or any dependency with no matching audit entry (`metadata_missing`), denies; so
 * does an argument the policy does not allow, one named `{resource}`, and an `amount` argument
 * that is an array or object, and a destination a claim may supply that is an object
 * (`metadata_missing`, details `argument_not_allowed`, `amount_not_scalar`,
 * `destination_not_scalar`; src/core/values.ts `argumentShapeProblems`).
 * `high` additionally: a requester of kind `tool` or `external` is refused outright
 * (`untrusted_requester`, detail the kind; never lifted by a confirmation — see
 * {@link HIGH_REQUESTER_KINDS}); every dependency must have action authority >= `threshold`
 * (`untrusted_origin`, or `missing_corroboration` when corroboration was tried but too weak),
 * and every argument value must be supplied by a source of that authority (the user's current
 * turn counts as `user_confirmed`; the action's `resource` is the value `{resource}`) — or, for
 * an amount, the exact decimal product of a quantity and a unit price the user's turn marks as
 * such ("50 units at $10 each"; src/core/values.ts `findProduct`); a value supplied only by lower
 * sources is `untrusted_origin`, one supplied by nothing `metadata_missing` (detail `value_unsourced`);
 * a dependency whose record has competing current versions, or is a version no longer current,
 * is `conflict` (`conflicts`, naming the dependency and the chain's current versions). Authority failures and conflicts (not hard
 * ones) are lifted by exactly one matching, unexpired, unused scoped confirmation that admits the
 * requester (core/confirmation.ts); otherwise
 * `needs_confirmation` names what it would have to cover. In `observe` mode a denial is
 * reported as `would_deny` and the action proceeds.
 */
export function decide(input: GateInput): GateResult {
  const hard = new ReasonSet();
  const soft = new ReasonSet();
  const trustedIds = new Set<string>();
  const weak: DependencyFacts[] = [];
  const requester = input.requester ?? null;
  if (input.tier === 'high' && requester !== null && !HIGH_REQUESTER_KINDS.has(requester.kind)) hard.add('untrusted_requester', [], { detail: requester.kind });
  for (const arg of input.disallowedArguments ?? []) hard.add('metadata_missing', [], { argument: arg, detail: 'argument_not_allowed' });
  for (const p of argumentShapeProblems(input.action.args, input.argumentTypes ?? {}, input.suppliers ?? {})) hard.add('metadata_missing', [], p);
  for (const d of input.dependencies) {
    const direct = d.why.includes('declared') || d.why.includes('value');
    if (!d.verified) hard.add('metadata_missing', [d.memoryId]);
    else if (d.status === 'deleted' && direct) hard.add('deleted_source', [d.memoryId]);
    else if (d.status === 'expired' && direct) hard.add('expired', [d.memoryId]);
    else if (atLeast(d.actionAuthority, input.threshold)) trustedIds.add(d.memoryId);
    else weak.push(d);
  }
  let contextWaived = false;
  if (input.tier === 'high') {
    // the application's planner, or a user who asked a question, leaves the choice among trusted claims to the agent
    const naming = !(input.intent?.sources ?? []).some((s) => s.source === 'application' || s.form === 'question');
    const turnFirst = input.intent?.turnRecord !== undefined;
    const supply = input.values.map((v) => valueSupply(v, input.suppliers?.[topArgument(v.argument)] ?? DEFAULT_SUPPLIERS, trustedIds, naming, turnFirst));
    contextWaived = input.intent?.repeatOf === undefined && input.intent?.sessionless !== true && intentTrusted(input.intent, trustedIds) && supply.every((x) => x.strong);
    // with trusted intent and values, a dependency below the threshold supplied nothing the action carries: it does not count
    // (declared or read alike — the agent's own note of the user's request is as harmless as the page it read)
    if (!contextWaived) for (const d of weak) soft.add(d.corroborationAttempted ? 'missing_corroboration' : 'untrusted_origin', [d.memoryId]);
    input.values.forEach((v, i) => {
      const x = supply[i] as Supply;
      if (x.strong || x.weak) return;
      if (x.suppliers.length > 0) soft.add('untrusted_origin', x.suppliers, { argument: v.argument });
      else if (v.recordIds.length > 0) soft.add('metadata_missing', v.recordIds, { argument: v.argument, detail: 'value_not_asserted' });
      else soft.add('metadata_missing', [], { argument: v.argument, detail: 'value_unsourced' });
    });
    for (const ids of input.conflicts ?? []) soft.add('conflict', ids);
  }

  let confirmationId: string | null = null;
  if (hard.size === 0 && soft.size > 0) {
    const untrusted = soft.ids();
    const found = usableConfirmation(input, untrusted);
    confirmationId = found.id;
    if (confirmationId === null) soft.add('needs_confirmation', untrusted, { detail: found.mismatch });
  } else if (hard.size === 0 && contextWaived) {
    // the user's approval of exactly this action is used by it, so it cannot allow a repeat
    confirmationId = usableConfirmation(input, []).id;
  }

  const reasons = confirmationId !== null ? hard.list() : [...hard.list(), ...soft.list()];
  const sorted = reasons.sort((a, b) => REASON_CODES.indexOf(a.code) - REASON_CODES.indexOf(b.code) || (a.argument ?? '').localeCompare(b.argument ?? ''));
  const denied = sorted.length > 0;
  const outcome: Outcome = !denied ? 'allow' : input.mode === 'observe' ? 'would_deny' : 'deny';
  return { outcome, reasons: sorted, confirmationId: denied ? null : confirmationId, contextWaived };
}

/**
 * The confirmation that allows the action with these untrusted records (the one cited, else the
 * oldest that matches), or null with why none does (docs/design.md § Human confirmation).
 */
function usableConfirmation(input: GateInput, untrusted: readonly string[]): { id: string | null; mismatch: ConfirmationMismatch } {
  const check = (c: ConfirmationCandidate): ConfirmationMismatch | null =>
    confirmationMismatch({
      confirmation: c.confirmation,
      usesSoFar: c.usesSoFar,
      action: input.action,
      argsHash: input.argsHash,
      untrustedMemoryIds: untrusted,
      dependencyIds: input.dependencies.map((d) => d.memoryId),
      requester: input.requester ?? null,
      now: input.now,
    });
  if (input.citedConfirmationId !== null) {
    const cited = input.confirmations.find((c) => c.confirmation.id === input.citedConfirmationId);
    const m = cited ? check(cited) : 'confirmation_not_found';
    return cited && m === null ? { id: cited.confirmation.id, mismatch: 'confirmation_not_found' } : { id: null, mismatch: m ?? 'confirmation_not_found' };
  }
  const ordered = [...input.confirmations].sort((a, b) => a.confirmation.createdAt.localeCompare(b.confirmation.createdAt) || a.confirmation.id.localeCompare(b.confirmation.id));
  const hit = ordered.find((c) => check(c) === null);
  return { id: hit?.confirmation.id ?? null, mismatch: 'confirmation_not_found' };
}

/** How one value is supplied: `strong` by the user's turn or a trusted claim, `weak` by a trusted text; `suppliers` every record the policy lets supply it. */
interface Supply {
  readonly strong: boolean;
  readonly weak: boolean;
  readonly suppliers: string[];
}

/**
 * The supply of one value under its argument's `allowed` suppliers (docs/design.md § Claims and
 * intent): `user_turn` — the turn contains it, or (an amount) it is the product the turn marks —
 * strong when the plain turn asserts it and it is an amount, an argument no claim may supply, or a
 * destination while `turnFirst` (the intent's `turnRecord`);
 * `claim:<field>` — a record with action authority >= the threshold claims it in that field;
 * `text` — such a record's text contains it.
 */
function valueSupply(v: ValueProvenance, allowed: readonly string[], trustedIds: ReadonlySet<string>, naming: boolean, turnFirst: boolean): Supply {
  const product = productOfUserNumbers(v);
  const turn = allowed.includes('user_turn') && (v.userTurn || product);
  // a value a plain turn itself asserts may waive the context — an amount, or an identifier of an argument no claim
  // may supply (a service, an environment); a product of its numbers (50 units at 10 each) supplies, but weakly, and
  // so does a destination the policy has a system of record for (a payee, recipient or grantee: `claim:<field>`),
  // unless the turn was recorded in the session before it read anything weak (`turnFirst`, the intent's `turnRecord`:
  // the user cannot have copied it from this session's pages; api/authorize-intent.ts `recordedTurn`)
  const isAmount = v.amount !== undefined && v.amount !== null;
  const asserted = turn && v.userTurnAsserted === true && (isAmount || turnFirst || !allowed.some((s) => s.startsWith('claim:')));
  const listed = (v.claims ?? []).filter((c) => allowed.includes(`claim:${c.field}`));
  const claims = listed.flatMap((c) => c.recordIds);
  // unless the application asserted the intent, a claim waives only for the one party the user's plain request
  // names: "pay the Acme invoice" is no request to pay Globex, though the vendor master claims Globex's account too
  const waiving = naming ? listed.flatMap((c) => c.named ?? []) : claims;
  const text = allowed.includes('text') ? v.recordIds : [];
  return {
    strong: asserted || waiving.some((id) => trustedIds.has(id)),
    weak: (turn && !asserted) || text.some((id) => trustedIds.has(id)),
    suppliers: [...new Set([...claims, ...text])],
  };
}

/**
 * Is the action's intent trusted? The user's turn requested it, the application passed it (the
 * caller checked the requester), or a standing instruction's record has action authority >= the
 * threshold.
 */
export function intentTrusted(intent: IntentProvenance | undefined, trustedIds: ReadonlySet<string>): boolean {
  return (intent?.sources ?? []).some((s) => s.source !== 'standing_instruction' || (s.recordIds ?? []).some((id) => trustedIds.has(id)));
}
