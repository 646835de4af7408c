/**
 * Value-level provenance (docs/design.md § Action gate; § Claims and intent: "identifiers compare as
 * exact strings, amounts as exact decimals"): which texts supply an action's argument values.
 *
 * - **Identifiers** — every argument the policy does not declare an amount (account numbers,
 *   IBANs, phone numbers, ids, e-mail addresses, the action's `resource`; a JSON number too, as its
 *   decimal text) — match as exact strings after normalisation only: Unicode NFC, lower case
 *   (identifiers are case-insensitive), white space collapsed. The value's token sequence must be
 *   a contiguous part of the text's (src/core/match.ts): an identifier run — a maximal sequence
 *   of non-delimiter characters; delimiters are white space, brackets, quotes, currency signs and
 *   `. , : ; ! ? '` where they do not sit between two run characters — is never matched inside a
 *   longer one, so `ACCT-1234` is not supplied by `ACCT-1234-5678`, `acme.co` not by
 *   `billing@acme.co.uk`, `ap@outlook.com` not by `acme_ap@outlook.com`, `sbank-tr-4471` not by
 *   `İSBANK-TR-4471`, `1234567` not by `1,234,567`, `0901` not by `901`. No numeric reading, no
 *   doubles. A value with no identifier run (only punctuation) is supplied by nothing.
 * - **Amounts** — arguments the policy declares `amount` (`actions.<type>.argumentTypes`) —
 *   compare as exact decimals (src/core/decimal.ts): `5000` = `5,000.00` = `$5,000`, at any
 *   magnitude. An amount in a text is a whole run in the amount grammar (digits, optional `,`
 *   thousands groups, optional `.` fraction, no leading zero) not preceded by `.`/`,` — so the
 *   digits inside `INV_1200` are no amount. An amount argument that is negative or no amount
 *   (`12,50`, `-5`) is supplied by nothing; one that is an array or object is refused
 *   ({@link argumentShapeProblems}).
 * - **Computed amounts** ({@link findProduct}) — quantity × unit price, only where the user's
 *   turn marks both: `50 units at $10 each`, `3 x $19.99`, `10 licences @ 25 per licence`.
 *
 * Conservative on purpose: a false match adds a dependency (fail closed); a paraphrased value
 * that does not match is caught by context taint unless the caller narrowed the context.
 * Matching all of a decision's values against all its texts is linear in their total length.
 */
import { decimalOfArgument, decimalOfText, multiplyDecimals } from './decimal.js';
import { type MatchText, type Pattern, ValueMatcher, normalizeText, valueTokens } from './match.js';
import type { Action, ArgumentType } from './types.js';

export { type MatchText, normalizeText, prepareText } from './match.js';

/** One leaf value of an action's arguments, with its path (`to`, `items[0].sku`, `{resource}`). */
export interface ArgumentValue {
  readonly argument: string;
  readonly value: string;
  readonly type: ArgumentType;
  /** the canonical decimal of an amount; null for an identifier or an amount that is none. */
  readonly amount: string | null;
}

/** The argument path under which an action's `resource` is checked like any argument value. */
export const RESOURCE_ARGUMENT = '{resource}';

/** An object key the gate does not check as a value (a plain identifier); any other key is a value. */
export const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A key below the top level that may be structure rather than a value: words of ASCII letters
 * joined by single underscores (`account`, `line_items`), no digit.
 */
export const WORD_KEY = /^[A-Za-z]+(?:_[A-Za-z]+)*$/;

/**
 * Flatten `args` to leaf values (strings, finite numbers, and booleans and null as `"true"`,
 * `"false"`, `"null"`: a flag the executor acts on must be supplied like any identifier). Empty
 * strings carry no value. Object keys that are not plain identifiers are values too (a payee smuggled
 * in as a key, `{ "ACCT-9": 1200 }`, must be supplied like any other value); a key is always an
 * identifier. Below the top level (docs/design.md § Action gate), a key is a value too unless it
 * is a {@link WORD_KEY} that labels a value: `{invoice: {number: "INV-7", acct_1Mallory: {}}}` or
 * `{invoice: {number: "INV-7", recurring: true}}` — a key with a digit, or one that labels nothing
 * (an empty object, a flag) — must be supplied like `INV-7` (a destination may not be an object at
 * all: {@link argumentShapeProblems}). Top-level names are the
 * policy's to restrict (`actions.<type>.arguments`).
 *
 * @param types - the policy's argument types of this action, by top-level argument name
 *   (`policy.argumentTypes`); every leaf under an `amount` argument is an amount, the rest identifiers.
 */
