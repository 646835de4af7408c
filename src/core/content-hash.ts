/**
 * The content hash of a record (docs/design.md § Deletion, retention, privacy: delete erases content
 * but keeps the record's hash). A plain SHA-256 of low-entropy content ("balance: 500") can be
 * guessed from the hash alone once the content is deleted, so new records carry a keyed hash:
 * `hmac-sha256:` + hex HMAC-SHA-256 under the tenant's random content key (kept in the
 * `tenant_keys` table, outside the audit chain: deleting the key shreds guessability). Records
 * written before keyed hashes carry the bare 64-hex SHA-256 and still verify.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { sha256Hex } from './canonical.js';

/** Prefix (and version) of a keyed content hash. */
export const KEYED_HASH_PREFIX = 'hmac-sha256:';

/** A fresh tenant content key: 32 random bytes, hex. */
export function newContentKey(): string {
  return randomBytes(32).toString('hex');
}

/** Is `hash` a keyed content hash (as opposed to a legacy plain SHA-256)? */
export function isKeyedHash(hash: string): boolean {
  return hash.startsWith(KEYED_HASH_PREFIX);
}

/**
 * The content hash of `content`: keyed under `keyHex` (`hmac-sha256:<64 hex>`), or the legacy
 * plain SHA-256 (64 hex) when `keyHex` is null.
 */
export function contentHashOf(content: string, keyHex: string | null): string {
  if (keyHex === null) return sha256Hex(content);
  return KEYED_HASH_PREFIX + createHmac('sha256', Buffer.from(keyHex, 'hex')).update(content, 'utf8').digest('hex');
}

/**
 * Does `content` hash to `hash`? A legacy hash is checked without the key; a keyed hash needs
 * the tenant's key (false without it: the hash cannot be checked, e.g. after the key was shredded).
 */
export function contentHashMatches(content: string, hash: string, keyHex: string | null | undefined): boolean {
  if (!isKeyedHash(hash)) return sha256Hex(content) === hash;
  if (keyHex === null || keyHex === undefined) return false;
  const want = Buffer.from(contentHashOf(content, keyHex));
  const got = Buffer.from(hash);
  return want.length === got.length && timingSafeEqual(want, got);
}
