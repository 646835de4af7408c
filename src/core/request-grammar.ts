/**
 * The plain-request grammar (docs/design.md § Claims and intent): is the user's turn a short
 * imperative that requests one action type, in words memauth knows? Only such a turn requests an
 * action or asserts a value for the context waiver; any other turn is left to the full rule and a
 * confirmation. An allow-list, not a word list of what to refuse: a turn is plain only when
 *
 * 1. it has no question mark of any script, no invisible format character, no letter outside the
 *    Latin script and no combining mark (look-alikes and languages the lists do not cover);
 * 2. it starts — after politeness (`please`, `kindly`, `go ahead and`, …) — with one of the
 *    action type's intent phrases, or with a generic action verb (`run`, `process`, …) when an
 *    intent phrase follows later ("run this month's payroll");
 * 3. every other word is a function word ({@link FUNCTION_WORDS}), a harmless noun of business
 *    requests ({@link NOUNS}), a word of the action's intent phrases, a word of the request's
 *    *grounding* (the action's own values and the texts and claims of the trusted records the
 *    decision reads: "Halvorsen Freight", "rent", "Harbor Street office"), a period adjective
 *    before a noun ("the March invoice", "this month's rent" — never after `in`, `on`, `by`, …), or
 *    the turn's one number;
 * 4. no negator or hedge occurs anywhere ({@link NEGATORS}, {@link HEDGES}) — a second line,
 *    because a trusted text of the grounding may itself say "never" or "on Friday".
 *
 * So "Did you pay Acme 1200", "I forbid you to pay", "Pay nothing", "Pay Acme 1200 on Friday",
 * "… pending approval", "… subject to review", "Nunca pay …" are not plain: an unknown word, not a
 * missing list entry, ends plainness. Pure; linear in the turn's length.
 */
import { normalizeText, tokenize } from './match.js';

/** Words that negate. One anywhere in a turn makes it not plain; beside a value, the clause asserts nothing (core/intent.ts `assertedClauses`). */
export const NEGATORS: ReadonlySet<string> = new Set(
  ['not', 'never', 'no', "don't", 'dont', "doesn't", "didn't", "won't", "wouldn't", "shouldn't", "mustn't", 'cannot', "can't"].concat([
    'stop',
    'avoid',
    'without',
    'nobody',
    'neither',
    'nor',
    'nothing',
    'none',
  ]),
);

/**
 * Words of doubt, condition, delay, warning or exception, and units of time. A second line behind
 * the allow-list: one anywhere ends plainness even when a trusted text grounds it.
 */
export const HEDGES: ReadonlySet<string> = new Set(
  [
    ...['but', 'if', 'unless', 'until', 'whether', 'check', 'verify', 'confirm', 'legit', 'legitimate', 'real', 'really', 'phishing', 'scam'],
    ...['fraud', 'fraudulent', 'suspicious', 'fake', 'ignore', 'refuse', 'reject', 'wait', 'hold', 'later', 'before', 'after', 'except'],
    ...['instead', 'rather', 'maybe', 'perhaps', 'claiming', 'claims', 'claimed', 'asked', 'says', 'said', 'emailed', 'wrote', 'when', 'once'],
    ...['next', 'tomorrow', 'tonight', 'soon', 'due', 'provided', 'assuming', 'should', 'case', 'otherwise', 'remind', 'schedule', 'approves'],
    ...['approved', 'approval', 'pending', 'subject', 'deliver', 'delivers', 'delivered', 'delivery', 'arrive', 'arrives', 'forbid', 'prohibit'],
    ...['cancel', 'halt', 'block', 'postpone', 'defer', 'delay', 'only', 'unless', 'weekly', 'monthly', 'yearly', 'daily', 'every', 'recurring'],
    ...['minute', 'minutes', 'hour', 'hours', 'day', 'days', 'week', 'weeks', 'fortnight', 'month', 'months', 'year', 'years', 'quarter'],
    ...['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday', 'weekend', 'eod', 'eow', 'eom', 'asap', 'deadline'],
  ].concat(['again', 'twice', 'repeat', 'another', 'more', 'extra']),
);

/** Words a turn may open with before its verb. */
const LEAD_WORDS: ReadonlySet<string> = new Set(['please', 'kindly', 'ok', 'okay', 'go', 'ahead', 'and', 'also', 'just', 'now']);
/** Verbs that may open a request whose intent phrase follows ("run this month's payroll", "process the Acme invoice payment"). */
const GENERIC_VERBS: ReadonlySet<string> = new Set(['run', 'process', 'make', 'execute', 'complete', 'handle', 'issue', 'submit']);

