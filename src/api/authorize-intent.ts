/**
 * Intent provenance for the action gate (docs/design.md § Claims and intent): where a `high`
 * action's intent came from — the user's turn (a policy intent phrase, not negated), a standing
 * instruction among the decision's dependencies (a claim of field `intent`), or the application
 * (`authorize(…, { intent })`, honoured only for a requester whose own authority is at least
 * `trusted_tool_verified`: the application itself, a user, a system or a tool principal — never
 * an agent or an external token). Part of `authorize` (api/authorize.ts). Imports from src/core
 * and src/store's port.
 */
import { TRUSTED_THRESHOLD, atLeast } from '../core/authority.js';
import type { DependencyFacts } from '../core/gate.js';
import { echoKey } from '../core/echo.js';
import { standingInstructions } from '../core/intent.js';
import { type Policy, argumentSuppliers, argumentTypes, intentForm, intentPhrases } from '../core/policy.js';
import { topArgument } from '../core/provenance.js';
import { normalizeText } from '../core/match.js';
import { readQuestion } from '../core/question-grammar.js';
import { CURRENCY_OF, OBJECTS, type ObjectCategory, type TurnReading, groundingOf, readRequest } from '../core/request-grammar.js';
import type { Action, IntentProvenance, IntentSource, MemoryRecord, Tier } from '../core/types.js';
import { type ArgumentValue, RESOURCE_ARGUMENT, actionValues } from '../core/values.js';
import type { StorageReader } from '../store/driver.js';

/** Is a candidate trusted now: its facts verified and its action authority at least the threshold? */
export function trustedNow(factsOf: ReadonlyMap<string, DependencyFacts>, id: string): boolean {
  const f = factsOf.get(id);
  return f !== undefined && f.verified && atLeast(f.actionAuthority, TRUSTED_THRESHOLD);
}

/**
 * How the gate reads the user's turn for this action (src/core/request-grammar.ts `readRequest`):
 * against the words of the action's destinations (values of arguments the policy lets a claim
 * supply — never a memo, or a resource only the turn supplies: the agent chooses those, and could
 * copy the turn's "on the 30th" into one), its amounts and currencies, and the names grounded by
 * the content and claims of the candidates that are trusted now — verified, current, with action
 * authority >= the threshold — so a plain request may name "Halvorsen Freight" or "the Harbor
 * Street office" when a system of record does. Each record's names are memoised per record object.
 *
 * @returns the reading; computed once per decision and used for intent and for asserted values.
 */
export function turnReading(policy: Policy, action: Action, turn: string, candidates: readonly MemoryRecord[], factsOf: ReadonlyMap<string, DependencyFacts>, now: string): TurnReading {
  if (intentForm(policy, action.type) === 'question') return readQuestion(turn, intentPhrases(policy, action.type));
  const types = argumentTypes(policy, action.type);
  const suppliers = argumentSuppliers(policy, action.type);
  const values = actionValues(action, types);
  const claimed = values.filter((v) => v.amount === null && v.type !== 'amount' && (suppliers[topArgument(v.argument)] ?? []).some((x) => x.startsWith('claim:')));
  const amounts = values.filter((v) => v.type === 'amount');
  const grounding = new Set<string>();
  const own = echoKey(turn);
  for (const r of candidates) {
    if (r.content === null || r.status !== 'active' || (r.expiresAt !== null && r.expiresAt <= now) || !trustedNow(factsOf, r.id)) continue;
    // the turn recorded in the session grounds nothing of itself: its capitalised words would all be "names"
    if (echoKey(r.content) === own) continue;
    for (const w of namesOf(r)) grounding.add(w);
  }
  const movesMoney = Object.values(types).includes('amount');
  return readRequest(turn, {
    phrases: intentPhrases(policy, action.type),
    actionWords: groundingOf(claimed.map((v) => v.value)),
    amounts: new Set(amounts.flatMap((v) => (v.amount !== null ? [v.amount] : []))),
    movesMoney,
    category: objectCategory(movesMoney, suppliers),
    currencies: actionCurrencies([...amounts, ...values.filter((v) => topArgument(v.argument) === 'currency')].map((v) => v.value)),
    grounding,
    // the whole value of its place (a grant's `resource`, the action's resource) when it is one word, only right before a place noun of its kind
    placeWords: new Set(
      values.filter((v) => (v.argument === RESOURCE_ARGUMENT || v.argument === 'resource') && /^[\p{L}\p{N}][\p{L}\p{N}_.-]*$/u.test(v.value.trim())).map((v) => normalizeText(v.value)),
    ),
  });
}

