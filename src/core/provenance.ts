/**
 * The value-level provenance of one proposed action (docs/design.md § Action gate): for each argument
 * value — and the action's `resource`, at `{resource}` — the records whose text supplies it,
 * whether the user's turn does, and, for an amount nobody supplies, the quantity × unit price of
 * the user's turn it is (src/core/values.ts). Pure; linear in the total length of the texts and
 * values (one automaton pass per text).
 */
import { claimValueEquals } from './claims.js';
import { partyNaming } from './party-naming.js';
import { type TurnParties, slotPhrase, slotWords } from './party-slots.js';
import { FUNCTION_WORDS, NUMBER, groundingOf, isPeriodWord } from './request-grammar.js';
import type { Action, ArgumentType, Claim, ValueProvenance } from './types.js';
import { type ArgumentValue, type MatchText, RESOURCE_ARGUMENT, actionValues, findProduct, markedProducts, suppliersOf } from './values.js';

/** The top-level argument a value's path belongs to (`items[0].sku` → `items`; `{resource}` itself). */
export function topArgument(path: string): string {
  if (path === RESOURCE_ARGUMENT) return path;
  const m = /^[^.[{]+/.exec(path);
  return m ? m[0] : path;
}

/** The claim fields the policy lists as suppliers of an argument (`claim:<field>` entries). */
export function claimFields(suppliers: readonly string[] | undefined): string[] {
  return (suppliers ?? []).filter((s) => s.startsWith('claim:')).map((s) => s.slice('claim:'.length));
}

type ClaimSupplier = { field: string; recordIds: string[]; named?: string[] };

/**
 * The records whose typed claims supply `v`: a claim of one of `fields` whose value equals `v`
 * (src/core/claims.ts `claimValueEquals`), by field; empty when none. `named`: the records among
 * them with such a claim that `named` says the user's turn names.
 */
function claimSuppliers(
  v: ArgumentValue,
  fields: readonly string[],
  records: ReadonlyArray<{ id: string; claims?: readonly Claim[] | undefined }>,
  named: ((c: Claim) => boolean) | null,
): ClaimSupplier[] {
  const out: ClaimSupplier[] = [];
  for (const field of [...new Set(fields)].sort()) {
    const ids = new Set<string>();
    const namedIds = new Set<string>();
    for (const r of records) {
      for (const c of r.claims ?? []) {
        if (c.field !== field || !claimValueEquals(c.value, v.value, v.amount)) continue;
        ids.add(r.id);
        if (named !== null && named(c)) namedIds.add(r.id);
      }
    }
    if (ids.size > 0) out.push({ field, recordIds: [...ids].sort(), ...(named !== null ? { named: [...namedIds].sort() } : {}) });
  }
  return out;
}

/**
 * Does a value stand whole in the phrase of the request's object or of a place of the action's own
 * kind, with the period words before it ("production" of "deploy … to production", not of "… with
 * the production build to staging"; "Q2 salary export" of "send the Q2 salary export")? An
 * identifier the turn asserts for an argument no claim may supply (an environment, a service, the
 * data sent) counts only there. Whole: each side is the phrase's edge, a function word, a number, or a
 * word of another argument's value — or, on the right, a place noun ("docs" of "the docs repository") — so
 * "salary export" (without its "Q2") and "Q2 salary" are not what "the Q2 salary export" asks for,
 * and a party's slot ("to our payroll team", "to Bob") supplies nothing but its party.
 *
 * @param value - the argument value.
 * @param t - the plain request's words and slots.
 * @param others - the words of the action's other arguments' values.
 */
function inSlotPhrase(value: string, t: TurnParties, others: ReadonlySet<string>): boolean {
  // an identifier's underscores are the turn's spaces ("signed_quote" is "our signed quote")
  return [value, value.replace(/_+/g, ' ')].some((v) => wordsInSlot(slotWords(v), t, others));
}

function wordsInSlot(vw: readonly string[], t: TurnParties, others: ReadonlySet<string>): boolean {
  if (vw.length === 0) return false;
  const edge = (w: string | undefined, right: boolean): boolean => w === undefined || FUNCTION_WORDS.has(w) || NUMBER.test(w) || others.has(w) || (right && t.places.has(w));
  return t.slots.some((slot) => {
    const own = slotPhrase(t, slot);
    if (slot.kind !== 'object' && !own.some((w) => t.places.has(w))) return false;
    let from = slot.start;
    while (from > 0 && isPeriodWord(t.words[from - 1] as string)) from--;
    const phrase = [...t.words.slice(from, slot.start), ...own];
    for (let i = 0; i + vw.length <= phrase.length; i++) if (vw.every((w, j) => phrase[i + j] === w) && edge(phrase[i - 1], false) && edge(phrase[i + vw.length], true)) return true;
    return false;
  });
}

/**
 * @param action - the proposed action (arguments and resource).
 * @param types - the policy's argument types for its type (`argumentTypes(policy, type)`).
 * @param texts - the candidate records' prepared texts (active, unexpired, with content).
 * @param userTurn - the user's current turn, prepared, or null.
 * @param suppliers - the policy's suppliers for the action's type (`argumentSuppliers`): only
 *   claims of the fields listed for a value's argument are traced.
 * @param claimed - the candidate records that carry claims (active, unexpired).
 * @param trusted - whether a record is trusted now (action authority >= the threshold): two
 *   values of a field named by trusted claims name no party; untrusted claims do not count.
 * @param instructed - the action's values a trusted standing instruction names (core/intent.ts
 *   `instructedValues`): a claim whose subject or value is one of them is named.
 * @param slots - a plain request read for its party (src/core/party-slots.ts `partySlots`), or
 *   null: a claim the turn names (src/core/party-naming.ts) gets `named`.
 * @param assertedTurn - the user's turn's asserting clauses, prepared (src/core/intent.ts
 *   `assertedClauses`): a value the turn contains gets `userTurnAsserted` — whether one of them
 *   contains it and, for an identifier of an argument no claim may supply, a slot phrase of a
 *   plain request has it.
 * @returns one {@link ValueProvenance} per value, in argument order, the resource last;
 *   `recordIds` sorted; `amount` set for an amount that parses; `claims` only when some claim
 *   supplies the value.
 */
export function valueProvenance(
  action: Pick<Action, 'args' | 'resource'>,
  types: Readonly<Record<string, ArgumentType>>,
  texts: ReadonlyArray<{ id: string; text: MatchText }>,
  userTurn: MatchText | null,
  suppliers: Readonly<Record<string, readonly string[]>> = {},
  claimed: ReadonlyArray<{ id: string; claims?: readonly Claim[] | undefined }> = [],
  assertedTurn: readonly MatchText[] = [],
  slots: TurnParties | null = null,
  trusted: (recordId: string) => boolean = () => true,
  instructed: ReadonlySet<string> = new Set(),
): ValueProvenance[] {
  const values = actionValues(action, types);
  const all = userTurn === null ? texts.map((x) => x.text) : [...texts.map((x) => x.text), userTurn];
  const { byValue } = suppliersOf(values, all);
  const asserted = userTurn !== null && assertedTurn.length > 0 ? suppliersOf(values, assertedTurn).byValue : null;
  const products = userTurn !== null && values.some((v) => v.amount !== null) ? markedProducts(userTurn) : [];
  const claimFieldsOfAction = new Set(Object.values(suppliers).flatMap((s) => claimFields(s)));
  const named = partyNaming(
    claimed.filter((r) => trusted(r.id)),
    claimFieldsOfAction,
    slots,
    instructed,
    Object.values(types).includes('amount'),
    new Set(claimFields(suppliers[RESOURCE_ARGUMENT])),
  );
  // the words of the other arguments' values, each whole and in its parts ("checkout-service" and "4.8.2" of an image
  // reference): once per top-level argument, when a value of it is read against the slots
  const others = new Map<string, Set<string>>();
  const othersOf = (arg: string): Set<string> => {
    let o = others.get(arg);
    if (o === undefined) others.set(arg, (o = groundingOf(values.filter((u) => topArgument(u.argument) !== arg).flatMap((u) => [u.value, u.value.replace(/_+/g, ' ')]))));
    return o;
  };
  return values.map((v, i) => {
    const hits = byValue[i] as number[];
    const recordIds = hits
      .filter((h) => h < texts.length)
      .map((h) => (texts[h] as { id: string }).id)
      .sort();
    const fromUser = userTurn !== null && hits.includes(texts.length);
    let computed: ValueProvenance['computed'] = null;
    if (!fromUser && v.amount !== null && userTurn !== null) {
      const c = findProduct(v.amount, products);
      if (c)
        computed = {
          op: c.op,
          operands: [
            { value: c.a, recordIds: [], userTurn: true },
            { value: c.b, recordIds: [], userTurn: true },
          ],
        };
    }
    const fields = claimFields(suppliers[topArgument(v.argument)]);
    const claims = fields.length > 0 && claimed.length > 0 ? claimSuppliers(v, fields, claimed, named) : [];
    const assertedHere =
      ((asserted?.[i] as number[] | undefined) ?? []).length > 0 && (fields.length > 0 || v.amount !== null || slots === null || inSlotPhrase(v.value, slots, othersOf(topArgument(v.argument))));
    const userTurnAsserted = fromUser ? { userTurnAsserted: assertedHere } : {};
    const base = { argument: v.argument, value: v.value, recordIds, userTurn: fromUser, ...userTurnAsserted, ...(claims.length > 0 ? { claims } : {}) };
    return v.amount !== null ? { ...base, amount: v.amount, computed } : { ...base, computed };
  });
}
