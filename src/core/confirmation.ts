/**
 * Human confirmation (docs/design.md § Human confirmation): whether a recorded confirmation covers an
 * action for a requester, and why not. Pure.
 */
import type { Action, Confirmation, PrincipalKind } from './types.js';
import { hashCanonical } from './canonical.js';

/** Why a confirmation does not cover an action. */
export type ConfirmationMismatch =
  | 'confirmation_action_mismatch'
  | 'confirmation_resource_mismatch'
  | 'confirmation_args_mismatch'
  | 'confirmation_memory_mismatch'
  | 'confirmation_requester_mismatch'
  | 'confirmation_expired'
  | 'confirmation_used_up'
  | 'confirmation_not_found';

/**
 * Who asks for a decision: a registered principal (`id`, `kind`), or `null` for the application
 * itself (a library call that names no requester; on the server, the admin token).
 */
export type Requester = { readonly id: string; readonly kind: PrincipalKind } | null;

/**
 * Principal kinds that act for the user: those a confirmation without `usableBy` admits, never a
 * tool channel or an external principal. Their requests (and the application's) are the tenant's
 * own side of the review queue and the metrics; a tool's or external principal's are apart.
 */
export const DEFAULT_USABLE_KINDS: ReadonlySet<PrincipalKind> = new Set(['user', 'system', 'agent']);

/** Whether a decision's requester is on the tenant's own side: the application (`null`) or a principal of a {@link DEFAULT_USABLE_KINDS} kind (`undefined`: not registered — apart). */
export const actsForUser = (requester: string | null | undefined, kind: PrincipalKind | null | undefined): boolean => requester == null || (kind != null && DEFAULT_USABLE_KINDS.has(kind));

/**
 * May `requester` use confirmation `c` (docs/design.md § Human confirmation: a confirmation authorizes
 * exactly the matching action — for the principals it names)? An `external` principal never;
 * the application (`null`) always (it holds the store); with `usableBy`, exactly the principals
 * listed; without it, the {@link DEFAULT_USABLE_KINDS}.
 */
export function requesterAdmitted(c: Pick<Confirmation, 'usableBy'>, requester: Requester): boolean {
  if (requester === null) return true;
  if (requester.kind === 'external') return false;
  const list = c.usableBy ?? null;
  return list === null ? DEFAULT_USABLE_KINDS.has(requester.kind) : list.includes(requester.id);
}

/**
 * Does a scoped confirmation cover this exact action (docs/design.md § Human confirmation)?
 * It must match the action type, the resource (when the confirmation names one, or when the
 * action has one), the hash of the exact arguments, name exactly the memory the decision rests
 * on (when it names memory ids: every untrusted dependency among them, and at least one of
 * them a dependency — never a confirmation for some other context; an empty list covers only a
 * decision with no untrusted dependency), admit the requester ({@link requesterAdmitted}), be
 * unexpired at `now`, and have uses left.
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
  /** who asks; `undefined` is the application (as `null`). */
  requester?: Requester;
  now: string;
}): ConfirmationMismatch | null {
  const { confirmation: c, usesSoFar, action, argsHash, untrustedMemoryIds, dependencyIds, now } = params;
  if (c.actionType !== action.type) return 'confirmation_action_mismatch';
  if ((c.resource ?? null) !== (action.resource ?? null)) return 'confirmation_resource_mismatch';
  if (c.argsHash !== argsHash) return 'confirmation_args_mismatch';
  if (c.memoryIds !== null && memoryMismatch(c.memoryIds, untrustedMemoryIds, dependencyIds)) return 'confirmation_memory_mismatch';
  if (!requesterAdmitted(c, params.requester ?? null)) return 'confirmation_requester_mismatch';
  if (c.expiresAt <= now) return 'confirmation_expired';
  if (usesSoFar >= c.maxUses) return 'confirmation_used_up';
  return null;
}

function memoryMismatch(memoryIds: readonly string[], untrusted: readonly string[], dependencyIds: readonly string[]): boolean {
  if (memoryIds.length === 0) return untrusted.length > 0;
  return untrusted.some((m) => !memoryIds.includes(m)) || !memoryIds.some((m) => dependencyIds.includes(m));
}

/** SHA-256 of the RFC 8785 canonical JSON of an action's arguments: what a confirmation binds. */
export function argsHashOf(args: Readonly<Record<string, unknown>>): string {
  return hashCanonical(args);
}