/** What {@link recordedTurn} judges from. */
export interface TurnRecordInput {
  /** the decision's `userTurn`: the user principal and the text. */
  readonly turn: { readonly principal: string; readonly text: string };
  /** the decision's session. */
  readonly session: string;
  /** the ids of the session's read log, in order. */
  readonly readOrder: readonly string[];
  /** the decision's candidates: the records of `dependsOn` and of the session's log. */
  readonly candidates: readonly MemoryRecord[];
  /** the candidates' gate facts (verified, action authority), by record id. */
  readonly factsOf: ReadonlyMap<string, DependencyFacts>;
  /** by record id, the session its write audit entry names (for the records {@link turnRecordCandidates} gives). */
  readonly writtenIn: ReadonlyMap<string, string | null>;
  /** the candidates below the threshold that hold, or might hold, one of the action's destinations (`destinationHolders`). */
  readonly holders: ReadonlySet<string>;
  /** the ids of the principals of kind `agent` among the candidates' writers. */
  readonly agents: ReadonlySet<string>;
  /** the decision's time (ISO 8601): a record expired by then is not the turn. */
  readonly now: string;
}

/**
 * The candidates that could be the turn as a record: live (active, unexpired at `now`), written by
 * the turn's user, with the turn's text (equal after `echoKey`: NFC, line ends, trailing blanks).
 *
 * @param turn - the decision's `userTurn`.
 * @param candidates - the decision's candidates.
 * @param now - the decision's time (ISO 8601).
 * @returns those records, in the candidates' order (possibly none).
 */
export function turnRecordCandidates(turn: { readonly principal: string; readonly text: string }, candidates: readonly MemoryRecord[], now: string): MemoryRecord[] {
  const key = echoKey(turn.text);
  return candidates.filter((r) => r.content !== null && r.status === 'active' && (r.expiresAt === null || r.expiresAt > now) && r.origin.principalId === turn.principal && echoKey(r.content) === key);
}

/**
 * The user's turn as a record written in the decision's session before anything below the
 * threshold was read or written in it (docs/design.md § Claims and intent, "A destination the user
 * writes"): the first record of the session's log among {@link turnRecordCandidates} whose write
 * audit entry names this session (a record of another session, read here, or the old record an
 * exact repeat of a turn resolves to, says nothing of when the user typed this turn) and that is
 * trusted now (matches that entry, action authority at least the threshold); every record before
 * it in the log is present and trusted now (a page read before it, deleted or purged since, keeps
 * the waiver away); every candidate of the decision that is not trusted now (read in the session or
 * declared) is in the log after it; and none of them holds one of the action's destinations
 * (`holders`, api/authorize-values.ts `destinationHolders`) unless it is the agent's own note
 * written after the turn whose declared or echoed inputs are all trusted now — a best-effort net
 * for a user who pastes the account a page gave them elsewhere, spelled as the page spells it. A
 * value the user typed before the session read any page cannot have been copied from this
 * session's pages.
 *
 * @returns the turn record's id, or undefined when any condition fails.
 */
export function recordedTurn(x: TurnRecordInput): string | undefined {
  const own = new Set(turnRecordCandidates(x.turn, x.candidates, x.now).map((r) => r.id));
  const at = x.readOrder.findIndex((id) => own.has(id) && x.writtenIn.get(id) === x.session && trustedNow(x.factsOf, id));
  const record = x.candidates.find((r) => r.id === x.readOrder[at]);
  if (record === undefined || !x.readOrder.slice(0, at).every((id) => trustedNow(x.factsOf, id))) return undefined;
  const position = new Map(x.readOrder.map((id, i) => [id, i]));
  const weak = x.candidates.filter((r) => !trustedNow(x.factsOf, r.id));
  if (weak.some((r) => (position.get(r.id) ?? -1) <= at)) return undefined;
  // the agent's own words after the turn (declared or echoed inputs only trusted ones, such as the turn) may restate
  // it; any other weak holder — a page, a new version of one, a reminder, a summary of one — may be where the user
  // copied it from
  const ownNote = (r: MemoryRecord): boolean =>
    x.agents.has(r.origin.principalId) && r.derivedFrom.every((e) => trustedNow(x.factsOf, e.from)) && r.createdAt > record.createdAt && (position.get(r.id) ?? -1) > at;
  return x.candidates.some((r) => x.holders.has(r.id) && !ownNote(r)) ? undefined : record.id;
}

/** The currencies the action carries: the codes and signs of its amounts (`£1200`) and of its `currency` argument, as `CURRENCY_OF` reads them. */
function actionCurrencies(texts: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const t of texts) {
    for (const sign of t.match(/[$€£¥]/gu) ?? []) out.add(CURRENCY_OF.get(sign) as string);
    for (const w of groundingOf([t])) if (CURRENCY_OF.get(w) === w) out.add(w);
  }
  return out;
}

/**
 * How an action type's party slots are read (src/core/party-slots.ts `partySlots`): the nouns of
 * places of its own kind — for a grant ("to the docs repository") or a deployment ("to
 * production"); none for one that moves money or sends data (its destination is always a party: a
 * folder *is* the destination); whether it moves money; and whether `with` and `for` give its
 * recipient (data and grants: "share the report with Finance", "access for Priya").
 */
