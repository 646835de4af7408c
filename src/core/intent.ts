/**
 * Intent provenance (docs/design.md § Claims and intent): whether the user's current turn requests
 * an action type — one of the policy's intent phrases for it, matched on word boundaries with the
 * identifier normalisation of src/core/match.ts, and not negated ("don't pay", "do not pay",
 * "never send") — and which records make a standing instruction for the action (a claim of field
 * `intent` whose value is the action type and whose subject is one of the action's values). Pure.
 */
import { INTENT_FIELD, claimText } from './claims.js';
import { normalizeText, tokenize } from './match.js';
import type { Claim } from './types.js';

/**
 * Words that negate a request when one of them is among the {@link NEGATION_WINDOW} words before
 * the intent phrase in the same clause.
 */
export const NEGATORS: ReadonlySet<string> = new Set([
  'not',
  'never',
  'no',
  "don't",
  'dont',
  "doesn't",
  "didn't",
  "won't",
  "wouldn't",
  "shouldn't",
  "mustn't",
  'cannot',
  "can't",
  'stop',
  'avoid',
  'without',
  'nobody',
  'neither',
  'nor',
]);
/**
 * Words that make a turn more than a plain request — doubt, a condition, a delay, a warning, an
 * exception. A turn with one of them anywhere (or any negator, or a `?`) requests nothing and
 * asserts no value for the waiver ({@link isPlainRequest}): "pay Acme but check whether
 * ACCT-X is legit", "don't, under any circumstances, pay", "hold off: pay next month".
 */
export const HEDGES: ReadonlySet<string> = new Set([
  'but',
  'if',
  'unless',
  'until',
  'whether',
  'check',
  'verify',
  'confirm',
  'legit',
  'legitimate',
  'real',
  'really',
  'phishing',
  'scam',
  'fraud',
  'fraudulent',
  'suspicious',
  'fake',
  'ignore',
  'refuse',
  'reject',
  'wait',
  'hold',
  'later',
  'before',
  'after',
  'except',
  'instead',
  'rather',
  'maybe',
  'perhaps',
  'claiming',
  'claims',
  'claimed',
  'asked',
  'says',
  'said',
  'emailed',
  'wrote',
  // conditions and timing: the waiver is for an action wanted now, unconditionally
  'when',
  'once',
  'next',
  'tomorrow',
  'tonight',
  'soon',
  'week',
  'month',
  'year',
  'due',
  'provided',
  'assuming',
  'should',
  'case',
  'otherwise',
  'remind',
  'schedule',
  'approves',
  'approved',
  'deliver',
  'delivers',
  'delivered',
  'delivery',
  'arrive',
  'arrives',
]);

/**
 * Is the user's turn a plain request — no `?`, no negator, no hedge anywhere in it
 * ({@link NEGATORS}, {@link HEDGES})? Only a plain request can request an action or assert a
 * value for the waiver (docs/design.md § Claims and intent). Fail-closed on purpose: a turn that
 * discusses, doubts, delays or forbids anything is left to the full rule and a confirmation.
 */
export function isPlainRequest(turn: string): boolean {
  // any question mark of any script, and any invisible format character, before tokenizing can hide them
  if (QUESTION_OR_HIDDEN.test(turn) || NOT_LATIN.test(turn)) return false;
  let plain = true;
  const numbers = new Set<string>();
  const folded = normalizeText(turn.replace(APOSTROPHES, "'").normalize('NFKC')).replace(APOSTROPHES, "'");
  tokenize(folded, (t, run) => {
    if (run && (NEGATORS.has(t) || HEDGES.has(t) || t.endsWith("n't"))) plain = false;
    if (run && /^\d[\d,.]*$/.test(t)) numbers.add(t);
  });
  // one number at most: "pay $1200; $9000 is wrong" must not let 9000 through
  return plain && numbers.size <= 1;
}

/** Question marks of every script and every invisible format character (Unicode Cf, soft hyphen included). */
const QUESTION_OR_HIDDEN = /[?\u037e\u055e\u061f\u1367\u2047-\u2049\u203d\u2e2e\u2753-\u2755\ufe16\ufe56\uff1f\p{Cf}]/u;
/** A letter of another script than Latin, or a combining mark: look-alikes ("nоt" with a Cyrillic о) and other languages are not read. */
const NOT_LATIN = /[\p{M}]|(?![\p{Script=Latin}])\p{L}/u;
/** Characters written for an apostrophe ("don´t", "donʼt", "don‘t", "don`t"), read as `'`. */
const APOSTROPHES = /[\u2018\u2019\u201b\u02bc\u02b9\u00b4\u0060\uff07]/g;

