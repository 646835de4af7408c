/**
 * The plain-request grammar (docs/design.md § Claims and intent): is the user's turn a short
 * imperative that requests one action type, in words memauth knows? Only such a turn requests an
 * action or asserts a value for the context waiver; any other turn is left to the full rule and a
 * confirmation. An allow-list, not a word list of what to refuse: a turn is plain only when
 *
 * 1. it has no question mark of any script, no invisible format character, no letter outside the
 *    Latin script, no combining mark, no quote and no dash standing alone (a quoted request is
 *    someone else's);
 * 2. it opens — after politeness (`please`, `kindly`, `go ahead and`, …) — with one of the action
 *    type's intent phrases;
 * 3. every other word is a function word ({@link FUNCTION_WORDS}), a noun of business requests
 *    ({@link NOUNS}), a word of the action's intent phrases, a period adjective before a noun ("the
 *    March invoice", "this month's rent" — never after `in`, `on`, `by`, …), a word of the action's
 *    own values, or a *name* a trusted record grounds ({@link groundingOf}: its claims' subjects
 *    and values, and the capitalised or identifier-shaped words of its text — "Halvorsen Freight",
 *    "ACME-AP", never "on", "is" or "paid");
 * 4. it holds at most one number: the action's amount when the action moves money, else a word of
 *    one of its destinations (a version in an image reference) — "in 2027", "at 5" are not; it
 *    names at most one currency, and the one the action carries ("$1200 eur", "$1200" for a
 *    payment in EUR, are not); and it names money only for an action
 *    that moves money ("set up the Acme payment" requests no permission grant: `other_action`);
 * 5. no negator or hedge occurs anywhere ({@link NEGATORS}, {@link HEDGES}) — a second line.
 *
 * So "Did you pay Acme 1200", "I forbid you to pay", "Pay nothing", "Pay Acme 1200 on Friday",
 * "… pending approval", "… subject to review", "Nunca pay …" are not plain: an unknown word, not a
 * missing list entry, ends plainness. Pure; linear in the turn's length.
 */
import { CURRENCY_OF, currencyProblem } from './currency.js';
import { decimalOfText } from './decimal.js';
import {
  ALL_OBJECTS,
  FISCAL_YEAR,
  FUNCTION_WORDS,
  HEDGES,
  LABELLED,
  LEAD_WORDS,
  NEGATORS,
  NOUNS,
  OBJECTS,
  type ObjectCategory,
  PERIOD_WORDS,
  RELATIONS,
  TIME_PREPOSITIONS,
  isPeriodWord,
  isOwnGroup,
  isTitle,
  termIndices,
  words,
} from './request-words.js';

export { FUNCTION_WORDS, GROUPS, HEDGES, LEAD_WORDS, NEGATORS, NOUNS, OBJECTS, type ObjectCategory, isOwnGroup, isPeriodWord, isTitle, termIndices, words } from './request-words.js';

export { CURRENCY_OF, sameCurrency } from './currency.js';
import { normalizeText, tokenize } from './match.js';

/** A year: unmarked by a currency it is a date, never an amount ("pay the Acme invoice in 2027"). */
const YEAR = /^(?:19|20)\d\d$/;

/** Delimiters a plain request may contain: white space, list and sentence punctuation, currency signs, brackets around a name. */
const PLAIN_MARKS: ReadonlySet<string> = new Set([' ', ',', '.', '!', ':', ';', '$', '€', '£', '¥', "'", '(', ')']);

/** Question marks of every script and every invisible format character (Unicode Cf, soft hyphen included). */
const QUESTION_OR_HIDDEN = /[?\u037e\u055e\u061f\u1367\u2047-\u2049\u203d\u2e2e\u2753-\u2755\ufe16\ufe56\uff1f\p{Cf}]/u;
/** A letter of another script than Latin, or a combining mark: look-alikes ("nоt" with a Cyrillic о) and other languages are not read. */
export const NOT_LATIN = /[\p{M}]|(?![\p{Script=Latin}])\p{L}/u;
/** Characters written for an apostrophe ("don´t", "donʼt", "don‘t", "don`t"), read as `'`. */
const APOSTROPHES = /[\u2018\u2019\u201b\u02bc\u02b9\u00b4\u0060\uff07]/g;
/** A number as a turn writes it (`1200`, `1,200.00`, `4.8.2`). */
export const NUMBER = /^\d[\d,.]*$/;
/** An identifier-shaped word: letters or digits joined by `- _ . @ / :` (ACME-AP, rafael.mendes, ap@quillmark.example). */
const IDENTIFIER = /^[\p{L}\p{N}]+(?:[-_.@/:][\p{L}\p{N}]+)+$/u;