/** Function words of a request: articles, possessives, pronouns and the prepositions that name a party or an object. */
export const FUNCTION_WORDS: ReadonlySet<string> = new Set(
  ['the', 'a', 'an', 'our', 'my', 'their', 'his', 'her', 'its', 'this', 'that', 'these', 'those', 'to', 'for', 'of', 'from', 'with', 'at', 'in', 'into', 'via'].concat([
    'and',
    'me',
    'us',
    'them',
    'it',
    'please',
    'now',
    'today',
    'right',
    'away',
    'immediately',
    'full',
    'all',
    'same',
  ]),
);

/** Nouns and adjectives of business requests that name no party, amount, time or condition. */
export const NOUNS: ReadonlySet<string> = new Set([
  ...['invoice', 'invoices', 'bill', 'bills', 'payment', 'payments', 'rent', 'fee', 'fees', 'deposit', 'amount', 'balance', 'total', 'account', 'accounts'],
  ...['vendor', 'vendors', 'supplier', 'suppliers', 'contractor', 'contact', 'team', 'office', 'access', 'report', 'reports', 'file', 'files', 'copy'],
  ...['export', 'data', 'repository', 'repo', 'folder', 'document', 'documents', 'plan', 'subscription', 'service', 'production', 'staging', 'build'],
  ...['version', 'release', 'role', 'read', 'write', 'admin', 'viewer', 'editor', 'owner', 'member', 'partner', 'customer', 'client', 'order', 'payroll'],
  ...['usd', 'eur', 'gbp', 'chf', 'jpy', 'cad', 'aud', 'dollars', 'euros', 'pounds', 'open', 'latest', 'current', 'outstanding', 'usual', 'new', 'security'],
]);

/** Period adjectives: allowed only before a word that is not a number, and never after a {@link TIME_PREPOSITIONS time preposition}. */
const PERIOD_WORDS: ReadonlySet<string> = new Set(
  ['january', 'february', 'march', 'april', 'june', 'july', 'august', 'september', 'october', 'november', 'december'].concat([
    'jan',
    'feb',
    'mar',
    'apr',
    'jun',
    'jul',
    'aug',
    'sep',
    'sept',
    'oct',
    'nov',
    'dec',
    'last',
    'previous',
    'q1',
    'q2',
    'q3',
    'q4',
    'h1',
    'h2',
  ]),
);
const FISCAL_YEAR = /^fy\d{2,4}$/;
/** Prepositions of time: a period word after one of them schedules the action ("in March") rather than naming its object. */
const TIME_PREPOSITIONS: ReadonlySet<string> = new Set(['in', 'on', 'at', 'by', 'from', 'to', 'for', 'within', 'during', 'through', 'since', 'starting', 'till', 'until']);
/** Delimiters a plain request may contain: white space, list and sentence punctuation, currency signs, brackets around a name. */
const PLAIN_MARKS: ReadonlySet<string> = new Set([' ', ',', '.', '!', ':', ';', '$', '€', '£', '¥', "'", '(', ')', '"', '“', '”']);

/** Question marks of every script and every invisible format character (Unicode Cf, soft hyphen included). */
const QUESTION_OR_HIDDEN = /[?\u037e\u055e\u061f\u1367\u2047-\u2049\u203d\u2e2e\u2753-\u2755\ufe16\ufe56\uff1f\p{Cf}]/u;
/** A letter of another script than Latin, or a combining mark: look-alikes ("nоt" with a Cyrillic о) and other languages are not read. */
const NOT_LATIN = /[\p{M}]|(?![\p{Script=Latin}])\p{L}/u;
/** Characters written for an apostrophe ("don´t", "donʼt", "don‘t", "don`t"), read as `'`. */
const APOSTROPHES = /[\u2018\u2019\u201b\u02bc\u02b9\u00b4\u0060\uff07]/g;
const NUMBER = /^\d[\d,.]*$/;
const DASHES = /^[-\u2010-\u2015]+$/;

/** Why a turn is not a plain request. */
export type NotPlainReason = 'question_or_hidden' | 'script' | 'negation' | 'hedge' | 'numbers' | 'not_imperative' | 'unknown_word';

/** How the gate reads the user's turn for one action type: a plain request (with the intent phrase it uses), or not and why. */
export type TurnReading = { readonly plain: true; readonly phrase: string } | { readonly plain: false; readonly reason: NotPlainReason; readonly word?: string };

/** The words of a turn after folding (NFKC, apostrophes, case), with whether each is a run. */
export function turnTokens(turn: string): { token: string; run: boolean }[] {
  const out: { token: string; run: boolean }[] = [];
  const folded = normalizeText(turn.replace(APOSTROPHES, "'").normalize('NFKC')).replace(APOSTROPHES, "'");
  tokenize(folded, (token, run) => out.push({ token, run }));
  return out;
}

/**
 * The grounding of a request: the words of the given texts (the action's values, the texts and
 * claims of trusted records), each run whole and split at its inner punctuation
 * (`payroll@tessaline.example` grounds `payroll`, `tessaline`, `example`).
 *
 * @param texts - raw texts.
 * @returns the set of normalised words.
 */
