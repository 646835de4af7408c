/**
 * Intent provenance (docs/design.md § Claims and intent): which records make a standing
 * instruction for an action (a claim of field `intent` whose value is the action type and whose
 * subject is one of the action's values), and which clauses of a plain request assert the values
 * they name. Whether the user's turn is a plain request of the action type at all is
 * src/core/request-grammar.ts. Pure.
 */
import { INTENT_FIELD, claimText } from './claims.js';
import { normalizeText, tokenize } from './match.js';
import { NEGATORS } from './request-grammar.js';
import type { Claim } from './types.js';

/** Characters that end a clause: a negation never reaches across them. */
const CLAUSE_END = new Set(['.', ',', ';', ':', '!', '?', '(', ')', '[', ']', '"', '“', '”']);

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
 * The values a standing instruction names as the action's party: those of `values` that are the
 * subject of an `intent` claim for `actionType` in one of `records` (the caller passes the trusted
 * ones). A claim whose subject or value is one of them is named by the instruction (core/provenance.ts).
 *
 * @returns the values, normalised (src/core/claims.ts `claimText`).
 */
export function instructedValues(actionType: string, values: readonly string[], records: ReadonlyArray<{ claims?: readonly Claim[] | undefined }>): Set<string> {
  const type = claimText(actionType);
  const wanted = new Set(values.map(claimText));
  const out = new Set<string>();
  for (const r of records) for (const c of r.claims ?? []) if (c.field === INTENT_FIELD && claimText(c.value) === type && wanted.has(claimText(c.subject))) out.add(claimText(c.subject));
  return out;
}

/**
 * The clauses of the user's turn that assert rather than ask or forbid: a clause (cut at `. , ; :
 * ! ?`, brackets and quotes) that is not ended by `?` and has no {@link NEGATORS negator} among its
 * words, as normalised text. A value the turn names only in a question or beside a negation
 * ("is ACCT-X really Acme?", "pay Acme, never ACCT-X") is not asserted by it. The gate asks only
 * for the clauses of a turn that src/core/request-grammar.ts `readRequest` reads as a plain
 * request (docs/design.md § Claims and intent); this is the second, clause-level line.
 *
 * @param turn - the user's current turn (raw text).
 * @returns the asserting clauses' texts, in order (empty when none).
 */
export function assertedClauses(turn: string): string[] {
  const out: string[] = [];
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