/** Why a turn is not a plain request. */
export const NOT_PLAIN_REASONS = ['question_or_hidden', 'script', 'negation', 'hedge', 'numbers', 'currency', 'other_action', 'not_imperative', 'unknown_word'] as const;
export type NotPlainReason = (typeof NOT_PLAIN_REASONS)[number];

/** How the gate reads the user's turn for one action type: a plain request (with the intent phrase it uses), or not and why. */
export type TurnReading = { readonly plain: true; readonly phrase: string; readonly form?: 'question' } | { readonly plain: false; readonly reason: NotPlainReason; readonly word?: string };

/** What a turn is read against: the action type's intent phrases, the action's own words and amounts, and the names trusted records ground. */
export interface RequestContext {
  readonly phrases: readonly string[];
  /**
   * the words of the action's *destinations* — values of arguments a claim may supply, never a
   * memo or a resource only the turn supplies ({@link groundingOf} with `names: false`): the
   * agent chooses the other values, and could copy a turn's condition into one of them.
   */
  readonly actionWords: ReadonlySet<string>;
  /** the canonical decimals of the action's amounts. */
  readonly amounts: ReadonlySet<string>;
  /** the action type takes an amount (the policy types an argument `amount`): its one number is the amount, in an amount's place. */
  readonly movesMoney: boolean;
  /**
   * what kind of object the action type acts on ({@link OBJECTS}): a noun of another kind in the
   * turn ("transfer the Q3 report to Bob" read as a wire, "give Bob the report" as a grant) makes
   * it request another action (`other_action`). Null: not known (no noun is checked).
   */
  readonly category: ObjectCategory | null;
  /** the currency codes the action carries (lower case: `usd`), from its amounts and its `currency` argument. */
  readonly currencies: ReadonlySet<string>;
  /** names trusted records ground ({@link groundingOf} of their texts, `names: true`, and of their claims). */
  readonly grounding: ReadonlySet<string>;
  /**
   * the action's place as one word (its resource, a grant's `resource`, whole and normalised): known
   * only right before a noun of a place of the action's own kind ("the docs repository" for a grant
   * on `docs`; {@link OBJECTS} `access`, `deploy`).
   */
  readonly placeWords?: ReadonlySet<string>;
}

/** Fold a text as the grammar reads it: NFKC, apostrophe variants as `'`, white space collapsed (case kept). */
function fold(text: string): string {
  return text.replace(APOSTROPHES, "'").normalize('NFKC').replace(APOSTROPHES, "'").replace(/\s+/g, ' ').trim();
}

/** The words of a turn after folding (NFKC, apostrophes, case), with whether each is a run. */
export function turnTokens(turn: string): { token: string; run: boolean }[] {
  const out: { token: string; run: boolean }[] = [];
  tokenize(normalizeText(fold(turn)), (token, run) => out.push({ token, run }));
  return out;
}

/**
 * The grounding of texts: with `names: false` every word (the action's values, claims); with
 * `names: true` only what a text uses as a name — a capitalised word not opening a sentence, or an
 * identifier-shaped word — so a trusted note's "on", "or" and "scratch that" ground nothing, nor
 * does any number it writes. Each word whole and split at its inner punctuation
 * (`payroll@tessaline.example` grounds `payroll`, `tessaline`, `example`); never a period word, a
 * negator or a hedge.
 *
 * @param texts - raw texts.
 * @param names - keep only names (for record texts).
 * @returns the set of normalised words.
 */
export function groundingOf(texts: Iterable<string>, names = false): Set<string> {
  const out = new Set<string>();
  for (const text of texts) {
    let opening = true;
    tokenize(fold(text), (token, run) => {
      if (!run) {
        if (/[.!?]/.test(token)) opening = true;
        return;
      }
      const name = !names || IDENTIFIER.test(token) || (!opening && /\p{Lu}/u.test(token));
      opening = false;
      if (name) addWord(out, normalizeText(token), !names);
    });
  }
  return out;
}

function addWord(out: Set<string>, w: string, numbers: boolean): void {
  // whole, split at `/ : @` (registry.example/checkout-service:4.8.2 → checkout-service, 4.8.2), and at any punctuation
  const parts = /[^\p{L}\p{N}]/u.test(w) ? [...w.split(/[/:@]+/u), ...w.split(/[^\p{L}\p{N}]+/u)] : [];
  for (const x of [w, ...parts]) {
    if (x === '' || (!numbers && NUMBER.test(x)) || PERIOD_WORDS.has(x) || NEGATORS.has(x) || HEDGES.has(x)) continue;
    out.add(x);
  }
}

/** Is `w` known to a set: itself, its possessive stem, or (four letters or more) its singular or plural form. */
function known(w: string, set: ReadonlySet<string>): boolean {
  const stem = w.endsWith("'s") ? w.slice(0, -2) : w.endsWith("'") ? w.slice(0, -1) : w;
  if (set.has(stem)) return true;
  return stem.length >= 4 && ((stem.endsWith('s') && set.has(stem.slice(0, -1))) || set.has(`${stem}s`));
}

