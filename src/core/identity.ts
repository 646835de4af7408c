/**
 * Identity rows in the audit chain (docs/design.md § Audit log: "every row that can grant authority or
 * identity is checked against the chain"): what the `principal` and `token_*` entries hold, and
 * whether a principal row or a token row matches them. Pure: no I/O.
 *
 * Ops (see `AUDIT_OPS`):
 * - `principal`    — a registration: `{principalId, kind, maxAuthority, domain, at}` (`at` = the row's createdAt);
 * - `token_issue`  — a token created: {@link TokenIssuePayload} (never the secret, only its SHA-256);
 * - `token_rotate` — a token revoked because a replacement was issued: `{tokenId, revokedAt, replacedBy}`;
 * - `token_revoke` — a token revoked: `{tokenId, revokedAt}`.
 * A principal token's entries are in its tenant's chain; an admin token's in the reserved chain
 * {@link ADMIN_CHAIN}, which no tenant can be named.
 */
import { entryHash, type AuditEntry } from './audit.js';
import type { Principal } from './types.js';

/** The chain of admin tokens (tenant null). Refused as a tenant name by input validation. */
export const ADMIN_CHAIN = '(admin)';

/** Token ops, in the order a token's life can have them. */
export const TOKEN_OPS = ['token_issue', 'token_rotate', 'token_revoke'] as const;

/** `policyVersion` of token entries: tokens are not governed by the action policy. */
export const TOKEN_POLICY_VERSION = 'none';

/** The chain a token's entries go to. */
export const tokenChain = (tenant: string | null): string => tenant ?? ADMIN_CHAIN;

/** What a `token_issue` entry records about a token. */
export interface TokenIssuePayload {
  readonly tokenId: string;
  readonly kind: 'admin' | 'principal';
  readonly tenant: string | null;
  readonly principalId: string | null;
  /** SHA-256 hex of the token's text (the secret is never recorded). */
  readonly hash: string;
  readonly createdAt: string;
  /** tokens do not expire today; recorded so a later expiry is covered by the chain. */
  readonly expiresAt: null;
  /** the token this one replaced, for a rotation. */
  readonly rotates: string | null;
  /** true when an existing, unaudited token was adopted into the chain by an admin (`memauth token adopt`). */
  readonly adopted: boolean;
}

/** The minimal token row fields the chain covers (a `TokenRow` of the storage port). */
export interface TokenFields {
  readonly id: string;
  readonly tenant: string | null;
  readonly principalId: string | null;
  /** SHA-256 hex of the token's full text. */
  readonly hash: string;
  readonly createdAt: string;
  readonly revokedAt: string | null;
}

/** The `token_issue` payload of a token row. */
export function tokenIssuePayload(t: TokenFields, rotates: string | null, adopted = false): TokenIssuePayload {
  return { tokenId: t.id, kind: t.tenant === null ? 'admin' : 'principal', tenant: t.tenant, principalId: t.principalId, hash: t.hash, createdAt: t.createdAt, expiresAt: null, rotates, adopted };
}

/** An entry whose stored hash is its own (a changed payload is not trusted, even before `verify` runs). */
const intact = (e: AuditEntry): boolean => e.hash === entryHash(e);

/**
 * Does a principal row match its registration? True when `entries` (the `principal` entries of
 * the row's tenant naming its id) hold exactly one intact, not refused registration, and it
 * records the row's kind, ceiling, domain and creation time. A row inserted or altered outside
 * the API (no entry, or a different kind, maxAuthority or domain) is not a principal.
 */
export function principalMatchesEntries(p: Principal, entries: readonly AuditEntry[]): boolean {
  return principalEntry(p, entries) !== null;
}

/** The registration entry a principal row matches (see {@link principalMatchesEntries}), or null. */
export function principalEntry(p: Principal, entries: readonly AuditEntry[]): AuditEntry | null {
  const regs = entries.filter(
    (e) => e.op === 'principal' && e.tenant === p.tenant && (e.payload as Record<string, unknown>).refused === undefined && (e.payload as Record<string, unknown>).principalId === p.id,
  );
  if (regs.length !== 1) return null;
  const e = regs[0] as AuditEntry;
  const x = e.payload as Record<string, unknown>;
  return intact(e) && x.kind === p.kind && x.maxAuthority === p.maxAuthority && x.domain === p.domain && x.at === p.createdAt ? e : null;
}

/**
 * Is `e` still linked into its chain: the entry after it (when there is one) names its hash as
 * `prevHash`? An entry rewritten in place with a recomputed hash breaks the link to its
 * successor; the gate then refuses it at once (rewriting the whole suffix is caught by the signed
 * checkpoint, in `audit verify`).
 */
export const linksTo = (e: AuditEntry, next: AuditEntry | undefined): boolean => next === undefined || next.prevHash === e.hash;

/** Why a token row does not match the chain. */
export type TokenProblem = 'no_audit_entry' | 'row_differs_from_audit' | 'revocation_missing_from_row' | 'revoked_without_audit';

/** A token row judged against its entries. */
export interface TokenVerdict {
  /** the row matches its one `token_issue` entry (ignoring revocation). */
  readonly issued: boolean;
  /** revoked by the row or by the chain: the chain says revoked → revoked, and so does the row. */
  readonly revoked: boolean;
  /** the first mismatch between row and chain, if any (what `audit verify` reports). */
  readonly problem: TokenProblem | null;
  /** the `token_issue` entry the row matches, when `issued`. */
  readonly entry?: AuditEntry;
}

/**
 * Judge a token row against `entries` (the `token_*` entries of its chain naming its id). It may
 * authenticate only when `issued && !revoked`. Revocation cannot be undone by clearing the row's
 * `revokedAt`: a `token_revoke` / `token_rotate` entry keeps it revoked.
 */
export function tokenVerdict(t: TokenFields, entries: readonly AuditEntry[]): TokenVerdict {
  const chain = tokenChain(t.tenant);
  const mine = entries.filter((e) => e.tenant === chain && (e.payload as Record<string, unknown>).tokenId === t.id);
  const issues = mine.filter((e) => e.op === 'token_issue');
  const revokes = mine.filter((e) => e.op === 'token_revoke' || e.op === 'token_rotate');
  const chainRevoked = revokes.length > 0;
  const revoked = chainRevoked || t.revokedAt !== null;
  if (issues.length === 0) return { issued: false, revoked, problem: 'no_audit_entry' };
  const e = issues[0] as AuditEntry;
  const x = e.payload as Record<string, unknown>;
  const want = tokenIssuePayload(t, null);
  const same =
    issues.length === 1 &&
    intact(e) &&
    x.kind === want.kind &&
    x.tenant === want.tenant &&
    x.principalId === want.principalId &&
    x.hash === want.hash &&
    x.createdAt === want.createdAt &&
    x.expiresAt === null;
  if (!same) return { issued: false, revoked, problem: 'row_differs_from_audit' };
  if (revokes.some((r) => !intact(r))) return { issued: true, revoked: true, problem: 'row_differs_from_audit', entry: e };
  if (chainRevoked && t.revokedAt === null) return { issued: true, revoked: true, problem: 'revocation_missing_from_row', entry: e };
  if (!chainRevoked && t.revokedAt !== null) return { issued: true, revoked: true, problem: 'revoked_without_audit', entry: e };
  if (chainRevoked && (revokes[0]?.payload as Record<string, unknown>).revokedAt !== t.revokedAt) return { issued: true, revoked: true, problem: 'row_differs_from_audit', entry: e };
  return { issued: true, revoked, problem: null, entry: e };
}
