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
import { requestedPhrase, standingInstructions } from '../core/intent.js';
import { type Policy, intentPhrases } from '../core/policy.js';
import type { Action, IntentProvenance, IntentSource, MemoryRecord, Tier } from '../core/types.js';
import { actionValues } from '../core/values.js';
import type { StorageReader } from '../store/driver.js';

/** What the intent of one decision is judged from. */
export interface IntentInput {
  readonly policy: Policy;
  readonly tenant: string;
  readonly action: Action;
  readonly tier: Tier;
  readonly userTurnText: string | undefined;
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
  const phrase = x.userTurnText !== undefined ? requestedPhrase(x.userTurnText, intentPhrases(x.policy, x.action.type)) : null;
  if (phrase !== null) sources.push({ source: 'user_turn', phrase });
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
  return ignored !== undefined ? { sources, ignored } : { sources };
}

/** The application (no requester) may assert intent; a principal only when its own ceiling is at least `trusted_tool_verified`. */
async function requesterMayAssert(src: StorageReader, tenant: string, requester: string | undefined): Promise<boolean> {
  if (requester === undefined) return true;
  const p = await src.getPrincipal(tenant, requester);
  return p !== undefined && p !== null && p.kind !== 'external' && p.kind !== 'agent' && atLeast(p.maxAuthority, TRUSTED_THRESHOLD);
}
