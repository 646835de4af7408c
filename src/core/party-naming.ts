/**
 * Which trusted claims name the party of a proposed action (docs/design.md § Claims and intent):
 * the claims a plain request names in its party slots (src/core/party-slots.ts), or, when it names
 * none, those a trusted standing instruction names. Only a named claim waives the context for a
 * destination. Pure; imports only from src/core.
 */
import { claimText } from './claims.js';
import { GROUPS, NOUNS } from './request-grammar.js';
import { PHRASE_ENDS, type PartySlot, type TurnParties, nameEnds, plainWord, sameParty, slotPhrase, slotWords } from './party-slots.js';
import type { Claim } from './types.js';

/**
 * Claim fields whose subject is a kind of data, not a party: `{salary export, data_recipient,
 * payroll@tessaline.example}` — a data policy's "salary exports are shared only with payroll@…" —
 * says where such data goes. The object a data action sends names one ({@link routedAt}).
 */
export const ROUTING_FIELDS: ReadonlySet<string> = new Set(['data_recipient']);

type Claimed = ReadonlyArray<{ claims?: readonly Claim[] | undefined }>;

/** A claimed name found in the turn: the claims it is, its length in words, and the parties (subjects) it names. */
interface Found {
  readonly claims: readonly Claim[];
  readonly length: number;
  readonly subjects: readonly (readonly string[])[];
}

const NUMBER_ONLY = /^[\d\s,.]+$/;

/**
 * The claims whose subject or value stands whole at `at` (as `ends` judges its end), keeping per
 * field the longest. A bare number names no party (an amount is matched as a value, and two
 * parties may be owed the same sum).
 */
function claimsAt(claims: readonly Claim[], wordsOf: (t: string) => string[], ws: readonly string[], at: number, ends: (end: number) => boolean): Found | null {
  const matched: { c: Claim; n: number }[] = [];
  for (const c of claims) {
    let n = 0;
    for (const t of [c.subject, claimText(c.value)]) {
      if (NUMBER_ONLY.test(t)) continue;
      const cw = wordsOf(t);
      if (cw.length > n && cw.length > 0 && cw.every((w, i) => ws[at + i] === w) && ends(at + cw.length)) n = cw.length;
    }
    if (n > 0) matched.push({ c, n });
  }
  const here = matched.filter((x) => !matched.some((y) => y.c.field === x.c.field && y.n > x.n));
  if (here.length === 0) return null;
  return { claims: here.map((x) => x.c), length: Math.max(...here.map((x) => x.n)), subjects: here.map((x) => wordsOf(x.c.subject)) };
}

/** Is the turn's word `w` the claim's word `c`: equal, or — the last word of a kind of data — its singular or plural ("salary export" is "salary exports"). */
const sameNoun = (w: string | undefined, c: string, last: boolean): boolean => w === c || (last && w !== undefined && (`${w}s` === c || w === `${c}s`));

/**
 * The routing claims ({@link ROUTING_FIELDS}) the object slot of a data action names: the longest
 * whose subject — the kind of data — stands whole at the slot's start and ends its phrase ("send
 * the Q2 salary export to …", "email the salary export."), per field.
 */
function routedAt(routing: readonly Claim[], wordsOf: (t: string) => string[], ws: readonly string[], slot: PartySlot): Found | null {
  if (slot.kind !== 'object') return null;
  const matched: { c: Claim; n: number }[] = [];
  for (const c of routing) {
    const cw = wordsOf(c.subject);
    const end = slot.start + cw.length;
    if (cw.length > 0 && cw.every((w, i) => sameNoun(ws[slot.start + i], w, i === cw.length - 1)) && (ws[end] === undefined || PHRASE_ENDS.has(ws[end] as string))) matched.push({ c, n: cw.length });
  }
  const here = matched.filter((x) => !matched.some((y) => y.c.field === x.c.field && y.n > x.n));
  if (here.length === 0) return null;
  return { claims: here.map((x) => x.c), length: Math.max(...here.map((x) => x.n)), subjects: here.map((x) => wordsOf(x.c.subject)) };
}

/**
 * Does a `to` slot speak of the routed recipient as a group of our own: `our`/`my`, then only words
 * of the routing claims' subjects or values, then a group noun ("to our payroll team" for
 * `payroll@tessaline.example`; not "to our legal team")?
 */
