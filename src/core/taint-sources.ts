/**
 * The bounded list of sources a taint carries (docs/design.md § Derivation and taint). A taint's
 * `sources` is the union of its inputs' sources — but only the first {@link MAX_TAINT_SOURCES} of
 * that union in sort order are kept, each at most {@link MAX_SOURCE_BYTES} bytes of UTF-8 (a longer
 * address keeps its first 200 bytes' characters and a digest of the whole, {@link boundedSource}). Without a bound, a
 * record derived from many pages, or a session that read many, would store every page's address on
 * each row, each audit entry and each session-log summary: a session's n-th read would store O(n)
 * bytes, and one derivation from many inputs written with long addresses megabytes. With it a
 * taint's sources hold at most 16 × 220 bytes (3.5 KB). The authority and channels stay exact; the record's
 * origin keeps its whole source; the lineage graph names every input. Pure.
 *
 * Keeping the smallest N of the shortened addresses is what makes the bound compose: shortening
 * is applied to each address alone, and the first N of a union are the first N of the union of
 * each part's first N — so folding capped summaries gives what capping the whole union gives, in
 * any order.
 */
import { createHash } from 'node:crypto';

/** At most this many sources on one taint. */
export const MAX_TAINT_SOURCES = 16;
/** A source longer than this many bytes (UTF-8) is kept as its first 200 bytes' whole characters and a digest. */
export const MAX_SOURCE_BYTES = 256;
/** The bytes (UTF-8) of a long source's head, cut before the character that would cross it. */
const HEAD_BYTES = 200;

/**
 * `s` itself when its UTF-8 has at most {@link MAX_SOURCE_BYTES} bytes, else its longest prefix of
 * whole characters (code points) within 200 bytes, `…#` and the first 16 hex digits of the
 * SHA-256 of its UTF-8 — at most 220 bytes, never half a character. Distinct long addresses stay
 * distinct; the same address always gives the same text. Idempotent.
 */
export function boundedSource(s: string): string {
  if (Buffer.byteLength(s, 'utf8') <= MAX_SOURCE_BYTES) return s;
  let head = '';
  let bytes = 0;
  for (const ch of s) {
    const n = Buffer.byteLength(ch, 'utf8');
    if (bytes + n > HEAD_BYTES) break;
    head += ch;
    bytes += n;
  }
  return `${head}…#${createHash('sha256').update(s, 'utf8').digest('hex').slice(0, 16)}`;
}

/** The first {@link MAX_TAINT_SOURCES} of the union of `lists` ({@link boundedSource} each), sorted, each once. */
export function capSources(...lists: ReadonlyArray<Iterable<string>>): string[] {
  const all = new Set<string>();
  for (const l of lists) for (const s of l) all.add(boundedSource(s));
  const sorted = [...all].sort();
  return sorted.length > MAX_TAINT_SOURCES ? sorted.slice(0, MAX_TAINT_SOURCES) : sorted;
}

/**
 * Does the list `held` account for source `s` — holds it once bounded ({@link capSources}), or is
 * full of sources that sort before it (so `s` was left out by the bound, not lost)? A list stored
 * before the bound (longer, addresses whole) is judged by its bounded form.
 */
export function sourcesCover(held: readonly string[], s: string): boolean {
  const b = boundedSource(s);
  const capped = capSources(held);
  if (capped.includes(b)) return true;
  const last = capped[capped.length - 1];
  return capped.length >= MAX_TAINT_SOURCES && last !== undefined && b > last;
}
