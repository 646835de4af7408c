/**
 * Value-level provenance for the action gate (docs/design.md § Action gate): which candidate
 * records (and the user's turn) supply each argument value of the action, and the dependency
 * facts the gate decides on — every candidate that is declared, read in context, or supplies a
 * value, with why. Synchronous: the facts are loaded before (api/provenance.ts). Part of
 * `authorize` (api/authorize.ts). Imports from src/core and api/ modules below the facade.
 */
import { type FactsBundle, dependencyFacts } from '../core/facts.js';
import type { DependencyFacts } from '../core/gate.js';
import { type Policy, argumentSuppliers, argumentTypes } from '../core/policy.js';
import { assertedClauses, instructedValues } from '../core/intent.js';
import { partySlots } from '../core/party-slots.js';
import type { TurnReading } from '../core/request-grammar.js';
import { valueProvenance } from '../core/provenance.js';
import { MemauthError } from '../core/errors.js';
import type { Action, DependencyWhy, MemoryRecord, ValueProvenance, ValueSuppliers } from '../core/types.js';
import { type ArgumentValue, prepareText, suppliersOf } from '../core/values.js';
import { claimValueEquals } from '../core/claims.js';
import { type Candidates, addWhy } from './authorize-candidates.js';
import { destinationValues, slotReading, trustedNow } from './authorize-intent.js';
import type { Provenance } from './provenance.js';

const EMPTY_BUNDLE: FactsBundle = { records: new Map(), domains: new Map(), corroborations: new Map() };

/** The dependencies of one decision and the provenance of its argument values. */
export interface Dependencies {
  readonly values: ValueProvenance[];
  /** sorted by record id, each with its reasons sorted. */
  readonly facts: DependencyFacts[];
}

/**
 * The values of `action` traced to the usable candidates (active, unexpired, with content) and to
 * `userTurnText`, and the dependency facts: `factsOf` (the candidates' gate facts) with the
 * reasons of `candidates.why` plus `value`. A value the turn contains is asserted by it only when
 * the turn is a plain request of the action (`turn`, api/authorize-intent.ts `turnReading`)
 * and a clause of it asserts the value (core/intent.ts `assertedClauses`).
 */