/** Words an intent phrase of several words may have between its words: "run this month's payroll" is "run payroll". */
const PHRASE_GAPS: ReadonlySet<string> = words("the this that these those our my their its a an 's");

/**
 * How many words of `ws` from `i` an intent phrase's words cover: the phrase's words in order, with
 * only determiners and period words between them (never before its first word); null when they do
 * not stand there.
 */
export function phraseSpan(ws: readonly string[], i: number, phrase: readonly string[]): number | null {
  if (phrase.length === 0 || ws[i] !== phrase[0]) return null;
  let at = i + 1;
  for (const w of phrase.slice(1)) {
    while (at < ws.length && ws[at] !== w && (PHRASE_GAPS.has(ws[at] as string) || isPeriodWord(ws[at] as string))) at++;
    if (ws[at] !== w) return null;
    at++;
  }
  return at - i;
}

/** The first intent phrase (as the policy writes it) whose words start at `ws[i]`, or null. */
export function phraseAt(ws: readonly string[], i: number, phrases: readonly { phrase: string; words: string[] }[]): { phrase: string; length: number } | null {
  for (const p of phrases) {
    const length = phraseSpan(ws, i, p.words);
    if (length !== null) return { phrase: p.phrase, length };
  }
  return null;
}

/** The first word-level rule broken: a negator, a hedge, more than one number or one that is not the action's. */
function wordProblem(ws: readonly string[], x: RequestContext): TurnReading | null {
  for (const w of ws) {
    if (NEGATORS.has(w) || w.endsWith("n't")) return { plain: false, reason: 'negation', word: w };
    if (HEDGES.has(w)) return { plain: false, reason: 'hedge', word: w };
  }
  const numbers = ws.filter((w) => NUMBER.test(w));
  if (numbers.length > 1) return { plain: false, reason: 'numbers' };
  const n = numbers[0];
  // an action that moves money: the number is its amount; any other: one of its destinations' (a version)
  if (n !== undefined && !(x.movesMoney ? x.amounts.has(decimalOfText(n) ?? '') : x.actionWords.has(n))) return { plain: false, reason: 'unknown_word', word: n };
  const own = x.category !== null ? OBJECTS[x.category] : null;
  const other = own === null ? undefined : ws.find((w) => ALL_OBJECTS.has(bare(w)) && !own.has(bare(w)));
  if (other !== undefined) return { plain: false, reason: 'other_action', word: other };
  return null;
}

const bare = (w: string): string => w.replace(/'s$|'$/, '');

/**
 * Read the user's turn for one action type (docs/design.md § Claims and intent).
 *
 * @param turn - the user's current turn (raw text).
 * @param x - the action type's intent phrases (`actions.<type>.intent`), the action's words and
 *   amounts, and the trusted records' names.
 * @returns `{plain: true, phrase}` for a plain request of the action type; otherwise
 *   `{plain: false, reason, word?}` — the first rule the turn breaks, and the word that broke it.
 */
export function readRequest(turn: string, x: RequestContext): TurnReading {
  if (QUESTION_OR_HIDDEN.test(turn)) return { plain: false, reason: 'question_or_hidden' };
  if (NOT_LATIN.test(turn)) return { plain: false, reason: 'script' };
  const tokens = turnTokens(turn);
  // a dash is a run character (`checkout-service`); standing alone it is punctuation, and not plain
  const mark = tokens.find((t) => (!t.run && !PLAIN_MARKS.has(t.token)) || (t.run && /^[\p{P}\p{S}]+$/u.test(t.token)));
  if (mark) return { plain: false, reason: 'unknown_word', word: mark.token };
  const ws = tokens.filter((t) => t.run).map((t) => t.token);
  const term = x.movesMoney ? termIndices(ws) : new Set<number>();
  const problem =
    wordProblem(
      ws.filter((_, k) => !term.has(k)),
      x,
    ) ??
    labelledNumber(tokens) ??
    misplacedAmount(tokens, x) ??
    currencyProblem(tokens, x);
  if (problem) return problem;
  const compiled = x.phrases.map((phrase) => ({
    phrase,
    words: turnTokens(phrase)
      .filter((t) => t.run)
      .map((t) => t.token),
  }));
  let i = 0;
  while (i < ws.length && LEAD_WORDS.has(ws[i] as string)) i++;
  const opening = phraseAt(ws, i, compiled);
  if (opening === null) return { plain: false, reason: 'not_imperative', ...(ws[i] !== undefined ? { word: ws[i] } : {}) };
  const verbs = new Set(compiled.flatMap((p) => p.words));
  for (let j = i + opening.length; j < ws.length; j++) {
    const w = ws[j] as string;
    if (term.has(j)) continue;
    // a possessive owns a business noun or a period ("Acme's invoice", "Halvorsen Freight's March invoice"), never a person
    if (w.endsWith("'s") && !possessiveOwnsObject(ws[j + 1] ?? '')) return { plain: false, reason: 'unknown_word', word: ws[j + 1] ?? w };
    // a word relating a party to another is never plain, even where a trusted text or a claim value has it — except as a
    // title right before a grounded name, not after a possessive ("for contractor Dana Web"; not "Acme's contractor Bob")
    // "our payroll team": a group of the speaker's own names no party (src/core/party-naming.ts decides who receives)
    if (isOwnGroup(ws, j)) continue;
    if (RELATIONS.has(bare(w))) {
      if (isTitle(ws, j, (n) => known(n, x.grounding))) continue;
      return { plain: false, reason: 'unknown_word', word: w };
    }
    if (FUNCTION_WORDS.has(w) || NOUNS.has(w) || verbs.has(w) || NUMBER.test(w) || known(w, x.actionWords) || known(w, x.grounding)) continue;
    if (periodBeforeNoun(ws, j, x) || placeName(ws, j, x)) continue;
    return { plain: false, reason: 'unknown_word', word: w };
  }
  return { plain: true, phrase: opening.phrase };
}