function ownGroupOf(routed: Found, slot: PartySlot, phrase: readonly string[]): boolean {
  if (slot.kind !== 'to' || !slot.firstPerson || !GROUPS.has(phrase[phrase.length - 1] ?? '')) return false;
  const known = new Set(
    routed.claims.flatMap((c) => [
      ...slotWords(c.subject),
      ...claimText(c.value)
        .toLowerCase()
        .split(/[^\p{L}\p{N}]+/u),
    ]),
  );
  const described = phrase.slice(0, -1);
  // at least one word of the claim: "to my team" or "to our new team" says nothing of where the data goes
  return described.length > 0 && described.every((w) => known.has(w));
}

const onePartyWith = (a: Found, b: Found): boolean => a.subjects.some((s) => b.subjects.some((t) => sameParty(s, t)));

/**
 * The claims a plain request names as its party. At each party slot's start, per claim field, the
 * longest claim whose subject or value stands there as a whole name (`nameEnds`). The turn names
 * one party or none: every slot that names a claim, and every other claimed name the turn writes
 * (not a bare number), must be the same party (`sameParty` of their subjects) — "pay Acme for
 * Initrode", "pay the Initrode invoice to Acme", "email Bob's report to Carol" name none — and a
 * `to` slot (or `into`, `via`, …) that names no claim gives the action another destination than
 * the named party, so none is named either ("refund Acme 1200 into our account", "pay the Acme
 * invoice via Escrow") — unless it refers back to the party ("… to their account"), or it names a
 * place of the action's own kind and not ours ("deploy … to production", "… to the docs
 * repository": its first noun is one of `turn.places`; a payment has none, its destination is
 * always a party). Every other word of the turn must be accounted for — by a claim of the named
 * party, or as a function word, business noun, period word, number or word of the intent phrase
 * (src/core/party-slots.ts `plainWord`): "grant read-only access to Bob" names no one, since Bob's
 * claimed role need not be read-only; an environment is a place for a deployment (anywhere: "deploy
 * Checkout in staging" names no resource claim) and a qualifier no claim captures for anything else
 * ("set the Webhook for staging"). A routing claim ({@link ROUTING_FIELDS}) is named only by the
 * object of an action that moves no money ({@link routedAt}), and a `to` slot that speaks of its
 * recipient as a group of ours ("to our payroll team", {@link ownGroupOf}) refers to it.
 *
 * @param claims - the trusted claims of the fields that may supply one of the action's arguments.
 * @param turn - the plain request's words and party slots (src/core/party-slots.ts `partySlots`).
 * @param movesMoney - the action takes an amount: the first object of its intent phrase followed
 *   by a second object is who benefits ("buy Bob a laptop"), not who is paid.
 * @param placeFields - the claim fields that supply the action's resource: when a `to` slot names a
 *   place ("deploy checkout-service to staging"), the turn gives the action's location itself, so
 *   no claim of these fields is named (the party's production cluster is not "staging").
 * @returns the named claims (possibly none).
 */
