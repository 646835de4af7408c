import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { MemauthError } from '../core/errors.js';
import type { Principal } from '../core/types.js';
import type { StorageDriver, TokenRow } from '../store/driver.js';
import { HttpError } from './errors.js';

/** Prefix of every memauth bearer token (`mat_` + 32 random bytes, base64url). */
export const TOKEN_PREFIX = 'mat_';
const TOKEN_RE = /^mat_[A-Za-z0-9_-]{43}$/;

/** Who a request is, as fixed by its bearer token. */
export type Identity =
  | { readonly kind: 'admin'; readonly tokenId: string }
  | { readonly kind: 'principal'; readonly tokenId: string; readonly tenant: string; readonly principal: Principal };

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
 */
export class TokenService {
  constructor(
    private readonly driver: StorageDriver,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  private newRow(tenant: string | null, principalId: string | null): { token: string; row: TokenRow } {
    const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const row: TokenRow = { id: `tok_${randomBytes(12).toString('hex')}`, tenant, principalId, hash: tokenHash(token), createdAt: this.clock().toISOString(), revokedAt: null };
    return { token, row };
  }

  /**
   * Issue a token for a registered principal, or an admin token.
   * @throws MemauthError `UNKNOWN_PRINCIPAL` (HTTP 404) when the principal is not registered.
   */
  async issue(target: { readonly tenant: string; readonly principal: string } | 'admin'): Promise<IssuedToken> {
    if (target !== 'admin' && !(await this.driver.getPrincipal(target.tenant, target.principal))) {
      throw new MemauthError('UNKNOWN_PRINCIPAL', `principal ${JSON.stringify(target.principal)} is not registered in tenant ${JSON.stringify(target.tenant)}`, { tenant: target.tenant, principal: target.principal });
    }
    const { token, row } = target === 'admin' ? this.newRow(null, null) : this.newRow(target.tenant, target.principal);
    await this.driver.insertToken(row);
    return { token, info: info(row) };
  }

  /**
   * The identity a bearer token fixes.
   * @throws HttpError `UNAUTHENTICATED` (401) for a malformed, unknown or revoked token.
   */
  async authenticate(token: string): Promise<Identity> {
    if (!TOKEN_RE.test(token)) throw new HttpError(401, 'UNAUTHENTICATED', 'malformed bearer token (expected mat_…)', { reason: 'malformed' });
    const h = tokenHash(token);
    const row = await this.driver.findToken({ hash: h });
    if (!row || !timingSafeEqual(Buffer.from(row.hash, 'hex'), Buffer.from(h, 'hex'))) throw new HttpError(401, 'UNAUTHENTICATED', 'unknown bearer token', { reason: 'unknown' });
    if (row.revokedAt !== null) throw new HttpError(401, 'UNAUTHENTICATED', 'this token has been revoked', { reason: 'revoked', tokenId: row.id });
    if (row.tenant === null || row.principalId === null) return { kind: 'admin', tokenId: row.id };
    const principal = await this.driver.getPrincipal(row.tenant, row.principalId);
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
   * Revoke a token: refused from the next request on.
   * @throws HttpError `TOKEN_NOT_FOUND` (404), `TOKEN_REVOKED` (409).
   */
  async revoke(id: string): Promise<TokenInfo> {
    await this.get(id);
    if (!(await this.driver.revokeToken(id, this.clock().toISOString()))) throw new HttpError(409, 'TOKEN_REVOKED', `token ${id} is already revoked`, { id });
    return this.get(id);
  }

  /**
   * Rotate a token: issue a new one for the same principal (or admin) and revoke the old one, atomically.
   * @throws HttpError `TOKEN_NOT_FOUND` (404), `TOKEN_REVOKED` (409).
   */
  async rotate(id: string): Promise<IssuedToken & { readonly revoked: TokenInfo }> {
    const old = await this.driver.findToken({ id });
    if (!old) throw new HttpError(404, 'TOKEN_NOT_FOUND', `no token ${JSON.stringify(id)}`, { id });
    const { token, row } = this.newRow(old.tenant, old.principalId);
    if (!(await this.driver.revokeToken(id, row.createdAt, row))) throw new HttpError(409, 'TOKEN_REVOKED', `token ${id} is already revoked; issue a new one instead`, { id });
    return { token, info: info(row), revoked: await this.get(id) };
  }

  /** Create an admin token when the store has no unrevoked one; returns it (to print once), else null. */
  async ensureAdmin(): Promise<IssuedToken | null> {
    if ((await this.driver.listTokens(null)).some((t) => t.revokedAt === null)) return null;
    // check and insert in one locked transaction: servers starting together create one token
    const { token, row } = this.newRow(null, null);
    return (await this.driver.insertFirstAdminToken(row)) ? { token, info: info(row) } : null;
  }
}
