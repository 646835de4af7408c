/**
 * Typed claims (docs/design.md § Claims and intent): the bounds a record's claims must keep, how
 * a claim's value is compared (the identifier normalisation of src/core/match.ts; amounts as exact
 * decimals), the text a record's content hash covers, and the derivation rule — a derived
 * record's claims must each be a claim of one of its inputs. Pure; imports only src/core.
 */
import { canonicalJson } from './canonical.js';
import { decimalOfText } from './decimal.js';
import { MemauthError } from './errors.js';
import { normalizeText, valueTokens } from './match.js';
import type { Claim, MemoryRecord } from './types.js';

/** At most this many claims per record. */
export const MAX_CLAIMS = 32;
/** Longest subject or value, in characters. */
export const MAX_CLAIM_TEXT = 500;
/** A claim's field: a lowercase identifier of 1–64 characters (`payee_account`, `intent`). */
export const CLAIM_FIELD = /^[a-z][a-z0-9_]{0,63}$/;
/** The field of a standing instruction: its value is an action type (docs/design.md § Claims and intent). */
export const INTENT_FIELD = 'intent';

/**
 * Check a record's claims against the bounds: at most {@link MAX_CLAIMS}; `subject` and `value`
 * non-blank strings of at most {@link MAX_CLAIM_TEXT} characters with an identifier run (no
 * lone surrogates); `field` matching {@link CLAIM_FIELD}; no two equal ({@link claimKey}).
 *
 * @param claims - the claims as given (already shaped `{subject, field, value}` by the caller's schema).
 * @param op - the operation, for the message (`write`, `derive`, `import`).
 * @returns the claims, in the order given.
 * @throws MemauthError `CLAIM_INVALID` naming the first bad claim (`details.index`, `details.field`).
 */
export function checkClaims(claims: readonly Claim[], op: string): Claim[] {
  const bad = (index: number, field: string, why: string): never => {
    throw new MemauthError('CLAIM_INVALID', `${op}: claims[${index}].${field} ${why}`, { index, field: `claims[${index}].${field}` });
  };
  if (claims.length > MAX_CLAIMS) throw new MemauthError('CLAIM_INVALID', `${op}: at most ${MAX_CLAIMS} claims per record (got ${claims.length})`, { field: 'claims' });
  const seen = new Set<string>();
  claims.forEach((c, i) => {
    if (!CLAIM_FIELD.test(c.field)) bad(i, 'field', `must be a lowercase identifier (a-z, 0-9, _; starting with a letter; at most 64 characters), got ${JSON.stringify(c.field.slice(0, 80))}`);
    for (const k of ['subject', 'value'] as const) {
      const v = c[k];
      if (v.length > MAX_CLAIM_TEXT) bad(i, k, `is longer than ${MAX_CLAIM_TEXT} characters`);
      if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(v)) bad(i, k, 'holds a lone surrogate');
      if (valueTokens(v) === null) bad(i, k, 'holds no letter, digit or identifier character');
    }
    const key = claimKey(c);
    if (seen.has(key)) bad(i, 'value', 'repeats an earlier claim');
    seen.add(key);
  });
  return [...claims];
}

/** An identifier as claims compare it: its token sequence after normalisation (NFC, lower case, white space collapsed). */
export function claimText(s: string): string {
  return (valueTokens(s) ?? [normalizeText(s)]).join('');
}

/** The key two equal claims share: field, and subject and value as {@link claimText}. */
export function claimKey(c: Claim): string {
  return `${c.field}\u0000${claimText(c.subject)}\u0000${claimText(c.value)}`;
}

/**
 * Does a claim's value equal an argument value? An amount (`amount` non-null: the argument's
 * canonical decimal) compares as an exact decimal with the claim's value read in the amount
 * grammar; anything else as identifiers ({@link claimText}).
 */
export function claimValueEquals(claimValue: string, value: string, amount: string | null): boolean {
  if (amount !== null) return decimalOfText(claimValue.trim()) === amount;
  // exactly, after NFC and trimming: an executor may compare logins, tags and keys byte for byte (`KATE`, `\u212Aate` are not `kate`)
  return claimValue.normalize('NFC').trim() === value.normalize('NFC').trim();
}

/**
 * The text a record's content hash covers: its content alone when it has no claims (so records
 * without claims hash exactly as they always did), else the content, a NUL separator and the
 * canonical JSON of the claims.
 */
export function hashedBody(content: string, claims: readonly Claim[] | undefined): string {
  if (claims === undefined || claims.length === 0) return content;
  return `${content}\u0000claims:${canonicalJson(claims.map((c) => ({ subject: c.subject, field: c.field, value: c.value })))}`;
}

/**
 * A derivation may not mint a claim (docs/design.md § Claims and intent): every claim of the new
 * record must equal ({@link claimKey}) a claim of one of its declared inputs.
 *
 * @param claims - the new record's claims.
 * @param inputs - the declared inputs' claims.
 * @throws MemauthError `CLAIM_NOT_IN_INPUTS` naming the first claim no input makes.
 */
export function checkDerivedClaims(claims: readonly Claim[], inputs: ReadonlyArray<readonly Claim[] | undefined>): void {
  const have = new Set<string>();
  for (const list of inputs) for (const c of list ?? []) have.add(claimKey(c));
  claims.forEach((c, i) => {
    if (!have.has(claimKey(c)))
      throw new MemauthError(
        'CLAIM_NOT_IN_INPUTS',
        `derive: claims[${i}] (${c.field} of ${JSON.stringify(c.subject.slice(0, 80))}) is not a claim of any declared input; a derivation can only restate its inputs' claims`,
        {
          index: i,
          field: `claims[${i}]`,
        },
      );
  });
}

/** A record as erased by delete: no content, no claims (docs/design.md § Deletion, retention, privacy). */
export function erasedRecord(r: MemoryRecord): MemoryRecord {
  const { claims: _claims, ...rest } = r;
  return { ...rest, content: null, status: 'deleted' };
}
