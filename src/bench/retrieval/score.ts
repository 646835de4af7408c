/**
 * Scores a retriever on a labelled set: recall@k and mean reciprocal rank. Pure.
 *
 * recall@k of one query = |relevant ∩ top k| / |relevant|; MRR = mean over queries of 1 / (rank of
 * the first relevant hit), 0 when none is returned. Every figure is a mean over all queries, 0…1.
 */

/** The figures of one retriever. */
export interface RetrievalScores {
  readonly queries: number;
  readonly recallAt1: number;
  readonly recallAt5: number;
  readonly recallAt10: number;
  readonly mrr: number;
}

/**
 * @param runs - per query, the ranked ids returned (best first) and the relevant ids (non-empty).
 * @returns the mean figures; all 0 for no queries.
 * @throws RangeError for a query with no relevant id (a broken label file).
 */
export function scoreRetrieval(runs: readonly { readonly ranked: readonly string[]; readonly relevant: readonly string[] }[]): RetrievalScores {
  let r1 = 0;
  let r5 = 0;
  let r10 = 0;
  let mrr = 0;
  for (const { ranked, relevant } of runs) {
    if (relevant.length === 0) throw new RangeError('a query has no relevant record');
    const rel = new Set(relevant);
    const at = (k: number): number => new Set(ranked.slice(0, k).filter((id) => rel.has(id))).size / rel.size;
    r1 += at(1);
    r5 += at(5);
    r10 += at(10);
    const first = ranked.findIndex((id) => rel.has(id));
    mrr += first < 0 ? 0 : 1 / (first + 1);
  }
  const n = runs.length;
  const mean = (x: number): number => (n === 0 ? 0 : x / n);
  return { queries: n, recallAt1: mean(r1), recallAt5: mean(r5), recallAt10: mean(r10), mrr: mean(mrr) };
}

/** The figures of {@link RetrievalScores}, in table order, with their labels. */
export const FIGURES = [
  ['recallAt1', 'R@1'],
  ['recallAt5', 'R@5'],
  ['recallAt10', 'R@10'],
  ['mrr', 'MRR'],
] as const;

/**
 * The figures on which `worse` is below `better` — `memauth eval retrieval --check` requires none
 * for hybrid against lexical.
 *
 * @returns one line per figure below, e.g. `R@5: hybrid 12.0 < lexical 16.8` (recalls in %, MRR 0..1); empty when none is.
 */
export function figuresBelow(worse: { readonly name: string; readonly scores: RetrievalScores }, better: { readonly name: string; readonly scores: RetrievalScores }): string[] {
  const fmt = (key: (typeof FIGURES)[number][0], x: number): string => (key === 'mrr' ? x.toFixed(3) : (100 * x).toFixed(1));
  return FIGURES.filter(([key]) => worse.scores[key] < better.scores[key]).map(
    ([key, label]) => `${label}: ${worse.name} ${fmt(key, worse.scores[key])} < ${better.name} ${fmt(key, better.scores[key])}`,
  );
}
