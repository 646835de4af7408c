/**
 * The value-level provenance of one proposed action (docs/design.md § Action gate): for each argument
 * value — and the action's `resource`, at `{resource}` — the records whose text supplies it,
 * whether the user's turn does, and, for an amount nobody supplies, the quantity × unit price of
 * the user's turn it is (src/core/values.ts). Pure; linear in the total length of the texts and
 * values (one automaton pass per text).
 */
import type { Action, ArgumentType, ValueProvenance } from './types.js';
import { type MatchText, actionValues, findProduct, markedProducts, suppliersOf } from './values.js';

/**
 * @param action - the proposed action (arguments and resource).
 * @param types - the policy's argument types for its type (`argumentTypes(policy, type)`).
 * @param texts - the candidate records' prepared texts (active, unexpired, with content).
 * @param userTurn - the user's current turn, prepared, or null.
 * @returns one {@link ValueProvenance} per value, in argument order, the resource last;
 *   `recordIds` sorted; `amount` set for an amount that parses.
 */
export function valueProvenance(
  action: Pick<Action, 'args' | 'resource'>,
  types: Readonly<Record<string, ArgumentType>>,
  texts: ReadonlyArray<{ id: string; text: MatchText }>,
  userTurn: MatchText | null,
): ValueProvenance[] {
  const values = actionValues(action, types);
  const all = userTurn === null ? texts.map((x) => x.text) : [...texts.map((x) => x.text), userTurn];
  const { byValue } = suppliersOf(values, all);
  const products = userTurn !== null && values.some((v) => v.amount !== null) ? markedProducts(userTurn) : [];
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
    const base = { argument: v.argument, value: v.value, recordIds, userTurn: fromUser };
    return v.amount !== null ? { ...base, amount: v.amount, computed } : { ...base, computed };
  });
}
