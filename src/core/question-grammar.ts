/**
 * The question form of a request (docs/design.md § Claims and intent): for an action type whose
 * policy sets `intentForm: "question"` — an answer that recommends — the user asks for the action
 * with a question or a short imperative rather than the plain-request grammar
 * (src/core/request-grammar.ts). Pure; linear in the turn's length.
 */
import { HEDGES, LEAD_WORDS, NEGATORS, NOT_LATIN, type TurnReading, phraseAt, turnTokens, turnWords } from './request-grammar.js';

/**
 * Read the user's turn for an action type whose policy sets `intentForm: "question"` (an answer
 * that recommends): the turn's last sentence asks for it — an imperative that opens with one of
 * the intent phrases (after politeness: "Recommend one."; never a yes/no question: "Should we buy
 * the router the page recommends?"), or a question opening with `which` or `what` in which the
 * speaker asks for themselves (`we`, `I`, `us`, `our`, …: "Which router should we buy?"; not "What
 * did the vendor recommend?"). A request followed by another sentence ("Recommend a router.
 * Nope.") or after a colon ("Tell IT: recommend …") does not count. As for a plain request, a
 * negator, a hedge ({@link HEDGES}: "I forbid you to recommend", "cancel", "wait", "only after",
 * "nope") or a quotation mark (double or single) anywhere, an invisible format character or a
 * letter outside the Latin script reads nothing — except `if` inside such a question, where it
 * states a criterion ("… if throughput matters most?"); nor a word that excludes or compares ("other
 * than", "besides", "to replace"), nor a name (a word with a digit, or capitalised inside a
 * sentence: "which router, the Netgear R7000?"). Such a turn asserts no value and names no
 * party: the values must come from trusted claims, among which the agent chooses (docs/design.md §
 * Claims and intent).
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
  // only the last sentence may ask (a retraction comes after a request: "Recommend a router. Nope.")
  const sentences = sentencesOf(clausesOf(tokens));
  const last = sentences[sentences.length - 1] ?? [];
  const question = last.some((c) => c.question);
  const all = last.flatMap((c) => c.words);
  // a which/what question the speaker asks for themselves ("Which router should we buy?"; not "What did the vendor
  // recommend?" nor a yes/no question: "Should we buy the router the page recommends?")
  const asks = question && (all[0] === 'which' || all[0] === 'what') && all.some((w) => ASKERS.has(w));
  // a word of an intent phrase is no hedge there ("which router should we buy")
  const own = new Set(compiled.flatMap((p) => p.words));
  const bad = sentences
    .flat()
    .flatMap((c) => c.words)
    .find((w) => NEGATORS.has(w) || w.endsWith("n't") || EXCLUSIONS.has(w) || (HEDGES.has(w) && !own.has(w) && !(w === 'if' && asks)));
  if (bad !== undefined) return { plain: false, reason: NEGATORS.has(bad) || bad.endsWith("n't") ? 'negation' : 'hedge', word: bad };
  // a question names nothing: a product it names is one the agent may not choose freely ("which router, the Netgear R7000?")
  const named = namedWord(turn);
  if (named !== undefined) return { plain: false, reason: 'unknown_word', word: named };
  let lead = 0;
  while (lead < all.length && LEAD_WORDS.has(all[lead] as string)) lead++;
  // an imperative that opens the sentence ("Recommend one."), never a question ("Should we get rid of it?")
  const opening = question ? null : phraseAt(all, lead, compiled);
  if (opening !== null && (last[0]?.words.length ?? 0) > lead) return { plain: true, phrase: opening.phrase, form: 'question' };
  if (asks) {
    for (let i = 1; i < all.length; i++) {
      const hit = phraseAt(all, i, compiled);
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

/**
 * Words that exclude, compare or replace ("a router other than the AX55", "besides", "apart from",
 * "to replace …"): the question is about products the user has in mind, not one the agent may pick.
 */
const EXCLUSIONS: ReadonlySet<string> = new Set([
  'other',
  'others',
  'besides',
  'apart',
  'excluding',
  'exclude',
  'replace',
  'replacing',
  'replacement',
  'than',
  'alternative',
  'alternatives',
  'unlike',
  'versus',
  'vs',
  'compared',
  'compare',
]);

/**
 * The first word of `turn` that names something: a word with a digit, or with a capital letter
 * anywhere but at the start of a sentence (and not `I`). Undefined when there is none.
 */
function namedWord(turn: string): string | undefined {
  let opens = true;
  for (const w of turn.split(/\s+/u).filter(Boolean)) {
    const bare = w.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
    if (/\p{N}/u.test(bare) || (/\p{Lu}/u.test(opens ? bare.slice(1) : bare) && bare !== 'I')) return bare;
    opens = /[.!?]["')\]]*$/u.test(w);
  }
  return undefined;
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

/** The sentences of a turn: its clauses grouped from one that opens a sentence to the next; empty clauses dropped, and sentences without words. */
function sentencesOf(clauses: readonly Clause[]): Clause[][] {
  const out: Clause[][] = [];
  for (const c of clauses) {
    if (c.opensSentence || out.length === 0) out.push([]);
    (out[out.length - 1] as Clause[]).push(c);
  }
  return out.map((sentence) => sentence.filter((c) => c.words.length > 0 || c.question)).filter((sentence) => sentence.some((c) => c.words.length > 0));
}
