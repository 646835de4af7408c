import { createHash } from 'node:crypto';
import canonicalizeImpl from 'canonicalize';

/**
 * RFC 8785 (JSON Canonicalization Scheme) serialisation, via the `canonicalize` package.
 * Every hashed structure in memauth (audit entries, policies, argument hashes) goes through here.
 *
 * @throws TypeError when `value` is not representable as JSON (e.g. `undefined` at the top level).
 */
export function canonicalJson(value: unknown): string {
  const s = (canonicalizeImpl as unknown as (v: unknown) => string | undefined)(value);
  if (s === undefined) throw new TypeError('value is not JSON-serialisable');
  return s;
}

/** SHA-256 of a UTF-8 string, lower-case hex (64 chars). */
export function sha256Hex(s: string | Buffer): string {
  return createHash('sha256').update(s).digest('hex');
}

/** SHA-256 (hex) of the RFC 8785 canonical JSON of `value`. */
export function hashCanonical(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