export function argumentValues(args: Readonly<Record<string, unknown>>, types: Readonly<Record<string, ArgumentType>> = {}): ArgumentValue[] {
  const out: ArgumentValue[] = [];
  const identifier = (v: string, path: string): void => {
    if (v.trim() !== '') out.push({ argument: path, value: v, type: 'identifier', amount: null });
  };
  const walk = (v: unknown, path: string, type: ArgumentType): void => {
    if (typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))) {
      const text = String(v);
      if (type === 'amount' && text.trim() !== '') out.push({ argument: path, value: text, type, amount: decimalOfArgument(v) });
      else identifier(text, path);
    } else if (typeof v === 'boolean' || v === null) {
      // a flag or a null is a value the executor acts on ("mfa_required": false, "to": true): it must be supplied too
      if (path !== '') identifier(String(v), path);
    } else if (Array.isArray(v)) v.forEach((x, i) => walk(x, `${path}[${i}]`, type));
    else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        const p = path ? `${path}.${k}` : k;
        const at = out.length;
        const t = path === '' ? (Object.prototype.hasOwnProperty.call(types, k) ? (types[k] as ArgumentType) : 'identifier') : type;
        walk(x, p, t);
        // a key labelling a flag or a null says what the flag does ("recurring": true): a value as much as the flag
        const flag = typeof x === 'boolean' || x === null;
        const traced = !PLAIN_KEY.test(k) || (path !== '' && !(WORD_KEY.test(k) && out.length > at && !flag));
        // the key goes before what it labels (the order values are reported in)
        if (traced && k.trim() !== '') out.splice(at, 0, { argument: `${p}{key}`, value: k, type: 'identifier', amount: null });
      }
    }
  };
  walk(args, '', 'identifier');
  return out;
}

/** Why an action's arguments cannot be checked value by value: the argument and a detail for a `metadata_missing` reason. */
export interface ArgumentShapeProblem {
  readonly argument: string;
  readonly detail: 'amount_not_scalar' | 'amount_not_a_number' | 'argument_not_allowed' | 'destination_not_scalar' | 'destination_repeated' | 'destination_blank';
}

/**
 * Arguments the gate refuses before any value is matched (docs/design.md § Action gate): an
 * argument the policy declares an `amount` whose value is an array or object (`[1200, 1200]`,
 * `{"ACCT-1": 1200}` — an amount is one string or number; `amount_not_scalar`; null or a boolean: `amount_not_a_number`), and an argument
 * literally named {@link RESOURCE_ARGUMENT}, which would be reported as the action's resource
 * (`argument_not_allowed`), and an argument a claim may supply (a destination: payee, recipient,
 * grantee, role) that is an object or holds one (`{to: {account: "ACME-AP", also_pay: …}}` — its
 * keys would be instructions to the executor nobody supplied; `destination_not_scalar`: a
 * destination is a string or number, or — for an action that moves no money — a list of them),
 * a list that repeats a destination (`["ACME-AP", "acme-ap"]`, or a value another destination
 * argument already names: `to` and `destination` both `payroll@…`; `destination_repeated`): one
 * named party is one destination, and a blank destination (`""`, `"  "`, or one in a list:
 * `destination_blank`). An amount is never blank (`amount_not_a_number`; a missing one is the
 * executor's to refuse: docs/design.md § Known limits). Pure.
 * @param args - the action's arguments (plain JSON).
 * @param types - the policy's argument types for the action's type.
 * @param suppliers - the policy's suppliers for the action's type, by top-level argument.
 * @returns the problems, sorted by argument; empty when none.
 */
