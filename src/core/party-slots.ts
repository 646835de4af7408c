/**
 * Where a plain request names the party its action goes to (docs/design.md § Claims and intent):
 * the *party slots* of the turn, whether a name standing at a slot's start names the party or only
 * describes something else ("the Bob report"), and whether two names are one party. Words only —
 * which claims the names are is src/core/party-naming.ts. Pure; imports only from src/core.
 */
import { FUNCTION_WORDS, NOUNS, NUMBER, isPeriodWord, isTitle, phraseSpan, termIndices, turnTokens, words } from './request-grammar.js';

/** Words a party's name may follow at the start of a slot; after one of them the name is part of a noun phrase. */
const DETERMINERS: ReadonlySet<string> = words('the a an our my their its this latest current open outstanding usual new');
/**
 * Possessives that refer back to a party already named ("pay the Globex invoice to their
 * account"). Not `his` or `her`: a company is neither, and `her` also names someone else ("refund
 * her the Acme deposit"): at a slot's start they name a party no claim is, so the turn names none.
 */
const BACK_REFERENCES: ReadonlySet<string> = words('their its');
/** Prepositions that give an action its destination: "into our account", "via Escrow" are as much a destination as "to". */
const DESTINATION_PREPOSITIONS: ReadonlySet<string> = words('to into onto via through');
/** … and for an action that sends data or grants access, "share the report with Finance", "access for Priya". */
const RECIPIENT_PREPOSITIONS: ReadonlySet<string> = words('with for');
/** Words of the speaker: "to our account", "to me" is no party's destination but ours. */
const FIRST_PERSON: ReadonlySet<string> = words('our my me us ours mine');

/**
 * Nouns of what a party is owed, holds with us or is ("the Acme invoice", "Acme's March bill",
 * "the Harbor Street office"): a name before one of them names the party. Before any other noun
 * ("the Bob report", "Bob's file") the name only describes the object: its destination is not named.
 * Not `subscription`, `plan` or `order`: "Bob's subscription" is Bob's as a customer, not a vendor.
 */
export const OWED: ReadonlySet<string> = words('invoice invoices bill bills payment payments rent fee fees deposit amount balance total account accounts office');

/** Debts a `for` names the creditor of: "the rent for the Harbor Street office", "the invoice for Acme". */
const DEBTS: ReadonlySet<string> = words('invoice invoices bill bills payment payments rent fee fees deposit balance payroll');

/** One party slot: where it starts in {@link TurnParties.words}, what opens it, and whether a determiner precedes the name. */
export interface PartySlot {
  readonly start: number;
  /** `object`: right after the intent phrase; `to`: right after `to`, `into`, `onto`, `via` or `through`; `for`: right after a debt's `for`. */
  readonly kind: 'object' | 'to' | 'for';
  /** a determiner was skipped ("the Acme invoice"): a name before a noun is then a modifier. */
  readonly determined: boolean;
  /** a possessive referring back to a party was skipped ("to their current account"). */
  readonly backReference: boolean;
  /** the slot speaks of the speaker ("to our account", "to me"). */
  readonly firstPerson: boolean;
  /** where a title before the name stands ("for contractor Dana Web"): a word no claim need account for. */
  readonly title?: number;
}

/** A word that may begin a name: not a function word, business noun, period word, number or determiner. */
const mayName = (w: string): boolean => !(FUNCTION_WORDS.has(w) || NOUNS.has(w) || isPeriodWord(w) || NUMBER.test(w) || DETERMINERS.has(w) || w === "'s");

/** A plain request read for its party: its words (each possessive `'s` its own word) and its slots. */
export interface TurnParties {
  readonly words: readonly string[];
  /**
   * nouns of places of the action's own kind ("to production", "to the docs repository" for a
   * deployment or a grant): a `to` slot whose first noun is one names a place, not another party.
   * Empty for an action that moves money: its destination is always a party.
   */
  readonly places: ReadonlySet<string>;
  /** the words of a purchase's term ("for one year": request-grammar.ts `termIndices`), accounted for without a claim. */
  readonly terms: ReadonlySet<number>;
  /** the index of the first word after the opening intent phrase. */
  readonly from: number;
  /** the words of the intent phrase the turn opens with. */
  readonly phrase: ReadonlySet<string>;
  readonly slots: readonly PartySlot[];
}

