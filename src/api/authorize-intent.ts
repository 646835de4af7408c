/**
 * Intent provenance for the action gate (docs/design.md § Claims and intent): where a `high`
 * action's intent came from — the user's turn (a policy intent phrase, not negated), a standing
 * instruction among the decision's dependencies (a claim of field `intent`), or the application
 * (`authorize(…, { intent })`, honoured only for a requester whose own authority is at least
 * `trusted_tool_verified`: the application itself, a user, a system or a tool principal — never
 * an agent or an external token). Part of `authorize` (api/authorize.ts). Imports from src/core
 * and src/store's port.
 */
import { TRUSTED_THRESHOLD, atLeast } from '../core/authority.js';
import type { DependencyFacts } from '../core/gate.js';
import { standingInstructions } from '../core/intent.js';
import { type Policy, intentPhrases } from '../core/policy.js';
import { type TurnReading, addGrounding, groundingOf, readRequest } from '../core/request-grammar.js';
import type { Action, IntentProvenance, IntentSource, MemoryRecord, Tier } from '../core/types.js';
import { actionValues } from '../core/values.js';
import type { StorageReader } from '../store/driver.js';

/**
 * How the gate reads the user's turn for this action (src/core/request-grammar.ts `readRequest`):
 * grounded by the action's own values and by the content and claims of the candidates that are
 * trusted now — verified, current, with action authority >= the threshold — so a plain request may
 * name "Halvorsen Freight" or "the Harbor Street office rent" when a system of record does.
 *
 * @param words - the normalised words of a record's content (memoised by the caller).
 * @returns the reading; computed once per decision and used for intent and for asserted values.
 */
export function turnReading(
  policy: Policy,
  action: Action,
  turn: string,
  candidates: readonly MemoryRecord[],
  factsOf: ReadonlyMap<string, DependencyFacts>,
  words: (r: MemoryRecord) => readonly string[],
  now: string,
): TurnReading {
  const grounding = groundingOf(actionValues(action).map((v) => v.value));
  for (const r of candidates) {
    const f = factsOf.get(r.id);
    if (r.content === null || r.status !== 'active' || (r.expiresAt !== null && r.expiresAt <= now) || !f?.verified || !atLeast(f.actionAuthority, TRUSTED_THRESHOLD)) continue;
    addGrounding(grounding, words(r));
    for (const c of r.claims ?? []) for (const w of groundingOf([c.subject, c.value])) grounding.add(w);
  }
  return readRequest(turn, intentPhrases(policy, action.type), grounding);
}

/** What the intent of one decision is judged from. */
export interface IntentInput {
  readonly policy: Policy;
  readonly tenant: string;
  readonly action: Action;
  readonly tier: Tier;
  /** how the user's turn reads for this action ({@link turnReading}; absent: no turn). */
  readonly turn: TurnReading | undefined;
  /** the action type the application says the user asked for (`authorize`'s `intent`). */
  readonly asserted: string | undefined;
  readonly requester: string | undefined;
  /** the decision's dependencies (records), where a standing instruction may be. */
  readonly dependencies: readonly MemoryRecord[];
  readonly now: string;
}

/**
 * The intent facts of a decision; undefined below `high` (intent matters only there).
 * @returns the sources found (user turn, standing instruction, application), in that order, and
 *   why an asserted intent was not honoured.
 */
export async function intentOf(src: StorageReader, x: IntentInput): Promise<IntentProvenance | undefined> {
  if (x.tier !== 'high') return undefined;
  const sources: IntentSource[] = [];
  if (x.turn?.plain === true) sources.push({ source: 'user_turn', phrase: x.turn.phrase });
  const usable = x.dependencies.filter((r) => r.content !== null && r.status === 'active' && (r.expiresAt === null || r.expiresAt > x.now));
  const standing = standingInstructions(
    x.action.type,
    actionValues(x.action).map((v) => v.value),
    usable,
  );
  if (standing.length > 0) sources.push({ source: 'standing_instruction', recordIds: standing });
  let ignored: IntentProvenance['ignored'];
  if (x.asserted !== undefined) {
    if (x.asserted !== x.action.type) ignored = 'intent_other_action';
    else if (!(await requesterMayAssert(src, x.tenant, x.requester))) ignored = 'requester_not_trusted';
    else sources.push({ source: 'application' });
  }
  const notPlain = x.turn !== undefined && !x.turn.plain ? { notPlain: x.turn.word !== undefined ? { reason: x.turn.reason, word: x.turn.word } : { reason: x.turn.reason } } : {};
  return { sources, ...(ignored !== undefined ? { ignored } : {}), ...notPlain };
}

/** The application (no requester) may assert intent; a principal only when its own ceiling is at least `trusted_tool_verified`. */
async function requesterMayAssert(src: StorageReader, tenant: string, requester: string | undefined): Promise<boolean> {
  if (requester === undefined) return true;
  const p = await src.getPrincipal(tenant, requester);
  return p !== undefined && p !== null && p.kind !== 'external' && p.kind !== 'agent' && atLeast(p.maxAuthority, TRUSTED_THRESHOLD);
}