/**
 * A period word at `ws[j]` names an object ("the March invoice", "this month's rent") when a noun
 * or a grounded name follows it, and it does not follow a time preposition ("in March", "by Q3").
 */
function periodBeforeNoun(ws: readonly string[], j: number, x: RequestContext): boolean {
  const w = ws[j] as string;
  const next = ws[j + 1];
  if (!(PERIOD_WORDS.has(w) || FISCAL_YEAR.test(w)) || next === undefined || TIME_PREPOSITIONS.has(ws[j - 1] ?? '')) return false;
  return NOUNS.has(next) || known(next, x.grounding) || known(next, x.actionWords) || PERIOD_WORDS.has(next);
}

/** The action's place, as one word, right before a place noun of its kind ("the docs repository", "the billing-service repo"). */
function placeName(ws: readonly string[], j: number, x: RequestContext): boolean {
  const place = x.category === 'access' || x.category === 'deploy' ? OBJECTS[x.category] : null;
  return place !== null && x.placeWords !== undefined && x.placeWords.has(ws[j] as string) && place.has(ws[j + 1] ?? '');
}

/** A number right after a noun that it labels ("invoice 4471", "account 4471"; not "invoice, $1200") is no amount. */
function labelledNumber(tokens: readonly { token: string; run: boolean }[]): TurnReading | null {
  const spoken = tokens.filter((t) => t.token !== ' ');
  for (let i = 1; i < spoken.length; i++) {
    const t = spoken[i] as { token: string; run: boolean };
    const prev = spoken[i - 1] as { token: string; run: boolean };
    if (t.run && NUMBER.test(t.token) && prev.run && LABELLED.has(prev.token)) return { plain: false, reason: 'numbers', word: t.token };
  }
  return null;
}

/**
 * A payment's number stands where an amount does: next to a currency ("$1200", "1200 USD"), or
 * else not after a time preposition or a noun ("in 2027", "office 12"), not before a noun it counts
 * ("all 3 reports", "the 2025 invoice"), and not a year. Otherwise it is no amount ('numbers').
 */
function misplacedAmount(tokens: readonly { token: string; run: boolean }[], x: RequestContext): TurnReading | null {
  if (!x.movesMoney) return null;
  const spoken = tokens.filter((t) => t.token !== ' ');
  for (let i = 0; i < spoken.length; i++) {
    const t = spoken[i] as { token: string; run: boolean };
    if (!t.run || !NUMBER.test(t.token)) continue;
    const prev = spoken[i - 1];
    const next = spoken[i + 1];
    if ((prev !== undefined && !prev.run && CURRENCY_OF.has(prev.token)) || (next?.run === true && CURRENCY_OF.has(next.token))) continue;
    const before = prev?.run === true ? bare(prev.token) : null;
    const after = next?.run === true ? bare(next.token) : null;
    if (YEAR.test(t.token) || (before !== null && (TIME_PREPOSITIONS.has(before) || NOUNS.has(before))) || (after !== null && NOUNS.has(after)))
      return { plain: false, reason: 'numbers', word: t.token };
  }
  return null;
}

/** The normalised words of a text, possessives read as their names. */
export function turnWords(text: string): string[] {
  return turnTokens(text)
    .filter((t) => t.run)
    .map((t) => bare(t.token));
}

/** Does a possessive own an object — a business noun or a period ("Acme's invoice", "Halvorsen Freight's March invoice") — rather than a person ("Acme's mallory")? */
function possessiveOwnsObject(next: string): boolean {
  return NOUNS.has(next) || isPeriodWord(next);
}