/**
 * The party slots of a plain request: the words right after its intent phrase — unless `for`
 * follows it ("pay for Acme" buys something; it names no payee) — right after each `to` (and
 * `into`, `onto`, `via`, `through`), and
 * right after a `for` that follows a debt ("the rent for the Harbor Street office"; "buy a laptop
 * for Bob" does not make Bob the payee); each with determiners and period words skipped and
 * possessives split off ("Halvorsen Freight's invoice" → halvorsen freight 's invoice).
 *
 * @param turn - the user's turn (a plain request).
 * @param phrase - the intent phrase it opens with (`readRequest`'s `phrase`).
 * @param reading - `places`: nouns of places of the action's own kind ({@link TurnParties.places});
 *   `recipients`: the action (data, a grant) also takes its recipient after `with` and `for`
 *   ("share the report with Finance", "access for Priya").
 * @returns the turn's words and its slots, in order.
 */
export function partySlots(turn: string, phrase: string, reading: { readonly places?: ReadonlySet<string>; readonly recipients?: boolean; readonly movesMoney?: boolean } = {}): TurnParties {
  const places = reading.places ?? new Set<string>();
  const ws = slotWords(turn);
  const p = slotWords(phrase);
  const starts: { at: number; kind: PartySlot['kind'] }[] = [];
  // the phrase may have determiners and period words between its words ("run this month's payroll")
  const spans = ws.map((_, i) => phraseSpan(ws, i, p));
  spans.forEach((n, i) => {
    if (n !== null && ws[i + n] !== 'for') starts.push({ at: i + n, kind: 'object' });
  });
  ws.forEach((w, i) => {
    if (DESTINATION_PREPOSITIONS.has(w) || (reading.recipients === true && RECIPIENT_PREPOSITIONS.has(w) && !purpose(ws, i))) starts.push({ at: i + 1, kind: 'to' });
    else if (w === 'for' && DEBTS.has(ws[i - 1] ?? '')) starts.push({ at: i + 1, kind: 'for' });
  });
  const first = spans.findIndex((n) => n !== null);
  const slots = starts.map(({ at, kind }): PartySlot => {
    let i = at;
    let determined = false;
    let backReference = false;
    let firstPerson = FIRST_PERSON.has(ws[at] ?? '');
    let title: number | undefined;
    for (; i < ws.length; i++) {
      const w = ws[i] as string;
      // a title before the name ("for contractor Dana Web") is read through
      if (isTitle(ws, i, mayName)) {
        title = i;
        continue;
      }
      if (DETERMINERS.has(w)) determined = true;
      else if (!(isPeriodWord(w) || w === "'s")) break;
      if (BACK_REFERENCES.has(w)) backReference = true;
      if (FIRST_PERSON.has(w)) firstPerson = true;
    }
    return { start: i, kind, determined, backReference, firstPerson, ...(title !== undefined ? { title } : {}) };
  });
  return {
    words: ws,
    places,
    terms: reading.movesMoney === true ? termIndices(ws) : new Set(),
    phrase: new Set(p),
    from: first < 0 ? ws.length : first + (spans[first] as number),
    slots: slots.sort((a, b) => a.start - b.start),
  };
}

/**
 * Is the `for` at `ws[i]` a purpose rather than a recipient: a determiner, then only business nouns
 * to the end of its phrase ("email the quote for the brochure run"; not "access for Priya", "the
 * report for the Acme team")?
 */
function purpose(ws: readonly string[], i: number): boolean {
  if (ws[i] !== 'for' || !DETERMINERS.has(ws[i + 1] ?? '')) return false;
  let j = i + 2;
  while (j < ws.length && !PHRASE_ENDS.has(ws[j] as string)) {
    if (!NOUNS.has(ws[j] as string)) return false;
    j++;
  }
  return j > i + 2;
}

