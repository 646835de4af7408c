import type { Action, Confirmation } from './types.js';

/** Why a confirmation does not cover an action. */
export type ConfirmationMismatch =
  | 'confirmation_action_mismatch'
  | 'confirmation_resource_mismatch'
  | 'confirmation_args_mismatch'
  | 'confirmation_memory_mismatch'
  | 'confirmation_expired'
  | 'confirmation_used_up'
  | 'confirmation_not_found';

/**
 * Does a scoped confirmation cover this exact action (DESIGN.md § Human confirmation)?
 * It must match the action type, the resource (when the confirmation names one, or when the
 * action has one), the hash of the exact arguments, name exactly the memory the decision rests
 * on (when it names memory ids: every untrusted dependency among them, and at least one of
 * them a dependency — never a confirmation for some other context), be unexpired at `now`, and have uses left.
 *
 * @returns `null` when it covers the action, else the first mismatch.
 */
export function confirmationMismatch(params: {
  confirmation: Confirmation;
  usesSoFar: number;
  action: Action;
  argsHash: string;
  untrustedMemoryIds: readonly string[];
  /** every dependency of the decision: a confirmation naming memory ids covers only decisions resting on them. */
  dependencyIds: readonly string[];
  now: string;
}): ConfirmationMismatch | null {
  const { confirmation: c, usesSoFar, action, argsHash, untrustedMemoryIds, dependencyIds, now } = params;
  if (c.actionType !== action.type) return 'confirmation_action_mismatch';
  if ((c.resource ?? null) !== (action.resource ?? null)) return 'confirmation_resource_mismatch';
  if (c.argsHash !== argsHash) return 'confirmation_args_mismatch';
  if (c.memoryIds !== null && (untrustedMemoryIds.some((m) => !c.memoryIds?.includes(m)) || !c.memoryIds.some((m) => dependencyIds.includes(m)))) return 'confirmation_memory_mismatch';
  if (c.expiresAt <= now) return 'confirmation_expired';
  if (usesSoFar >= c.maxUses) return 'confirmation_used_up';
  return null;
}
