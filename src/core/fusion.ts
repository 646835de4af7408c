/**
 * Hybrid ranking: reciprocal rank fusion (RRF) of several ranked lists of record ids.
 *
 * RRF scores each id by the sum over the lists that contain it of `1 / (k + rank)`, ranks from 1,
 * with k = 60 by default — the method and constant of Cormack, Clarke & Büttcher, "Reciprocal
 * Rank Fusion outperforms Condorcet and individual Rank Learning Methods", SIGIR 2009. It reads
 * only ranks, never the lists' own scores, so a BM25 score and a cosine similarity need no common
 * scale, and the fused order depends on nothing but the lists given (which the stores compute
 * from one tenant's scope only: docs/design.md § Search and tenant isolation).
 *
 * Deterministic: equal fused scores are ordered by id (ascending, code-unit order); an id listed
 * twice in one list counts at its first (best) rank only. Ranking decides what an agent sees,
 * never what a record may authorize (docs/design.md § Threat model). Pure; imports nothing.
 */

/** One fused hit: the id, its RRF score, and its 1-based rank in each input list (null where absent). */
export interface FusedHit {
  readonly id: string;
  readonly score: number;
  readonly ranks: readonly (number | null)[];
}

/** The RRF constant of Cormack, Clarke & Büttcher (2009). */
export const RRF_K = 60;

/**
 * Fuses ranked lists by reciprocal rank fusion.
 *
 * @param lists - ranked lists of ids, best first (e.g. `[lexicalIds, semanticIds]`); any may be empty.
 * @param opts.k - the RRF constant, a finite number ≥ 0 (default {@link RRF_K}).
 * @param opts.limit - at most this many hits (default: all).
 * @param opts.weights - one non-negative finite weight per list (default 1 each): list i adds `weights[i] / (k + rank)`.
 * @returns hits by fused score descending, then id ascending.
 * @throws RangeError for a negative or non-finite `k`, a negative `limit`, or weights that are not one non-negative finite number per list (a programming error, not input).
 */
export function reciprocalRankFusion(lists: readonly (readonly string[])[], opts: { k?: number; limit?: number; weights?: readonly number[] } = {}): FusedHit[] {
  const k = opts.k ?? RRF_K;
  if (!Number.isFinite(k) || k < 0) throw new RangeError(`RRF k must be a finite number >= 0, got ${k}`);
  const weights = opts.weights ?? lists.map(() => 1);
  if (weights.length !== lists.length || weights.some((w) => !Number.isFinite(w) || w < 0)) throw new RangeError('RRF weights: one non-negative finite number per list');
  if (opts.limit !== undefined && (!Number.isInteger(opts.limit) || opts.limit < 0)) throw new RangeError('RRF limit must be a non-negative integer');
  const acc = new Map<string, { parts: number[]; ranks: (number | null)[] }>();
  lists.forEach((list, li) => {
    list.forEach((id, i) => {
      let e = acc.get(id);
      if (e === undefined) {
        e = { parts: [], ranks: lists.map(() => null) };
        acc.set(id, e);
      }
      if (e.ranks[li] !== null) return;
      e.ranks[li] = i + 1;
      e.parts.push((weights[li] as number) / (k + i + 1));
    });
  });
  // summed in ascending order: the same contributions give the same score whatever the lists' order
  const out = [...acc].map(([id, e]) => ({ id, score: e.parts.sort((a, b) => a - b).reduce((s, x) => s + x, 0), ranks: e.ranks }));
  out.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return opts.limit === undefined ? out : out.slice(0, opts.limit);
}
