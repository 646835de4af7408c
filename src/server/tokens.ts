/**
 * Bearer tokens of the HTTP API and the MCP server: issue, verify, rotate, revoke, list; only a
 * token's hash is stored (over the storage driver's token methods).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { MemauthError } from '../core/errors.js';
import type { Principal } from '../core/types.js';
import { type AuditOp, nextEntry } from '../core/audit.js';
import { ADMIN_CHAIN, TOKEN_OPS, TOKEN_POLICY_VERSION, type TokenVerdict, tokenChain, tokenIssuePayload, tokenVerdict } from '../core/identity.js';
import { principals, verifiedEntry } from '../api/principals.js';
import type { StorageDriver, StorageReader, StorageTx, TokenRow } from '../store/driver.js';
import { HttpError } from './errors.js';
import { NextRun } from './next-run.js';

/** Prefix of every memauth bearer token (`mat_` + 32 random bytes, base64url). */
export const TOKEN_PREFIX = 'mat_';
const TOKEN_RE = /^mat_[A-Za-z0-9_-]{43}$/;

/** Who a request is, as fixed by its bearer token. */
export type Identity = { readonly kind: 'admin'; readonly tokenId: string } | { readonly kind: 'principal'; readonly tokenId: string; readonly tenant: string; readonly principal: Principal };

/** A token as listed: never its secret or hash. */
export interface TokenInfo {
  readonly id: string;
  readonly admin: boolean;
  readonly tenant: string | null;
  readonly principal: string | null;
  readonly createdAt: string;
  readonly revokedAt: string | null;
}

/** A freshly issued token: `token` is shown once and never stored. */
export interface IssuedToken {
  readonly token: string;
  readonly info: TokenInfo;
}

/** SHA-256 (hex) of a token's text: the only thing stored. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

const info = (r: TokenRow): TokenInfo => ({ id: r.id, admin: r.tenant === null, tenant: r.tenant, principal: r.principalId, createdAt: r.createdAt, revokedAt: r.revokedAt });

/**
 * Bearer tokens of the HTTP API and the MCP server, over the {@link StorageDriver} token methods.
 *
 * A token is `mat_` + 32 random bytes (base64url); only its SHA-256 is stored. Authentication
 * looks the row up by that hash and compares the hashes with `crypto.timingSafeEqual` (a token
 * has 256 bits of entropy, so the lookup by hash leaks nothing an attacker can use). A revoked
 * token is refused on the next request: every request reads the row. Rotation issues a new
 * token and revokes the old one in one transaction.
 *
 * Every token write appends its entry (`token_issue`, `token_rotate`, `token_revoke`) to the
 * token's chain in the same transaction, and authentication trusts a row only when it matches
 * its entries (core/identity.ts; docs/design.md § Audit log).
 */
export class TokenService {
  private readonly lookups = new NextRun<string, Identity>();

