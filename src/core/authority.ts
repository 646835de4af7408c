/**
 * The authority lattice (docs/design.md § Authority lattice): a total order, highest first.
 *
 *   system_policy > user_confirmed > trusted_tool_verified > model_inferred > external_untrusted
 *
 * Everything in memauth that combines authorities does so with {@link minAuthority}
 * (taint, derivation, origin = min(principal ceiling, source)). Only corroboration and
 * scoped confirmation can lift an *action* authority, and never a record's taint.
 */
export const AUTHORITIES = ['external_untrusted', 'model_inferred', 'trusted_tool_verified', 'user_confirmed', 'system_policy'] as const;

export type Authority = (typeof AUTHORITIES)[number];

/** The lowest authority that may drive a `high` action on its own (docs/design.md § Action gate). */
export const TRUSTED_THRESHOLD: Authority = 'trusted_tool_verified';

/** Rank in the lattice: 0 for `external_untrusted` … 4 for `system_policy`. */
export function rank(a: Authority): number {
  const r = AUTHORITIES.indexOf(a);
  if (r < 0) throw new TypeError(`not an authority: ${String(a)}`);
  return r;
}

export function isAuthority(x: unknown): x is Authority {
  return typeof x === 'string' && (AUTHORITIES as readonly string[]).includes(x);
}

/** Greatest lower bound. With no arguments returns the top (`system_policy`), the identity of min. */
export function minAuthority(...as: Authority[]): Authority {
  let best = AUTHORITIES.length - 1;
  for (const a of as) best = Math.min(best, rank(a));
  return AUTHORITIES[best] as Authority;
}

/** Least upper bound. With no arguments returns the bottom (`external_untrusted`). */
export function maxAuthority(...as: Authority[]): Authority {
  let best = 0;
  for (const a of as) best = Math.max(best, rank(a));
  return AUTHORITIES[best] as Authority;
}

/** `a >= b` in the lattice. */
export function atLeast(a: Authority, b: Authority): boolean {
  return rank(a) >= rank(b);
}