export function slotReading(policy: Policy, actionType: string): { places: ReadonlySet<string>; movesMoney: boolean; recipients: boolean } {
  const movesMoney = Object.values(argumentTypes(policy, actionType)).includes('amount');
  const category = objectCategory(movesMoney, argumentSuppliers(policy, actionType));
  return { places: category === 'access' || category === 'deploy' ? OBJECTS[category] : new Set(), movesMoney, recipients: category === 'access' || category === 'data' };
}

/**
 * What kind of object an action type acts on, from its policy: money when it takes an `amount`;
 * access when a `username` or `role` claim supplies it; a deployment when an `image` or
 * `deploy_target` claim does; data when an `email_address` or `export_destination` claim does;
 * else not known (src/core/request-grammar.ts `OBJECTS`).
 */
function objectCategory(movesMoney: boolean, suppliers: Readonly<Record<string, readonly string[]>>): ObjectCategory | null {
  if (movesMoney) return 'money';
  const fields = new Set(Object.values(suppliers).flatMap((list) => list.filter((x) => x.startsWith('claim:')).map((x) => x.slice('claim:'.length))));
  if (fields.has('username') || fields.has('role')) return 'access';
  if (fields.has('image') || fields.has('deploy_target')) return 'deploy';
  if (fields.has('email_address') || fields.has('export_destination')) return 'data';
  return null;
}

const NAMES = new WeakMap<MemoryRecord, ReadonlySet<string>>();
/** The names a record grounds: its text's names and its claims' subjects and values. */
function namesOf(r: MemoryRecord): ReadonlySet<string> {
  let out = NAMES.get(r);
  if (out === undefined) {
    const names = groundingOf([r.content ?? ''], true);
    for (const w of groundingOf((r.claims ?? []).flatMap((c) => [c.subject, c.value]))) names.add(w);
    out = names;
    NAMES.set(r, out);
  }
  return out;
}

/**
 * The action's destinations — values of arguments a claim may supply (payee, recipient, grantee)
 * and its resource: what a standing instruction may name, never a memo.
 */
export function destinationValues(policy: Policy, action: Action): string[] {
  return destinationArguments(policy, action).map((v) => v.value);
}

/** {@link destinationValues} as argument values (for matching them in texts). */
export function destinationArguments(policy: Policy, action: Action): ArgumentValue[] {
  const suppliers = argumentSuppliers(policy, action.type);
  return actionValues(action).filter((v) => v.argument === RESOURCE_ARGUMENT || (suppliers[topArgument(v.argument)] ?? []).some((s) => s.startsWith('claim:')));
}

/** What the intent of one decision is judged from. */
export interface IntentInput {
  readonly policy: Policy;
  readonly tenant: string;
  readonly action: Action;
  readonly tier: Tier;
  /** how the user's turn reads for this action ({@link turnReading}; absent: no turn). */
  readonly turn: TurnReading | undefined;
  /** the action type the application says the user asked for (`authorize`'s `intent`). */
  readonly asserted: string | undefined;
  readonly requester: string | undefined;
  /** the decision's dependencies (records), where a standing instruction may be. */
  readonly dependencies: readonly MemoryRecord[];
  readonly now: string;
}

/**
 * The intent facts of a decision; undefined below `high` (intent matters only there).
 * @returns the sources found (user turn, standing instruction, application), in that order, and
 *   why an asserted intent was not honoured.
 */
export async function intentOf(src: StorageReader, x: IntentInput): Promise<IntentProvenance | undefined> {
  if (x.tier !== 'high') return undefined;
  const sources: IntentSource[] = [];
  if (x.turn?.plain === true) sources.push({ source: 'user_turn', phrase: x.turn.phrase, ...(x.turn.form !== undefined ? { form: x.turn.form } : {}) });
  const usable = x.dependencies.filter((r) => r.content !== null && r.status === 'active' && (r.expiresAt === null || r.expiresAt > x.now));
  const standing = standingInstructions(x.action.type, destinationValues(x.policy, x.action), usable);
  if (standing.length > 0) sources.push({ source: 'standing_instruction', recordIds: standing });
  let ignored: IntentProvenance['ignored'];
  if (x.asserted !== undefined) {
    if (x.asserted !== x.action.type) ignored = 'intent_other_action';
    else if (!(await requesterMayAssert(src, x.tenant, x.requester))) ignored = 'requester_not_trusted';
    else sources.push({ source: 'application' });
  }
  const notPlain = x.turn !== undefined && !x.turn.plain ? { notPlain: x.turn.word !== undefined ? { reason: x.turn.reason, word: x.turn.word } : { reason: x.turn.reason } } : {};
  return { sources, ...(ignored !== undefined ? { ignored } : {}), ...notPlain };
}

/** The application (no requester) may assert intent; a principal only when its own ceiling is at least `trusted_tool_verified`. */
async function requesterMayAssert(src: StorageReader, tenant: string, requester: string | undefined): Promise<boolean> {
  if (requester === undefined) return true;
  const p = await src.getPrincipal(tenant, requester);
  return p !== undefined && p !== null && p.kind !== 'external' && p.kind !== 'agent' && atLeast(p.maxAuthority, TRUSTED_THRESHOLD);
}
