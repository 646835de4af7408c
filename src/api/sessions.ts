/**
 * Sessions at the store (docs/design.md § What the model sees, § Derivation and taint): the
 * first use of a session id records its owner, and only that owner (or the application) may use
 * it afterwards; what is read in a session is appended to its read log once. The rules themselves
 * are pure: core/session.ts. Imports from src/core, src/store's port and api/provenance.ts (type).
 */
import { MemauthError } from '../core/errors.js';
import { type SessionLogEntry, extendLog, mayUseSession } from '../core/session.js';
import type { MemoryRecord } from '../core/types.js';
import type { StorageReader, StorageTx } from '../store/driver.js';
import type { Provenance } from './provenance.js';

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

/** A session joined in a transaction, with the head of its read log then (null: nothing read in it yet). */
export interface JoinedSession {
  readonly id: string;
  readonly head: SessionLogEntry | null;
}

/**
 * Inside a transaction: {@link joinSession} `session` and read the head of its log ({@link sessionHead}).
 * @returns undefined without a session.
 * @throws MemauthError `SESSION_FORBIDDEN` when the session belongs to someone else.
 */
export async function enterSession(provenance: Provenance, tx: StorageTx, tenant: string, session: string | undefined, requester: string | null, at: string): Promise<JoinedSession | undefined> {
  if (session === undefined) return undefined;
  await joinSession(tx, tenant, session, requester, at);
  return { id: session, head: await sessionHead(provenance, tx, tenant, session, at) };
}

/**
 * Inside a transaction, after {@link joinSession}: the head of `session`'s read log. A session of
 * an older store, read before its log existed, first gets a log of its reads in the order they were
 * read (once; see {@link readInSession}).
 * @returns the head, or null when nothing was read in the session.
 */
export async function sessionHead(provenance: Provenance, tx: StorageTx, tenant: string, session: string, at: string): Promise<SessionLogEntry | null> {
  const head = await trustedHead(provenance, tx, tenant, session);
  return head !== null ? head : readInSession(provenance, tx, tenant, session, [], at);
}

/**
 * The head of `session`'s log as stored, when re-folding the log gives it (see
 * SessionLogs.trustedHead: a summary changed outside the API gives later writes no authority).
 */
async function trustedHead(provenance: Provenance, tx: StorageTx, tenant: string, session: string): Promise<SessionLogEntry | null> {
  const trust = (recs: readonly MemoryRecord[]): Promise<ReadonlyMap<string, MemoryRecord>> => provenance.untrustForged(tx, tenant, new Map(recs.map((r) => [r.id, r])));
  return provenance.sessions.trustedHead(tx, tenant, session, await tx.sessionLogHead(tenant, session), trust);
}

/**
 * Inside a transaction, after {@link joinSession}: mark `ids` read in `session`. The records not
 * read in it yet are appended to its log (core/session.ts), each with the taint it may be trusted
 * with (a row that does not match its audit entry enters as `external_untrusted`, as at a
 * derivation): a constant number of statements per call, whatever the length of the session.
 * @returns the log's head afterwards (null: nothing was read in the session).
 */
export async function readInSession(provenance: Provenance, tx: StorageTx, tenant: string, session: string, ids: readonly string[], at: string): Promise<SessionLogEntry | null> {
  const head = await trustedHead(provenance, tx, tenant, session);
  let fresh = [...new Set(ids)];
  if (head === null) {
    // with an empty log: the reads an older store kept, if any, come first
    fresh = [...new Set([...(await tx.sessionReads(tenant, session)), ...fresh])];
  } else if (fresh.length > 0) {
    const have = await tx.sessionLogHas(tenant, session, fresh);
    fresh = fresh.filter((id) => !have.has(id));
  }
  return appendReads(provenance, tx, tenant, session, head, fresh, at);
}

/** Append `fresh` (records not in the log, in read order) after `head`; @returns the new head. */
export async function appendReads(
  provenance: Provenance,
  tx: StorageTx,
  tenant: string,
  session: string,
  head: SessionLogEntry | null,
  fresh: readonly string[],
  at: string,
): Promise<SessionLogEntry | null> {
  if (fresh.length === 0) return head;
  const found = await provenance.untrustForged(tx, tenant, new Map((await tx.getRecords(tenant, fresh)).map((r) => [r.id, r])));
  const entries = extendLog(
    head,
    fresh.flatMap((id) => found.get(id) ?? []),
  );
  await tx.appendSessionLog(tenant, session, entries, at);
  const last = entries[entries.length - 1];
  if (last === undefined) return head;
  provenance.sessions.appended(tenant, session, last);
  provenance.echoes.appended(tenant, session, head, entries, found);
  return last;
}
