/**
 * Who may use a session (docs/design.md § What the model sees: a session's
 * reads are the context of its agent's decisions, so nobody else may add to them or act in it).
 *
 * A session belongs to whoever used it first: a principal id, or `null` for the application (a
 * library call that names no requester; on the server, the admin token). The application may
 * use any session of its tenant (it holds the store); a principal only the sessions it owns —
 * never one the application or another principal opened.
 *
 * @param owner - the session's recorded owner (`null`: the application).
 * @param caller - the principal id the call is made for (`null`: the application).
 * @returns true when `caller` may read, write, derive or decide in the session.
 */
export function mayUseSession(owner: string | null, caller: string | null): boolean {
  return caller === null || owner === caller;
}
