/**
 * Who may open one more MCP-over-HTTP session (pure: no I/O). Limits are per principal and per
 * tenant, so that a flood by one principal stays inside its own share: a principal at its limit
 * is refused; a full tenant (or a full server — a last resort far above the per-tenant limit)
 * makes room by evicting the least recently used session of whoever holds the most there, so
 * the flooder loses its own idle sessions first and never another tenant's.
 */

/** An open session as the limiter sees it. */
export interface SessionRef {
  readonly id: string;
  readonly tenant: string;
  readonly principalId: string;
  readonly lastSeen: number;
}

/** The three limits (config `mcpMaxSessionsPerPrincipal`, `mcpMaxSessionsPerTenant`, `mcpMaxSessions`). */
export interface SessionLimits {
  readonly perPrincipal: number;
  readonly perTenant: number;
  readonly total: number;
}

/** `open`: room; `evict`: close that session first, then ask again; `refuse`: the principal is at its own limit. */
export type SessionVerdict = { readonly kind: 'open' } | { readonly kind: 'evict'; readonly evict: string } | { readonly kind: 'refuse'; readonly open: number; readonly max: number };

/** The least recently used session of the key holding the most sessions among `refs` (ties: the key whose oldest session is oldest). */
function lruOfHeaviest(refs: readonly SessionRef[], key: (r: SessionRef) => string): string {
  const groups = new Map<string, SessionRef[]>();
  for (const r of refs) {
    const k = key(r);
    const g = groups.get(k);
    if (g) g.push(r);
    else groups.set(k, [r]);
  }
  let best: SessionRef | undefined;
  let bestSize = -1;
  for (const g of groups.values()) {
    const lru = g.reduce((a, b) => (b.lastSeen < a.lastSeen ? b : a));
    if (g.length > bestSize || (g.length === bestSize && best !== undefined && lru.lastSeen < best.lastSeen)) {
      best = lru;
      bestSize = g.length;
    }
  }
  return (best as SessionRef).id;
}

/**
 * Decide whether `principalId` of `tenant` may open one more session given the open ones.
 *
 * @returns `refuse` when the principal holds `perPrincipal` sessions already; `evict` the LRU
 *   session of the principal holding the most in the tenant when the tenant holds `perTenant`;
 *   `evict` the LRU session of the heaviest principal of the tenant holding the most when the
 *   server holds `total`; otherwise `open`.
 */
export function sessionLimitVerdict(open: readonly SessionRef[], tenant: string, principalId: string, limits: SessionLimits): SessionVerdict {
  const mine = open.filter((s) => s.tenant === tenant && s.principalId === principalId).length;
  if (mine >= limits.perPrincipal) return { kind: 'refuse', open: mine, max: limits.perPrincipal };
  const ofTenant = open.filter((s) => s.tenant === tenant);
  if (ofTenant.length >= limits.perTenant) return { kind: 'evict', evict: lruOfHeaviest(ofTenant, (s) => s.principalId) };
  if (open.length >= limits.total) {
    const heaviestTenantSession = lruOfHeaviest(open, (s) => s.tenant);
    const t = (open.find((s) => s.id === heaviestTenantSession) as SessionRef).tenant;
    return {
      kind: 'evict',
      evict: lruOfHeaviest(
        open.filter((s) => s.tenant === t),
        (s) => s.principalId,
      ),
    };
  }
  return { kind: 'open' };
}