export function groundingOf(texts: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const text of texts)
    addGrounding(
      out,
      turnTokens(text)
        .filter((t) => t.run)
        .map((t) => t.token),
    );
  return out;
}

/** Add normalised words (a record's prepared vocabulary) to a grounding: each whole and split at its inner punctuation. */
export function addGrounding(out: Set<string>, words: Iterable<string>): void {
  for (const token of words) {
    out.add(token);
    if (/[^\p{L}\p{N}]/u.test(token)) for (const part of token.split(/[^\p{L}\p{N}]+/u)) if (part !== '') out.add(part);
  }
}

/** Is `w` grounded: itself, its possessive stem, or its singular/plural form. */
function known(w: string, words: ReadonlySet<string>): boolean {
  const stem = w.endsWith("'s") ? w.slice(0, -2) : w.endsWith("'") ? w.slice(0, -1) : w;
  return words.has(stem) || (stem.endsWith('s') && words.has(stem.slice(0, -1))) || words.has(`${stem}s`);
}

/** The first intent phrase (as the policy writes it) whose words start at `words[i]`, or null. */
function phraseAt(words: readonly string[], i: number, phrases: readonly { phrase: string; words: string[] }[]): { phrase: string; length: number } | null {
  for (const p of phrases) if (p.words.length > 0 && p.words.every((w, j) => words[i + j] === w)) return { phrase: p.phrase, length: p.words.length };
  return null;
}

/**
 * Read the user's turn for one action type (docs/design.md § Claims and intent).
 *
 * @param turn - the user's current turn (raw text).
 * @param phrases - the policy's intent phrases for the action type (`actions.<type>.intent`).
 * @param grounding - {@link groundingOf} the action's values and the trusted records' texts and claims.
 * @returns `{plain: true, phrase}` for a plain request of the action type; otherwise
 *   `{plain: false, reason, word?}` — the first rule the turn breaks, and the word that broke it.
 */
export function readRequest(turn: string, phrases: readonly string[], grounding: ReadonlySet<string>): TurnReading {
  if (QUESTION_OR_HIDDEN.test(turn)) return { plain: false, reason: 'question_or_hidden' };
  if (NOT_LATIN.test(turn)) return { plain: false, reason: 'script' };
  const tokens = turnTokens(turn);
  // a dash is a run character (`checkout-service`); standing alone it is punctuation
  const isMark = (t: { token: string; run: boolean }): boolean => !t.run || DASHES.test(t.token);
  const words = tokens.filter((t) => !isMark(t)).map((t) => t.token);
  const mark = tokens.find((t) => isMark(t) && !PLAIN_MARKS.has(t.token) && !DASHES.test(t.token));
  if (mark) return { plain: false, reason: 'unknown_word', word: mark.token };
  for (const w of words) {
    if (NEGATORS.has(w) || w.endsWith("n't")) return { plain: false, reason: 'negation', word: w };
    if (HEDGES.has(w)) return { plain: false, reason: 'hedge', word: w };
  }
  if (words.filter((w) => NUMBER.test(w)).length > 1) return { plain: false, reason: 'numbers' };
  const compiled = phrases.map((phrase) => ({
    phrase,
    words: turnTokens(phrase)
      .filter((t) => t.run)
      .map((t) => t.token),
  }));
  let i = 0;
  while (i < words.length && LEAD_WORDS.has(words[i] as string)) i++;
  const opening = phraseAt(words, i, compiled);
  let found = opening;
  if (opening === null && !GENERIC_VERBS.has(words[i] ?? '')) return { plain: false, reason: 'not_imperative', ...(words[i] !== undefined ? { word: words[i] } : {}) };
  const verbs = new Set(compiled.flatMap((p) => p.words));
  for (let j = opening === null ? i + 1 : i + opening.length; j < words.length; j++) {
    const w = words[j] as string;
    found ??= phraseAt(words, j, compiled);
    if (FUNCTION_WORDS.has(w) || NOUNS.has(w) || verbs.has(w) || NUMBER.test(w) || known(w, grounding)) continue;
    if (periodBeforeNoun(words, j)) continue;
    return { plain: false, reason: 'unknown_word', word: w };
  }
  return found === null ? { plain: false, reason: 'not_imperative' } : { plain: true, phrase: found.phrase };
}

/**
 * A period word at `words[j]` names an object ("the March invoice", "this month's rent") when it
 * is the possessive or adjective of a following word that is no number, and it does not follow a
 * time preposition ("in March", "by Q3").
 */
function periodBeforeNoun(words: readonly string[], j: number): boolean {
  const w = words[j] as string;
  const next = words[j + 1];
  const period = PERIOD_WORDS.has(w) || FISCAL_YEAR.test(w) || /^(month|week|year|quarter)'s$/.test(w);
  return period && next !== undefined && !NUMBER.test(next) && !TIME_PREPOSITIONS.has(words[j - 1] ?? '');
}