  constructor(
    private readonly driver: StorageDriver,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  private newRow(tenant: string | null, principalId: string | null): { token: string; row: TokenRow } {
    const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const row: TokenRow = { id: `tok_${randomBytes(12).toString('hex')}`, tenant, principalId, hash: tokenHash(token), createdAt: this.clock().toISOString(), revokedAt: null };
    return { token, row };
  }

  /** Append a token entry to the token's chain inside `tx` (core/identity.ts). */
  private static async audit(tx: StorageTx, chain: string, op: AuditOp, payload: Record<string, unknown>): Promise<void> {
    await tx.appendAudit(nextEntry(chain, await tx.auditHead(chain), op, payload, TOKEN_POLICY_VERSION));
  }

  /** A principal token's principal, checked against its registration entry; throws `UNKNOWN_PRINCIPAL`. */
  private async principalOf(src: StorageReader, tenant: string, id: string): Promise<Principal> {
    const p = await principals.get(src, tenant, id);
    if (!p)
      throw new MemauthError(
        'UNKNOWN_PRINCIPAL',
        `principal ${JSON.stringify(id)} is not registered in tenant ${JSON.stringify(tenant)} (or its row does not match its registration in the audit chain: run memauth audit verify)`,
        { tenant, principal: id },
      );
    return p;
  }

  /**
   * Issue a token for a registered principal, or an admin token. The row and its `token_issue`
   * entry (in the tenant's chain; for an admin token the reserved `(admin)` chain) are written in
   * one transaction (docs/design.md § Audit log).
   * @throws MemauthError `UNKNOWN_PRINCIPAL` (HTTP 404) when the principal is not registered
   *   (or its row does not match its registration entry).
   */
  async issue(target: { readonly tenant: string; readonly principal: string } | 'admin'): Promise<IssuedToken> {
    const { token, row } = target === 'admin' ? this.newRow(null, null) : this.newRow(target.tenant, target.principal);
    const chain = tokenChain(row.tenant);
    await this.driver.transaction(chain, async (tx) => {
      if (target !== 'admin') await this.principalOf(tx, target.tenant, target.principal);
      await tx.putToken(row);
      await TokenService.audit(tx, chain, 'token_issue', { ...tokenIssuePayload(row, null) });
    });
    return { token, info: info(row) };
  }

  /** The row's verdict against its chain (core/identity.ts). */
  private async verdict(src: StorageReader, row: TokenRow): Promise<TokenVerdict> {
    const v = tokenVerdict(row, await src.auditEntriesNaming(tokenChain(row.tenant), TOKEN_OPS, { field: 'tokenId', value: row.id }));
    // an issue entry rewritten in place (hash recomputed) no longer links to its successor
    return v.issued && !(await verifiedEntry(src, v.entry)) ? { issued: false, revoked: v.revoked, problem: 'row_differs_from_audit' } : v;
  }

  /**
   * The identity a bearer token fixes. The row must match its `token_issue` entry, be revoked
   * neither in the row nor in the chain, and name a principal whose row matches its registration.
   * @throws HttpError `UNAUTHENTICATED` (401) for a malformed, unknown or revoked token, one not in
   *   the audit chain (`reason: 'not_in_audit'` — a token from before audited tokens: an admin adopts
   *   it with `memauth token adopt`), or whose principal is not registered.
   */
  async authenticate(token: string): Promise<Identity> {
    if (!TOKEN_RE.test(token)) throw new HttpError(401, 'UNAUTHENTICATED', 'malformed bearer token (expected mat_…)', { reason: 'malformed' });
    const h = tokenHash(token);
    // concurrent requests with this token share one lookup that starts after each arrived (./next-run.ts)
    return this.lookups.run(h, () => this.lookup(h));
  }

  /** {@link authenticate} after the format check: the reads, for the token whose hash is `h`. */
  private async lookup(h: string): Promise<Identity> {
    // one round trip where the store can (PostgreSQL), else read by read
    const src = (await this.driver.tokenReads?.(h)) ?? this.driver;
    const row = await src.findToken({ hash: h });
    if (!row || !timingSafeEqual(Buffer.from(row.hash, 'hex'), Buffer.from(h, 'hex'))) throw new HttpError(401, 'UNAUTHENTICATED', 'unknown bearer token', { reason: 'unknown' });
    const v = await this.verdict(src, row);
    if (v.revoked) throw new HttpError(401, 'UNAUTHENTICATED', 'this token has been revoked', { reason: 'revoked', tokenId: row.id });
    if (!v.issued) {
      throw new HttpError(
        401,
        'UNAUTHENTICATED',
        `this token is not in the audit chain (${v.problem ?? 'no_audit_entry'}); if it was issued before tokens were audited, an admin adopts it with: memauth token adopt`,
        { reason: 'not_in_audit', tokenId: row.id },
      );
    }
    if (row.tenant === null || row.principalId === null) return { kind: 'admin', tokenId: row.id };
    const principal = await principals.get(src, row.tenant, row.principalId);
    if (!principal) throw new HttpError(401, 'UNAUTHENTICATED', 'the principal of this token is not registered', { reason: 'unknown_principal', tokenId: row.id });
    return { kind: 'principal', tokenId: row.id, tenant: row.tenant, principal };
  }

  /** Tokens of a tenant, or with `null` the admin tokens. */
  async list(tenant: string | null): Promise<TokenInfo[]> {
    return (await this.driver.listTokens(tenant)).map(info);
  }

  /** One token's metadata. @throws HttpError `TOKEN_NOT_FOUND` (404) */
  async get(id: string): Promise<TokenInfo> {
    const row = await this.driver.findToken({ id });
    if (!row) throw new HttpError(404, 'TOKEN_NOT_FOUND', `no token ${JSON.stringify(id)}`, { id });
    return info(row);
  }

  /**
   * Revoke a token: refused from the next request on. The row's `revokedAt` and a `token_revoke`
   * entry are written in one transaction; the entry keeps the token revoked even if the row's
   * `revokedAt` is later cleared outside the API.
   * @throws HttpError `TOKEN_NOT_FOUND` (404), `TOKEN_REVOKED` (409).
   */
  async revoke(id: string): Promise<TokenInfo> {
    const row = await this.driver.findToken({ id });
    if (!row) throw new HttpError(404, 'TOKEN_NOT_FOUND', `no token ${JSON.stringify(id)}`, { id });
    const at = this.clock().toISOString();
    const chain = tokenChain(row.tenant);
    const done = await this.driver.transaction(chain, async (tx) => {
      if (!(await tx.markTokenRevoked(id, at))) return false;
      await TokenService.audit(tx, chain, 'token_revoke', { tokenId: id, revokedAt: at });
      return true;
    });
    if (!done) throw new HttpError(409, 'TOKEN_REVOKED', `token ${id} is already revoked`, { id });
    return this.get(id);
  }

  /**
   * Rotate a token: issue a new one for the same principal (or admin) and revoke the old one,
   * atomically: `token_rotate` (old, `replacedBy`) and `token_issue` (new, `rotates`) entries.
   * @throws HttpError `TOKEN_NOT_FOUND` (404), `TOKEN_REVOKED` (409); MemauthError
   *   `UNKNOWN_PRINCIPAL` when the principal's row does not match its registration.
   */
  async rotate(id: string): Promise<IssuedToken & { readonly revoked: TokenInfo }> {
    const old = await this.driver.findToken({ id });
    if (!old) throw new HttpError(404, 'TOKEN_NOT_FOUND', `no token ${JSON.stringify(id)}`, { id });
    const { token, row } = this.newRow(old.tenant, old.principalId);
    const chain = tokenChain(old.tenant);
    const done = await this.driver.transaction(chain, async (tx) => {
      // a token that was never issued through the chain is not rotated into one that is
      if (!(await this.verdict(tx, old)).issued)
        throw new HttpError(409, 'TOKEN_NOT_IN_AUDIT', `token ${id} is not in the audit chain; an admin adopts it first (memauth token adopt) or issues a new one`, { id });
      if (old.tenant !== null && old.principalId !== null) await this.principalOf(tx, old.tenant, old.principalId);
      if (!(await tx.markTokenRevoked(id, row.createdAt))) return false;
      await TokenService.audit(tx, chain, 'token_rotate', { tokenId: id, revokedAt: row.createdAt, replacedBy: row.id });
      await tx.putToken(row);
      await TokenService.audit(tx, chain, 'token_issue', { ...tokenIssuePayload(row, id) });
      return true;
    });
    if (!done) throw new HttpError(409, 'TOKEN_REVOKED', `token ${id} is already revoked; issue a new one instead`, { id });
    return { token, info: info(row), revoked: await this.get(id) };
  }

  /**
   * Create an admin token when the store has no usable one (unrevoked and in the `(admin)` chain);
   * returns it (to print once), else null. The check and the insert hold the `(admin)` chain's
   * lock, so servers starting together on an empty store create one.
   */
  async ensureAdmin(): Promise<IssuedToken | null> {
    const usable = async (src: StorageReader): Promise<boolean> => {
      for (const t of await src.listTokens(null)) {
        const v = await this.verdict(src, t);
        if (v.issued && !v.revoked) return true;
      }
      return false;
    };
    if (await usable(this.driver)) return null;
    const { token, row } = this.newRow(null, null);
    const made = await this.driver.transaction(ADMIN_CHAIN, async (tx) => {
      if (await usable(tx)) return false;
      await tx.putToken(row);
      await TokenService.audit(tx, ADMIN_CHAIN, 'token_issue', { ...tokenIssuePayload(row, null) });
      return true;
    });
    return made ? { token, info: info(row) } : null;
  }

  /** Unrevoked tokens with no entry at all in their chain (issued before tokens were audited): refused until adopted. */
  async unaudited(): Promise<TokenInfo[]> {
    const out: TokenInfo[] = [];
    const tenants = new Set<string | null>([null, ...(await this.driver.tenants()).filter((t) => t !== ADMIN_CHAIN)]);
    for (const tenant of tenants) {
      for (const t of await this.driver.listTokens(tenant)) {
        if (t.revokedAt === null && (await this.driver.auditEntriesNaming(tokenChain(t.tenant), TOKEN_OPS, { field: 'tokenId', value: t.id })).length === 0) out.push(info(t));
      }
    }
    return out;
  }

  /**
   * Adopt tokens issued before tokens were audited (migration; an explicit admin command, never
   * automatic): each token row with no entry at all in its chain gets a `token_issue` entry with
   * `adopted: true` (and, when the row is revoked, a `token_revoke` entry). Rows that have entries
   * but do not match them are not adopted (they are reported by `memauth audit verify`). Only the
   * operator who can open the database runs it, after checking the listed tokens.
   * @returns the adopted tokens.
   */
  async adopt(): Promise<TokenInfo[]> {
    const out: TokenInfo[] = [];
    const tenants = new Set<string | null>([null, ...(await this.driver.tenants()).filter((t) => t !== ADMIN_CHAIN)]);
    for (const tenant of tenants) {
      for (const t of await this.driver.listTokens(tenant)) {
        const chain = tokenChain(t.tenant);
        const adopted = await this.driver.transaction(chain, async (tx) => {
          const entries = await tx.auditEntriesNaming(chain, TOKEN_OPS, { field: 'tokenId', value: t.id });
          if (entries.length > 0) return false;
          await TokenService.audit(tx, chain, 'token_issue', { ...tokenIssuePayload(t, null, true) });
          if (t.revokedAt !== null) await TokenService.audit(tx, chain, 'token_revoke', { tokenId: t.id, revokedAt: t.revokedAt, adopted: true });
          return true;
        });
        if (adopted) out.push(info(t));
      }
    }
    return out;
  }
}