export function dependencies(
  ctx: { readonly policy: Policy; readonly provenance: Provenance },
  action: Action,
  candidates: Candidates,
  factsOf: ReadonlyMap<string, DependencyFacts>,
  userTurnText: string | undefined,
  turn: TurnReading | undefined,
  now: string,
): Dependencies {
  // a question asks the agent to choose: it asserts no value and names no party
  const plainTurn = turn?.plain === true && turn.form === undefined;
  const { k, minAuthority: floor } = ctx.policy.document.corroboration;
  const why = candidates.why;
  // every dependency is a candidate; anything else would be unknown to the store (metadata_missing)
  const depFactsOf = (id: string): DependencyFacts => factsOf.get(id) ?? dependencyFacts(id, [], EMPTY_BUNDLE, k, floor, now);
  const usable = candidates.list.filter((r: MemoryRecord) => r.content !== null && r.status === 'active' && (r.expiresAt === null || r.expiresAt > now));
  const userText = userTurnText !== undefined ? prepareText(userTurnText) : null;
  const trusted = (id: string): boolean => trustedNow(factsOf, id);
  const values = valueProvenance(
    action,
    argumentTypes(ctx.policy, action.type),
    usable.map((r) => ({ id: r.id, text: ctx.provenance.matchText(r) })),
    userText,
    argumentSuppliers(ctx.policy, action.type),
    usable.filter((r) => r.claims !== undefined),
    // possessives read as names ("Halvorsen Freight's invoice" names Halvorsen Freight)
    userTurnText !== undefined && plainTurn ? assertedClauses(userTurnText).map((c) => prepareText(c.replace(/(\p{L})['’]s\b/gu, '$1'))) : [],
    userTurnText !== undefined && plainTurn && turn !== undefined && turn.plain ? partySlots(userTurnText, turn.phrase, slotReading(ctx.policy, action.type)) : null,
    trusted,
    instructedValues(
      action.type,
      destinationValues(ctx.policy, action),
      usable.filter((r) => r.claims !== undefined && trusted(r.id)),
    ),
  );
  for (const v of values) {
    for (const id of v.recordIds) addWhy(why, id, 'value');
    for (const c of v.claims ?? []) for (const id of c.recordIds) addWhy(why, id, 'value');
  }
  const depIds = [...why.keys()].sort();
  const facts = depIds.map((id): DependencyFacts => ({ ...depFactsOf(id), why: [...(why.get(id) as Set<DependencyWhy>)].sort() }));
  return { values, facts };
}

/**
 * At most this many record references (a record supplying one argument value, counted once per
 * value, claim and operand) are traced into one decision. Each is stored in the decision and its
 * audit entry; without a bound, an action of many values over a session of many records makes a
 * decision of megabytes, which every list of decisions must then load.
 */
export const MAX_VALUE_REFERENCES = 1024;

/**
 * Refuse values whose provenance holds more than {@link MAX_VALUE_REFERENCES} record references
 * (before anything is decided or recorded).
 * @throws MemauthError `INVALID_ARGUMENT` (details: field `action.args`, `references`, `limit`).
 */
export function boundedReferences(values: readonly ValueProvenance[]): void {
  const references = valueReferences(values);
  if (references > MAX_VALUE_REFERENCES)
    throw new MemauthError(
      'INVALID_ARGUMENT',
      `the action's argument values occur in ${references} places in the records it depends on (at most ${MAX_VALUE_REFERENCES} are traced into one decision): pass fewer argument values, or depend on fewer records (a narrower session or dependsOn)`,
      { field: 'action.args', references, limit: MAX_VALUE_REFERENCES },
    );
}

/** The record references the values' provenance holds (see {@link MAX_VALUE_REFERENCES}). */
export function valueReferences(values: readonly ValueProvenance[]): number {
  const of = (v: ValueSuppliers): number => v.recordIds.length;
  let n = 0;
  for (const v of values) {
    n += of(v);
    for (const c of v.claims ?? []) n += c.recordIds.length;
    for (const o of v.computed?.operands ?? []) n += of(o);
  }
  return n;
}

/**
 * The records of `records` that hold one of `destinations`, or might: the value in their text or
 * their source address (`origin.sourceRef`, shown with the record: "mailto:ap@…", its scheme and
 * separators read as spaces) by the identifier matching of values (core/values.ts `suppliersOf`),
 * in a claim's subject or value (exact after NFC and trimming) — and every record whose text is
 * erased (deleted since it was read: what it held can no longer be checked). Used on the
 * decision's candidates below the threshold, expired ones included, for the turn record's net
 * (api/authorize-intent.ts `recordedTurn`).
 *
 * @returns their ids.
 */
export function destinationHolders(provenance: Provenance, records: readonly MemoryRecord[], destinations: readonly ArgumentValue[]): Set<string> {
  const out = new Set<string>();
  if (destinations.length === 0) return out;
  for (const r of records) if (r.content === null) out.add(r.id);
  const withText = records.filter((r) => r.content !== null);
  const texts = [...withText.map((r) => provenance.matchText(r)), ...withText.map((r) => prepareText(r.origin.sourceRef.replace(/[:/?#&=]+/g, ' ')))];
  const { byValue } = suppliersOf(destinations, texts);
  for (const hits of byValue) for (const h of hits) out.add((withText[h % withText.length] as MemoryRecord).id);
  for (const r of withText) if ((r.claims ?? []).some((c) => destinations.some((d) => claimValueEquals(c.value, d.value, null) || claimValueEquals(c.subject, d.value, null)))) out.add(r.id);
  return out;
}
