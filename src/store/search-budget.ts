/**
 * The bound on the matches a lexical search ranks, shared by both drivers (SQLite's BM25 in
 * ./sqlite/native.ts, PostgreSQL's `ts_rank` in ./postgres/search.ts): which of a query's words
 * are scored, from each word's matches in the asked scope. Pure: the drivers count, this decides.
 *
 * May import: nothing.
 */

/**
 * How many index matches a search ranks at most (the sum of its ranked words' matches in the
 * scope). Ranking reads each match's index row (BM25) or tsvector (`ts_rank`), so ranking every
 * match of a word present in every record costs time linear in the records; this bound keeps a
 * search's cost independent of them. Each word's matches are counted up to `RANKED_MATCHES + 1`.
 */
export const RANKED_MATCHES = 2048;

/** One query word and its matches in the scope, counted up to {@link RANKED_MATCHES} + 1. */
export interface WordMatches {
  readonly word: string;
  readonly matches: number;
}

/**
 * The words a search ranks, in the query's order: the rarest first (fewest matches; ties keep the
 * query's order), taken while their matches add up to at most {@link RANKED_MATCHES}. A query whose
 * words all fit returns every word (then the search ranks exactly as over every match); a word
 * matching more than the bound is never ranked.
 *
 * @param counted - each word of the query once, in the query's order, with its capped count.
 * @returns the ranked words, a subsequence of `counted`'s words (source: docs/design.md § Search and tenant isolation).
 */
export function wordsToRank(counted: readonly WordMatches[]): string[] {
  const kept = new Set<string>();
  let total = 0;
  for (const { word, matches } of [...counted].sort((a, b) => a.matches - b.matches)) {
    if (total + matches > RANKED_MATCHES) break;
    total += matches;
    kept.add(word);
  }
  return counted.filter((c) => kept.has(c.word)).map((c) => c.word);
}
