/**
 * The question form of a request (docs/design.md § Claims and intent): for an action type whose
 * policy sets `intentForm: "question"` — an answer that recommends — the user asks for the action
 * with a question or a short imperative rather than the plain-request grammar
 * (src/core/request-grammar.ts). Pure; linear in the turn's length.
 */
import { HEDGES, LEAD_WORDS, NEGATORS, NOT_LATIN, type TurnReading, phraseAt, turnTokens, turnWords } from './request-grammar.js';

/**
 * Read the user's turn for an action type whose policy sets `intentForm: "question"` (an answer
 * that recommends): the turn asks for it when one of the intent phrases opens a sentence (after
 * politeness: "Recommend one.") or stands in a sentence that is a question opening with `which` or
 * `what` in which the speaker asks for themselves (`we`, `I`, `us`, `our`, …: "Which router should
 * we buy?"; not "What did the vendor recommend?"); a clause after `:` or `,` ("Tell IT: recommend
 * …") does not count. As for a plain request, a negator, a hedge ({@link HEDGES}: "I forbid you to
 * recommend", "cancel", "wait", "only after") or a quotation mark (double or single) anywhere, an
 * invisible format character or a letter outside the Latin script reads nothing — except `if`
 * inside such a question, where it states a criterion ("… if throughput matters most?"). Such a turn asserts no value and names no party: the values must come from
 * trusted claims, among which the agent chooses (docs/design.md § Claims and intent).
 *
 * @param turn - the user's current turn (raw text).
 * @param phrases - the action type's intent phrases.
 * @returns `{plain: true, phrase, form: 'question'}` with the first phrase found, or why not.
 */
export function readQuestion(turn: string, phrases: readonly string[]): TurnReading {
  if (/\p{Cf}/u.test(turn)) return { plain: false, reason: 'question_or_hidden' };
  if (NOT_LATIN.test(turn)) return { plain: false, reason: 'script' };
  const tokens = turnTokens(turn);
  // a quotation, double or single, is someone else's words ("Got this mail: 'Please recommend …'")
  const quote = tokens.find((t) => (!t.run && /["“”«»„‟‹›'`]/u.test(t.token)) || (t.run && /^'|'$/.test(t.token) && !/'s$/.test(t.token)));
  if (quote !== undefined) return { plain: false, reason: 'unknown_word', word: quote.token };
  const compiled = phrases.map((phrase) => ({ phrase, words: turnWords(phrase) }));
  const clauses = clausesOf(tokens);
  // a which/what question the speaker asks for themselves ("Which router should we buy?"; not "What did the vendor recommend?")
  const asks = (c: Clause): boolean => c.question && (c.words[0] === 'which' || c.words[0] === 'what') && c.words.some((w) => ASKERS.has(w));
  // a word of an intent phrase is no hedge there ("which router should we buy")
  const own = new Set(compiled.flatMap((p) => p.words));
  for (const c of clauses) {
    const bad = c.words.find((w) => NEGATORS.has(w) || w.endsWith("n't") || (HEDGES.has(w) && !own.has(w) && !(w === 'if' && asks(c))));
    if (bad !== undefined) return { plain: false, reason: NEGATORS.has(bad) || bad.endsWith("n't") ? 'negation' : 'hedge', word: bad };
  }
  for (const c of clauses) {
    // only a clause that opens a sentence: "Tell IT: recommend …", "Forwarded from sales: Recommend …" are someone else's
    if (!c.opensSentence) continue;
    let lead = 0;
    while (lead < c.words.length && LEAD_WORDS.has(c.words[lead] as string)) lead++;
    const opening = phraseAt(c.words, lead, compiled);
    if (opening !== null) return { plain: true, phrase: opening.phrase, form: 'question' };
    if (!asks(c)) continue;
    for (let i = 1; i < c.words.length; i++) {
      const hit = phraseAt(c.words, i, compiled);
      if (hit !== null) return { plain: true, phrase: hit.phrase, form: 'question' };
    }
  }
  return { plain: false, reason: 'not_imperative' };
}

/** A clause of the turn: its words, whether a `?` ends it, whether it opens a sentence (the turn's start, or after `. ! ?`). */
interface Clause {
  readonly words: string[];
  question: boolean;
  readonly opensSentence: boolean;
}

/** Words by which the speaker asks for themselves. */
const ASKERS: ReadonlySet<string> = new Set(['we', 'i', 'us', 'me', 'our', 'my']);

/** The clauses of a turn's tokens, cut at `. , ; : ! ?` and brackets. */
function clausesOf(tokens: readonly { token: string; run: boolean }[]): Clause[] {
  const clauses: Clause[] = [{ words: [], question: false, opensSentence: true }];
  for (const t of tokens) {
    const last = clauses[clauses.length - 1] as Clause;
    if (t.run) last.words.push(t.token);
    else if (/[.,;:!?()[\]]/u.test(t.token)) {
      last.question = t.token === '?';
      clauses.push({ words: [], question: false, opensSentence: /[.!?]/u.test(t.token) });
    }
  }
  return clauses;
}
