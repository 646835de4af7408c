/**
 * Session ownership at the store (docs/design.md § What the model sees): the
 * first use of a session id records its owner, and only that owner (or the application) may use
 * it afterwards. The rule itself is pure: core/session.ts.
 */
import { MemauthError } from '../core/errors.js';
import { mayUseSession } from '../core/session.js';
import type { StorageReader, StorageTx } from '../store/driver.js';

const who = (p: string | null): string => (p === null ? 'the application' : `principal ${JSON.stringify(p)}`);

/**
 * The error for a session used by someone who does not own it. It names no owner: the requester
 * (a principal; the application may use any session) learns only that the session is another's.
 */
export function sessionForbidden(tenant: string, session: string, _owner: string | null, requester: string | null): MemauthError {
  return new MemauthError(
    'SESSION_FORBIDDEN',
    `session ${JSON.stringify(session)} of tenant ${JSON.stringify(tenant)} belongs to another principal; ${who(requester)} cannot read, write or act in it — open a session of your own (a new, unguessable id: newSessionId())`,
    { tenant, session, requester },
  );
}

/**
 * Inside a transaction: create `session` owned by `requester` if it is new, else check that
 * `requester` may use it.
 * @throws MemauthError `SESSION_FORBIDDEN` when the session belongs to someone else.
 */
export async function joinSession(tx: StorageTx, tenant: string, session: string, requester: string | null, at: string): Promise<void> {
  const owner = await tx.ensureSession(tenant, session, at, requester);
  if (!mayUseSession(owner, requester)) throw sessionForbidden(tenant, session, owner, requester);
}

/**
 * Without writing: check that `requester` may use `session` (a session nobody opened yet is free).
 * @returns whether the session exists (if not, a later {@link joinSession} in the same
 *   transaction claims it).
 * @throws MemauthError `SESSION_FORBIDDEN` when the session belongs to someone else.
 */
export async function checkSession(src: StorageReader, tenant: string, session: string, requester: string | null): Promise<boolean> {
  const s = await src.sessionOwner(tenant, session);
  if (s !== null && !mayUseSession(s.owner, requester)) throw sessionForbidden(tenant, session, s.owner, requester);
  return s !== null;
}
