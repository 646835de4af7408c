/**
 * Currencies in the user's turn (docs/design.md § Claims and intent): how a turn writes one, and
 * whether the turn's currency is the action's — part of the plain-request grammar
 * (src/core/request-grammar.ts). Pure.
 */
/** What a currency check reads of the action: the currency codes it carries and whether it moves money. */
export interface CurrencyContext {
  readonly currencies: ReadonlySet<string>;
  readonly movesMoney: boolean;
}

/** Why a turn's currency is not the action's (a reading of src/core/request-grammar.ts `TurnReading`). */
export interface CurrencyProblem {
  readonly plain: false;
  readonly reason: 'currency' | 'other_action';
  readonly word: string;
}

/** How a turn may write a currency: ISO codes, their names, and signs (`$` is any dollar). */
export const CURRENCY_OF: ReadonlyMap<string, string> = new Map([
  ...['usd', 'eur', 'gbp', 'chf', 'jpy', 'cad', 'aud'].map((c) => [c, c] as const),
  ['dollars', '$'],
  ['$', '$'],
  ['euros', 'eur'],
  ['€', 'eur'],
  ['pounds', 'gbp'],
  ['£', 'gbp'],
  ['¥', 'jpy'],
]);
const DOLLARS: ReadonlySet<string> = new Set(['usd', 'cad', 'aud']);
/** One currency: equal, or a `$` and a dollar (either way round). */
export const sameCurrency = (a: string, b: string): boolean => a === b || (a === '$' && DOLLARS.has(b)) || (b === '$' && DOLLARS.has(a));

/**
 * Two currencies in one turn ("$1200 eur", "1200 usd in cad"), one that is not the action's (the
 * turn says `$`, the action pays in EUR), or none while the action carries one ("pay the Acme
 * invoice" with `amount: "£1200"`): the amount the user means is not the action's.
 */
export function currencyProblem(tokens: readonly { token: string; run: boolean }[], x: CurrencyContext): CurrencyProblem | null {
  const said = [...new Set(tokens.map((t) => CURRENCY_OF.get(t.token)).filter((c): c is string => c !== undefined))];
  // an action that carries a currency (`amount: "£1200"`, `currency: "USD"`) the turn does not name: not the user's amount
  if (said.length === 0) return x.currencies.size > 0 ? { plain: false, reason: 'currency', word: [...x.currencies][0] as string } : null;
  if (!x.movesMoney) return { plain: false, reason: 'other_action', word: said[0] as string };
  const codes = [...x.currencies];
  // the turn's currency must be the action's (an action that carries none is paid in its executor's default: docs/design.md § Known limits)
  const mismatch = said.find((s) => said.some((o) => !sameCurrency(s, o)) || codes.some((c) => !sameCurrency(s, c)));
  return mismatch !== undefined ? { plain: false, reason: 'currency', word: mismatch } : null;
}
