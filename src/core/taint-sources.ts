/**
 * The bounded list of sources a taint carries (docs/design.md § Derivation and taint). A taint's
 * `sources` is the union of its inputs' sources — but only the first {@link MAX_TAINT_SOURCES} of
 * that union in sort order are kept. Without a bound, a record derived from many pages, or a
 * session that read many, would store every page's address on each row, each audit entry and
 * each session-log summary: a session's n-th read would store O(n) bytes, and one derivation from
 * many inputs written with long addresses megabytes. The authority and channels stay exact; the
 * lineage graph still names every input. Pure.
 *
 * Keeping the smallest N is what makes the bound compose: the first N of a union are the first N
 * of the union of each part's first N, so folding capped summaries gives what capping the whole
 * union gives, in any order.
 */

/** At most this many sources on one taint. */
export const MAX_TAINT_SOURCES = 16;

/** The first {@link MAX_TAINT_SOURCES} of the union of `lists`, sorted, each once. */
export function capSources(...lists: ReadonlyArray<Iterable<string>>): string[] {
  const all = new Set<string>();
  for (const l of lists) for (const s of l) all.add(s);
  const sorted = [...all].sort();
  return sorted.length > MAX_TAINT_SOURCES ? sorted.slice(0, MAX_TAINT_SOURCES) : sorted;
}

/**
 * Does the capped list `held` account for source `s` — holds it, or is full of sources that sort
 * before it (so `s` was left out by the bound, not lost)? A list longer than the bound (stored
 * before it) is judged the same way.
 */
export function sourcesCover(held: readonly string[], s: string): boolean {
  if (held.includes(s)) return true;
  const last = held[held.length - 1];
  return held.length >= MAX_TAINT_SOURCES && last !== undefined && s > last;
}