export function argumentShapeProblems(
  args: Readonly<Record<string, unknown>>,
  types: Readonly<Record<string, ArgumentType>>,
  suppliers: Readonly<Record<string, readonly string[]>> = {},
): ArgumentShapeProblem[] {
  const out: ArgumentShapeProblem[] = [];
  const scalar = (v: unknown): boolean => v === null || typeof v !== 'object';
  const money = Object.values(types).includes('amount');
  const fold = (x: unknown): string => String(x).normalize('NFKC').trim().toLowerCase();
  // a destination one argument names already, named again by another (`to` and `destination` alike): a double send
  const seen = new Set<string>();
  const repeatedAcross = new Set<string>();
  for (const [k, v] of Object.entries(args)) {
    if (types[k] === 'amount' || !(suppliers[k] ?? []).some((x) => x.startsWith('claim:')) || !Object.prototype.hasOwnProperty.call(suppliers, k)) continue;
    const own = new Set((Array.isArray(v) ? v : [v]).filter(scalar).map(fold));
    for (const x of own) if (seen.has(x)) repeatedAcross.add(k);
    for (const x of own) seen.add(x);
  }
  for (const [k, v] of Object.entries(args)) {
    const amount = Object.prototype.hasOwnProperty.call(types, k) && types[k] === 'amount';
    const destination = !amount && Object.prototype.hasOwnProperty.call(suppliers, k) && (suppliers[k] ?? []).some((x) => x.startsWith('claim:'));
    if (k === RESOURCE_ARGUMENT) out.push({ argument: k, detail: 'argument_not_allowed' });
    // a payment to a list of payees is as many payments as the list is long
    else if (destination && !(scalar(v) || (!money && Array.isArray(v) && v.every(scalar)))) out.push({ argument: k, detail: 'destination_not_scalar' });
    else if (destination && ((Array.isArray(v) && new Set(v.map(fold)).size < v.length) || repeatedAcross.has(k))) out.push({ argument: k, detail: 'destination_repeated' });
    else if (amount && v !== null && typeof v === 'object') out.push({ argument: k, detail: 'amount_not_scalar' });
    // a null or boolean amount carries no value to check, and many payment APIs read it as "everything"
    else if (amount && (v === null || typeof v === 'boolean' || (typeof v === 'string' && v.trim() === ''))) out.push({ argument: k, detail: 'amount_not_a_number' });
    else if (destination && (Array.isArray(v) ? v : [v]).some((x) => x === null || String(x).trim() === '')) out.push({ argument: k, detail: 'destination_blank' });
  }
  return out.sort((a, b) => (a.argument < b.argument ? -1 : a.argument > b.argument ? 1 : 0));
}

/** The values of an action: its arguments' ({@link argumentValues}) and its `resource`, an identifier at {@link RESOURCE_ARGUMENT}. */
export function actionValues(action: Pick<Action, 'args' | 'resource'>, types: Readonly<Record<string, ArgumentType>> = {}): ArgumentValue[] {
  const out = argumentValues(action.args, types);
  if (action.resource !== undefined && action.resource.trim() !== '') out.push({ argument: RESOURCE_ARGUMENT, value: action.resource, type: 'identifier', amount: null });
  return out;
}

/**
 * A key whose `_` may be written as a space in the text: words of letters joined by single
 * underscores (`trial_balance`, `monthly_metrics`) — no digits, no other characters, no leading,
 * trailing or doubled `_` — so no address or number (`jane_jdoe@gmail.com`, `acct_1234`,
 * `alice_`) can be assembled from words a trusted text merely writes side by side.
 */
const SPACED_KEY = /^\p{L}+(?:_\p{L}+)+$/u;

function patternOf(v: ArgumentValue): Pattern {
  if (v.type === 'amount') return { tokens: null, amount: v.amount };
  return { tokens: valueTokens(v.value), amount: null, spaced: SPACED_KEY.test(v.value) ? valueTokens(v.value.replace(/_/g, ' ')) : null };
}

/**
 * Which texts supply each value, in one pass per text.
 * @returns per value (same order), the sorted indices of the texts that supply it; `ops`, the
 *   matcher's steps over all texts (linear in their total length).
 */
export function suppliersOf(values: readonly ArgumentValue[], texts: readonly MatchText[]): { byValue: number[][]; ops: number } {
  const matcher = new ValueMatcher(values.map(patternOf));
  const byValue: number[][] = values.map(() => []);
  let ops = 0;
  texts.forEach((t, ti) => {
    matcher.scan(t, (i) => (byValue[i] as number[]).push(ti));
    ops += matcher.ops;
  });
  return { byValue, ops };
}

/** Does `text` supply `value`? (One value against one text; see {@link suppliersOf} for many.) */
export function supplies(text: MatchText, value: ArgumentValue): boolean {
  return (suppliersOf([value], [text]).byValue[0] as number[]).length > 0;
}

/** Significant tokens of a text: words of 3+ characters or containing a digit. */
export function significantTokens(text: string): Set<string> {
  return significantTokensOfNormalized(normalizeText(text));
}