export function namedByTurn(claims: readonly Claim[], turn: TurnParties, movesMoney = false, placeFields: ReadonlySet<string> = new Set()): Set<Claim> {
  const cache = new Map<string, string[]>();
  const wordsOf = (t: string): string[] => cache.get(t) ?? (cache.set(t, slotWords(t)), cache.get(t) as string[]);
  const ws = turn.words;
  // a kind of data names its routing claims only as the object of an action that moves no money
  const routing = movesMoney ? [] : claims.filter((c) => ROUTING_FIELDS.has(c.field));
  claims = claims.filter((c) => !ROUTING_FIELDS.has(c.field));
  const startsName = (at: number): boolean => claimsAt(claims, wordsOf, ws, at, () => true) !== null;
  const parties: Found[] = [];
  const covered = new Set<number>();
  let placed = false;
  let routedSlot: PartySlot | undefined;
  let routed: Found | null = null;
  for (const slot of turn.slots) if (routed === null && (routed = routedAt(routing, wordsOf, ws, slot)) !== null) routedSlot = slot;
  if (routedSlot !== undefined && routed !== null) {
    parties.push(routed);
    for (let i = routedSlot.start; i < routedSlot.start + routed.length; i++) covered.add(i);
  }
  for (const slot of turn.slots) {
    const found = slot === routedSlot ? null : claimsAt(claims, wordsOf, ws, slot.start, (end) => nameEnds(ws, end, slot.determined, startsName, movesMoney && slot.kind === 'object', !movesMoney));
    if (found === null) {
      const phrase = slotPhrase(turn, slot);
      // "to our payroll team": the routed recipient, described as a group of ours
      if (routed !== null && ownGroupOf(routed, slot, phrase)) {
        for (let i = slot.start; i < slot.start + phrase.length; i++) covered.add(i);
        continue;
      }
      const noun = phrase.find((w) => NOUNS.has(w));
      const place = noun !== undefined && turn.places.has(noun);
      if (slot.kind === 'to' && !slot.backReference && (slot.firstPerson || !place)) return new Set();
      placed ||= slot.kind === 'to' && place;
      continue;
    }
    parties.push(found);
    for (let i = slot.start; i < slot.start + found.length; i++) covered.add(i);
  }
  if (parties.length === 0) return new Set();
  // every other claimed name in the request is the same party
  for (let at = turn.from; at < ws.length; at++) {
    if (covered.has(at)) continue;
    const other = claimsAt(claims, wordsOf, ws, at, () => true);
    if (other === null) {
      // a word no claim of the party accounts for says something its claims do not ("grant read-only access to Bob")
      if (!plainWord(turn, at)) return new Set();
      // a place of the action's kind anywhere gives its location ("deploy Checkout in staging")
      placed ||= turn.places.has(ws[at] as string);
      continue;
    }
    if (!parties.every((p) => onePartyWith(p, other))) return new Set();
    at += other.length - 1;
  }
  if (!parties.every((p) => parties.every((q) => onePartyWith(p, q)))) return new Set();
  return new Set(parties.flatMap((p) => p.claims).filter((c) => !(placed && placeFields.has(c.field))));
}

/**
 * The values, by claim field, of the named claims: a field with more than one ("pay Acme 1200
 * from Globex") names no party at all — the agent would be choosing.
 */
function namedValuesByField(claims: readonly Claim[], named: ReadonlySet<Claim>): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const c of claims) {
    if (!named.has(c)) continue;
    const set = out.get(c.field) ?? new Set<string>();
    set.add(claimText(c.value));
    out.set(c.field, set);
  }
  return out;
}

/**
 * Which trusted claims name the action's party: those the plain request names (one value per
 * field), or — when it names none — those whose subject or value a trusted standing instruction
 * names. Untrusted claims never name, nor make a field ambiguous.
 *
 * @param trustedClaimed - the trusted records that carry claims.
 * @param fields - the claim fields the policy lets supply one of the action's arguments.
 * @param turn - the plain request's party slots, or null (no plain request).
 * @param instructed - the action's values a trusted standing instruction names (core/intent.ts).
 * @param movesMoney - the action takes an amount.
 * @param placeFields - the claim fields that supply the action's resource ({@link namedByTurn}).
 * @returns a predicate over claims, or null when nothing names.
 */
export function partyNaming(
  trustedClaimed: Claimed,
  fields: ReadonlySet<string>,
  turn: TurnParties | null,
  instructed: ReadonlySet<string>,
  movesMoney = false,
  placeFields: ReadonlySet<string> = new Set(),
): ((c: Claim) => boolean) | null {
  const claims = trustedClaimed.flatMap((r) => r.claims ?? []).filter((c) => fields.has(c.field));
  const named = turn !== null ? namedByTurn(claims, turn, movesMoney, placeFields) : null;
  const byField = named !== null ? namedValuesByField(claims, named) : null;
  const bySlot = named === null || byField === null ? null : (c: Claim): boolean => named.has(c) && (byField.get(c.field)?.size ?? 0) === 1;
  const byInstruction = (c: Claim): boolean => instructed.has(claimText(c.subject)) || instructed.has(claimText(c.value));
  if (bySlot === null && instructed.size === 0) return null;
  // the turn wins: a standing instruction names its party only when the plain request names none
  const turnNames = bySlot !== null && claims.some(bySlot);
  return turnNames ? (bySlot as (c: Claim) => boolean) : byInstruction;
}
