/**
 * The value-level provenance of one proposed action (docs/design.md § Action gate): for each argument
 * value — and the action's `resource`, at `{resource}` — the records whose text supplies it,
 * whether the user's turn does, and, for an amount nobody supplies, the quantity × unit price of
 * the user's turn it is (src/core/values.ts). Pure; linear in the total length of the texts and
 * values (one automaton pass per text).
 */
import { claimText, claimValueEquals } from './claims.js';
import { nameStandsAlone, turnWords } from './request-grammar.js';
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
 * Which claims the turn names as its party: the claim's subject or value at the start of one of its
 * party slots (src/core/request-grammar.ts `partySlots`), the longest of a field's claims that start
 * there — "the Acme Holdings invoice" names the payee `Acme Holdings`, not `Acme`.
 */
function namedByTurn(claimed: ReadonlyArray<{ claims?: readonly Claim[] | undefined }>, slots: readonly (readonly string[])[] | null): ((c: Claim) => boolean) | null {
  if (slots === null) return null;
  const claims = claimed.flatMap((r) => r.claims ?? []);
  const words = new Map<string, string[]>();
  const wordsOf = (t: string): string[] => words.get(t) ?? (words.set(t, turnWords(t)), words.get(t) as string[]);
  const named = new Set<Claim>();
  const partiesBySlot: string[] = [];
  for (const slot of slots) {
    const starts = (t: string): number => {
      const ws = wordsOf(t);
      return ws.length > 0 && ws.length <= slot.length && ws.every((w, i) => slot[i] === w) && nameStandsAlone(slot.slice(ws.length)) ? ws.length : 0;
    };
    const at = claims.map((c) => ({ c, n: Math.max(starts(c.subject), starts(c.value)) })).filter((x) => x.n > 0);
    const here = at.filter((x) => !at.some((y) => y.c.field === x.c.field && y.n > x.n));
    for (const x of here) named.add(x.c);
    if (here.length > 0) partiesBySlot.push([...new Set(here.map((x) => `${x.c.field}\u0000${claimText(x.c.value)}`))].sort().join('\u0001'));
  }
  // two slots naming different parties ("export the Bob report to backup", "pay the Globex invoice to mallory"): none is named
  if (new Set(partiesBySlot).size > 1) named.clear();
  return (c) => named.has(c);
}

/**
 * The values, by claim field, of the claims the turn names: a field with more than one ("pay Acme
 * 1200 from Globex") names no party at all — the agent would be choosing.
 */
function namedValuesByField(claimed: ReadonlyArray<{ claims?: readonly Claim[] | undefined }>, named: (c: Claim) => boolean): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const r of claimed)
    for (const c of r.claims ?? []) {
      if (!named(c)) continue;
      const set = out.get(c.field) ?? new Set<string>();
      set.add(claimText(c.value));
      out.set(c.field, set);
    }
  return out;
}

/**
 * Which trusted claims name the action's party: those the plain request names in a party slot
 * (one value per field), or — when it names none — those whose subject or value a trusted standing
 * instruction names. Untrusted claims never name, nor make a field ambiguous. Null: nothing names.
 */
function partyNaming(
  trustedClaimed: ReadonlyArray<{ claims?: readonly Claim[] | undefined }>,
  slots: readonly (readonly string[])[] | null,
  instructed: ReadonlySet<string>,
): ((c: Claim) => boolean) | null {
  const namedClaim = namedByTurn(trustedClaimed, slots);
  const byField = namedClaim !== null ? namedValuesByField(trustedClaimed, namedClaim) : null;
  const bySlot = namedClaim === null || byField === null ? null : (c: Claim): boolean => namedClaim(c) && (byField.get(c.field)?.size ?? 0) === 1;
  const byInstruction = (c: Claim): boolean => instructed.has(claimText(c.subject)) || instructed.has(claimText(c.value));
  if (bySlot === null && instructed.size === 0) return null;
  // the turn wins: a standing instruction names its party only when the plain request names none
  const turnNames = bySlot !== null && trustedClaimed.some((r) => (r.claims ?? []).some(bySlot));
  return turnNames ? (bySlot as (c: Claim) => boolean) : byInstruction;
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
 * @param slots - the party slots of a plain request (src/core/request-grammar.ts `partySlots`),
 *   or null: a claim the turn names there gets `named`.
 * @param assertedTurn - the user's turn's asserting clauses, prepared (src/core/intent.ts
 *   `assertedClauses`): a value the turn contains gets `userTurnAsserted` — whether one of them
 *   contains it.
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
  slots: readonly (readonly string[])[] | null = null,
  trusted: (recordId: string) => boolean = () => true,
  instructed: ReadonlySet<string> = new Set(),
): ValueProvenance[] {
  const values = actionValues(action, types);
  const all = userTurn === null ? texts.map((x) => x.text) : [...texts.map((x) => x.text), userTurn];
  const { byValue } = suppliersOf(values, all);
  const asserted = userTurn !== null && assertedTurn.length > 0 ? suppliersOf(values, assertedTurn).byValue : null;
  const products = userTurn !== null && values.some((v) => v.amount !== null) ? markedProducts(userTurn) : [];
  const named = partyNaming(
    claimed.filter((r) => trusted(r.id)),
    slots,
    instructed,
  );
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
    const userTurnAsserted = fromUser ? { userTurnAsserted: ((asserted?.[i] as number[] | undefined) ?? []).length > 0 } : {};
    const base = { argument: v.argument, value: v.value, recordIds, userTurn: fromUser, ...userTurnAsserted, ...(claims.length > 0 ? { claims } : {}) };
    return v.amount !== null ? { ...base, amount: v.amount, computed } : { ...base, computed };
  });
}