/** {@link significantTokens} of a text already passed through {@link normalizeText}. */
export function significantTokensOfNormalized(normalized: string): Set<string> {
  const out = new Set<string>();
  for (const m of normalized.matchAll(/[\p{L}\p{N}][\p{L}\p{N}@.]*/gu)) {
    const t = m[0].replace(/\.+$/, '');
    if (t.length >= 3 || /\d/.test(t)) out.add(t);
  }
  return out;
}

const CURRENCY = new Set(['$', '€', '£', '¥']);
const TIMES = new Set(['x', '×', '*']);
const AT = new Set(['at', '@']);
const EACH = new Set(['each', 'apiece', 'ea']);
const PER = new Set(['per', 'a', 'an']);
const WORD = /^\p{L}[\p{L}-]*$/u;
const MAX_PRODUCTS = 64;
/** longest quantity or unit price (characters) the product rule considers: bounds the arithmetic. */
const MAX_OPERAND = 32;

/**
 * The (quantity, unit price) pairs the user's turn marks, in this grammar over its tokens
 * (`[…]` optional, up to three words between quantity and `at`):
 * - `<quantity> [words] at|@ [currency] <price> each|apiece|ea|per <word>|a <word>` — "reorder 50
 *   units at $10 each", "10 licences @ 25 per licence";
 * - `<quantity> x|×|* [currency] <price>` — "3 x $19.99".
 * Quantity and price are amounts of the text (amount grammar) of at most 32 characters. At most 64 pairs.
 */
export function markedProducts(turn: MatchText): Array<{ quantity: string; unitPrice: string }> {
  const toks = Array.from(turn.tokens, (id) => turn.vocab[id] as string);
  const ws = (k: number): number => (toks[k] === ' ' ? k + 1 : k);
  const amountAt = (k: number): string | null => (toks[k - 1] === '.' || toks[k - 1] === ',' || toks[k] === undefined ? null : decimalOfText(toks[k] as string));
  const priceAt = (k: number): { price: string; end: number } | null => {
    const j = CURRENCY.has(toks[k] as string) ? ws(k + 1) : k;
    const price = (toks[j]?.length ?? 0) <= MAX_OPERAND ? amountAt(j) : null;
    return price === null ? null : { price, end: j + 1 };
  };
  const out: Array<{ quantity: string; unitPrice: string }> = [];
  for (let i = 0; i < toks.length && out.length < MAX_PRODUCTS; i++) {
    const quantity = (toks[i] as string).length <= MAX_OPERAND ? amountAt(i) : null;
    if (quantity === null) continue;
    let k = ws(i + 1);
    if (TIMES.has(toks[k] as string)) {
      const p = priceAt(ws(k + 1));
      if (p) out.push({ quantity, unitPrice: p.price });
      continue;
    }
    if (k === i + 1) continue;
    for (let w = 0; w < 3 && WORD.test(toks[k] ?? '') && !AT.has(toks[k] as string) && toks[k + 1] === ' '; w++) k += 2;
    if (!AT.has(toks[k] as string) || toks[k + 1] !== ' ') continue;
    const p = priceAt(k + 2);
    if (!p) continue;
    const m = ws(p.end);
    const marked = m > p.end && (EACH.has(toks[m] as string) || (PER.has(toks[m] as string) && toks[m + 1] === ' ' && WORD.test(toks[m + 2] ?? '')));
    if (marked) out.push({ quantity, unitPrice: p.price });
  }
  return out;
}

/**
 * Find `target = quantity × unit price` among the pairs the user's turn marks
 * ({@link markedProducts}), in exact decimal arithmetic. Used only when no trusted text supplies
 * the amount itself. Deliberately narrow: no sums, no numbers from memory, and no product of two
 * numbers the turn merely mentions ("Pay $1,200 (PO 4417)" gives no 5,300,400).
 *
 * @param target - the canonical decimal of the amount argument.
 * @param turn - the user's turn, or its {@link markedProducts} (computed once for many values).
 * @returns the two operands (canonical decimals), or null.
 */
export function findProduct(target: string, turn: MatchText | ReadonlyArray<{ quantity: string; unitPrice: string }>): { op: '*'; a: string; b: string } | null {
  for (const p of Array.isArray(turn) ? turn : markedProducts(turn as MatchText)) if (multiplyDecimals(p.quantity, p.unitPrice) === target) return { op: '*', a: p.quantity, b: p.unitPrice };
  return null;
}