/** The words of a text as slots read them: normalised, each possessive as its own word `'s` ("Acme's mallory" → acme 's mallory). */
export function slotWords(text: string): string[] {
  return turnTokens(text)
    .filter((t) => t.run)
    .flatMap((t) => (/'s$/.test(t.token) ? [t.token.slice(0, -2), "'s"] : [t.token.replace(/'$/, '')]));
}

/**
 * Does a name that ends before `words[end]` name a party, or is it part of something longer? It
 * names one when the next word cannot continue it — the end of the turn, a function word, a
 * number, a period word, a business noun, or the start of another claimed name (`startsName`) —
 * and, after a determiner or as a possessive, only before a noun of what is owed ({@link OWED}):
 * "the Acme invoice" and "Acme's March bill" name Acme; "Acme Holdings" (a longer name), "the Bob
 * report" and "Bob's file" (a description) do not name Acme or Bob.
 *
 * @param ws - the turn's words ({@link TurnParties.words}).
 * @param end - the index right after the name.
 * @param determined - the name follows a determiner ({@link PartySlot.determined}).
 * @param startsName - whether another claimed name starts at an index.
 * @param beneficiary - the name is the first object of an action that moves money: followed by a
 *   second object ("buy Bob a laptop", "order Bob a new plan"), it names who benefits, not who is
 *   paid — unless that object is a debt ("pay Bob the invoice").
 * @param describes - the action moves no money: after a determiner or as a possessive a name only
 *   describes the object ("email the Acme invoice", "forward Acme's invoice" name no recipient).
 */
export function nameEnds(ws: readonly string[], end: number, determined: boolean, startsName: (at: number) => boolean, beneficiary = false, describes = false): boolean {
  const next = ws[end];
  if (next === undefined) return true;
  if (describes && (next === "'s" || (determined && (NOUNS.has(next) || isPeriodWord(next))))) return false;
  if (beneficiary && DETERMINERS.has(next)) {
    let i = end;
    while (i < ws.length && (DETERMINERS.has(ws[i] as string) || isPeriodWord(ws[i] as string))) i++;
    return DEBTS.has(ws[i] ?? '');
  }
  if (next === "'s") return ownsOwed(ws, end + 1);
  if (determined && (NOUNS.has(next) || isPeriodWord(next))) return ownsOwed(ws, end);
  return FUNCTION_WORDS.has(next) || NUMBER.test(next) || isPeriodWord(next) || NOUNS.has(next) || startsName(end);
}

/** After period words, a noun of what is owed. */
function ownsOwed(ws: readonly string[], at: number): boolean {
  let i = at;
  while (i < ws.length && isPeriodWord(ws[i] as string)) i++;
  return OWED.has(ws[i] ?? '');
}

/**
 * Are two names (as words) one party? Yes when they are equal, or the longer is the shorter
 * followed only by period words and business nouns ("acme march invoice" is Acme's) — not
 * "acme holdings", another party.
 */
export function sameParty(a: readonly string[], b: readonly string[]): boolean {
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  if (!short.every((w, i) => long[i] === w)) return false;
  return long.slice(short.length).every((w) => isPeriodWord(w) || NOUNS.has(w) || w === "'s");
}

/** Words that end a slot's phrase: prepositions and conjunctions ("checkout-service with the production build"). */
export const PHRASE_ENDS: ReadonlySet<string> = words('to for of with in into onto via through from by at on and');

/**
 * The phrase a slot opens: its words from its start to the next preposition or the end ("to
 * production", "checkout-service 4.8.2" of "deploy checkout-service 4.8.2 to production", "acme
 * the invoice" of "email Acme the invoice").
 */
export function slotPhrase(t: TurnParties, slot: PartySlot): readonly string[] {
  let end = slot.start;
  while (end < t.words.length && !PHRASE_ENDS.has(t.words[end] as string)) end++;
  return t.words.slice(slot.start, end);
}

/** Environments: a place for a deployment; for any other action a qualifier its claims do not capture ("set the Webhook for staging"). */
export const ENVIRONMENTS: ReadonlySet<string> = words('production staging prod dev development test sandbox canary preview');

/**
 * Is the word at `i` accounted for without a claim: a function word, a business noun, a period word,
 * a number, a possessive or a word of the intent phrase — and not an environment the action does
 * not take as a place? Any other word (a role the turn asks for, "read-only", a qualifier) says
 * something the named party's claims do not, so the turn names no party
 * (src/core/party-naming.ts).
 */
export function plainWord(t: TurnParties, i: number): boolean {
  const w = t.words[i] as string;
  if (ENVIRONMENTS.has(w)) return t.places.has(w);
  if (t.slots.some((s) => s.title === i) || t.terms.has(i)) return true;
  return FUNCTION_WORDS.has(w) || NOUNS.has(w) || isPeriodWord(w) || NUMBER.test(w) || w === "'s" || t.phrase.has(w) || DETERMINERS.has(w);
}