/** How many words before an intent phrase are searched for a negator. */
export const NEGATION_WINDOW = 3;
/** Characters that end a clause: a negation never reaches across them. */
const CLAUSE_END = new Set(['.', ',', ';', ':', '!', '?', '(', ')', '[', ']', '"', '“', '”']);

/** The clauses of a text, each as its words (identifier runs, normalised; `’` read as `'`). */
function clauses(text: string): string[][] {
  const out: string[][] = [[]];
  tokenize(normalizeText(text).replace(/’/g, "'"), (t, run) => {
    if (run) (out[out.length - 1] as string[]).push(t);
    else if (CLAUSE_END.has(t)) out.push([]);
  });
  return out.filter((c) => c.length > 0);
}

/** The words of an intent phrase (null when it has none). */
function phraseWords(phrase: string): string[] | null {
  const words = clauses(phrase).flat();
  return words.length > 0 ? words : null;
}

/**
 * The first of `phrases` the user's turn requests: it occurs as whole words in one clause of the
 * turn, and none of the {@link NEGATION_WINDOW} words before it in that clause is a
 * {@link NEGATORS negator}. Linear in the turn's length times the phrases' total length (both
 * bounded: a turn by the API's text limit, phrases by the policy schema).
 *
 * @param turn - the user's current turn (raw text).
 * @param phrases - the policy's intent phrases for the action type (`actions.<type>.intent`).
 * @returns the phrase as the policy writes it, or null when the turn requests none (always null
 *   for a turn that is not a {@link isPlainRequest plain request}).
 */
export function requestedPhrase(turn: string, phrases: readonly string[]): string | null {
  if (!isPlainRequest(turn)) return null;
  const cs = clauses(turn);
  for (const phrase of phrases) {
    const want = phraseWords(phrase);
    if (want === null) continue;
    for (const words of cs) {
      for (let i = 0; i + want.length <= words.length; i++) {
        if (!want.every((w, j) => words[i + j] === w)) continue;
        const before = words.slice(Math.max(0, i - NEGATION_WINDOW), i);
        if (!before.some((w) => NEGATORS.has(w))) return phrase;
      }
    }
  }
  return null;
}

/**
 * The records that make a standing instruction for `actionType` on one of `values` (the action's
 * argument values and resource): a claim `{subject, field: "intent", value}` with `value` equal to
 * the action type and `subject` equal to one of the values (identifier normalisation). Whether
 * such a record is trusted is the gate's to decide (its action authority).
 *
 * @returns the ids, sorted.
 */
export function standingInstructions(actionType: string, values: readonly string[], records: ReadonlyArray<{ id: string; claims?: readonly Claim[] | undefined }>): string[] {
  const type = claimText(actionType);
  const subjects = new Set(values.map(claimText));
  const out: string[] = [];
  for (const r of records) {
    if ((r.claims ?? []).some((c) => c.field === INTENT_FIELD && claimText(c.value) === type && subjects.has(claimText(c.subject)))) out.push(r.id);
  }
  return out.sort();
}

/**
 * The clauses of the user's turn that assert rather than ask or forbid: a clause (cut at the
 * same clause ends as intent phrases) that is not ended by `?` and has no
 * {@link NEGATORS negator} among its words, as normalised text. A value the turn names only in a
 * question or beside a negation ("is ACCT-X really Acme?", "pay Acme, never ACCT-X") is not
 * asserted by it, so it cannot waive the session context (docs/design.md § Claims and intent).
 * Conservative on purpose: a negator anywhere in the clause withdraws it.
 *
 * @param turn - the user's current turn (raw text).
 * @returns the asserting clauses' texts, in order (empty when none, and for a turn that is not
 *   a {@link isPlainRequest plain request}).
 */
export function assertedClauses(turn: string): string[] {
  const out: string[] = [];
  if (!isPlainRequest(turn)) return out;
  let text = '';
  let words: string[] = [];
  const close = (question: boolean): void => {
    if (words.length > 0 && !question && !words.some((w) => NEGATORS.has(w))) out.push(text);
    text = '';
    words = [];
  };
  tokenize(normalizeText(turn).replace(/’/g, "'"), (t, run) => {
    if (run) words.push(t);
    if (!run && CLAUSE_END.has(t)) close(t === '?');
    else text += t;
  });
  close(false);
  return out;
}
