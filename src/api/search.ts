/**
 * {@link Memory.search}: lexical (BM25), semantic (the vector index) or hybrid (reciprocal rank
 * fusion of the two) search in one tenant's scope (docs/design.md § Search). Both lists are
 * computed from the tenant's scope only — the filter is applied before ranking — so no score
 * depends on another tenant's data, and fusion reads only ranks (src/core/fusion.ts). Every hit
 * returned is marked read in the session exactly as a lexical hit is: whatever a record's rank
 * or how it was found, it then taints the session's later writes and decisions. Ranking decides
 * what is shown, never what a record may authorize (the gate does not read vectors or scores).
 * A hit on a version stands for its chain's current versions, all of them together when they
 * compete (api/versions.ts `resolveHits`), so no version can push a competing one out of view.
 *
 * May import: src/core/, src/store/, src/embed/embedder.ts, api/ modules below the facade.
 */
import { MemauthError, isMemauthError } from '../core/errors.js';
import { reciprocalRankFusion } from '../core/fusion.js';
import type { MemoryRecord } from '../core/types.js';
import { embedChecked } from '../embed/embedder.js';
import type { SearchHit } from '../store/driver.js';
import { MAX_K } from '../store/vector.js';
import { type In, type OpContext, nowOf } from './context.js';
import type { Indexer, SearchSetup } from './embeddings.js';
import { markRead, viewJudge } from './records.js';
import { parseInput, schemas } from './validation.js';
import { loadChains, resolveHits } from './versions.js';
import type { VersionsView } from './views.js';

/** How a search ranks: BM25 only, vector similarity only, or both fused (RRF, k = 60). */
export type SearchMode = 'lexical' | 'semantic' | 'hybrid';

/** A hit with the rank it had in each list (1-based; null where that list did not find it or did not run). */
export interface RankedHit extends SearchHit {
  readonly ranks: { readonly lexical: number | null; readonly semantic: number | null };
  /** the hit's chain when it has several versions: every version, the current ones, `conflict`. */
  readonly versions?: VersionsView;
}

/** What {@link Memory.searchWithInfo} returns: the hits, the mode that ran and why. */
export interface SearchResult {
  readonly hits: RankedHit[];
  readonly mode: SearchMode;
  /** why this mode ran, e.g. `default with an embedder`, `no embedder is configured`, `the embedder failed (EMBEDDER_UNAVAILABLE): lexical only`. */
  readonly reason: string;
  /** the embedder id used for the query, or null. */
  readonly embedder: string | null;
}

/** The mode to run: the one asked for, else hybrid with an indexer and lexical without. */
function resolveMode(asked: SearchMode | undefined, setup: SearchSetup): { mode: SearchMode; reason: string } {
  if (asked === 'lexical') return { mode: 'lexical', reason: 'lexical asked for' };
  if (asked !== undefined && setup.indexer === null)
    throw new MemauthError('SEMANTIC_SEARCH_UNAVAILABLE', `search mode ${asked} needs an embedder and a vector index: ${setup.reason}`, { field: 'mode', reason: setup.reason });
  if (asked !== undefined) return { mode: asked, reason: `${asked} asked for` };
  return setup.indexer === null ? { mode: 'lexical', reason: `lexical: ${setup.reason}` } : { mode: 'hybrid', reason: 'hybrid: the default with an embedder' };
}

/** Semantic hits of the scope as records: active, unexpired, with the content the vector was computed from; best first. */
async function semanticHits(ctx: OpContext, ix: Indexer, a: { tenant: string; scope: string; query: string }, k: number): Promise<SearchHit[]> {
  const [q] = await embedChecked(ix.embedder, [a.query]);
  const near = await ix.vectors.knn(a.tenant, ix.embedder.id, a.scope, q as Float32Array, k);
  const recs = new Map(
    (
      await ctx.driver.getRecords(
        a.tenant,
        near.map((h) => h.recordId),
      )
    ).map((r) => [r.id, r]),
  );
  const now = nowOf(ctx);
  const live = (r: MemoryRecord | undefined, hash: string): r is MemoryRecord =>
    r !== undefined && r.status === 'active' && r.scope === a.scope && r.contentHash === hash && (r.expiresAt === null || r.expiresAt > now);
  return near.flatMap((h) => {
    const r = recs.get(h.recordId);
    return live(r, h.contentHash) ? [{ record: r, score: h.score }] : [];
  });
}

/** Fuses the two lists (RRF) into at most `limit` hits, each with its RRF score and both ranks. */
function fuse(lex: readonly SearchHit[], sem: readonly SearchHit[], limit: number): RankedHit[] {
  const byId = new Map([...sem, ...lex].map((h) => [h.record.id, h.record]));
  const fused = reciprocalRankFusion([lex.map((h) => h.record.id), sem.map((h) => h.record.id)], { limit });
  return fused.map((f) => ({ record: byId.get(f.id) as MemoryRecord, score: f.score, ranks: { lexical: f.ranks[0] ?? null, semantic: f.ranks[1] ?? null } }));
}

/** The hits of `mode` (semantic and hybrid may fall back to lexical, see {@link searchWithInfo}). */
async function run(ctx: OpContext, setup: SearchSetup, a: { tenant: string; scope: string; query: string }, limit: number, mode: SearchMode): Promise<RankedHit[]> {
  const ix = setup.indexer as Indexer;
  if (mode === 'lexical') return (await ctx.driver.search(a.tenant, a.scope, a.query, limit, nowOf(ctx))).map((h, i) => ({ ...h, ranks: { lexical: i + 1, semantic: null } }));
  const depth = Math.min(MAX_K, Math.max(2 * limit, 50));
  if (mode === 'semantic') return (await semanticHits(ctx, ix, a, depth)).slice(0, limit).map((h, i) => ({ ...h, ranks: { lexical: null, semantic: i + 1 } }));
  const sem = await semanticHits(ctx, ix, a, depth);
  const lex = await ctx.driver.search(a.tenant, a.scope, a.query, depth, nowOf(ctx));
  return fuse(lex, sem, limit);
}

/** Rounds of a search that asks for more hits when versions of one chain folded into one entry. */
const SEARCH_ROUNDS = 3;
/** The most hits a search asks for while refilling. */
const MAX_SEARCH_WINDOW = 1000;

/**
 * The hits of `mode` with versions resolved (api/versions.ts `resolveHits`): at most `limit`
 * entries, a chain counting once; asks again for more when versions folded some and there are more.
 */
async function resolved(ctx: OpContext, setup: SearchSetup, a: { tenant: string; scope: string; query: string }, limit: number, mode: SearchMode): Promise<RankedHit[]> {
  let want = limit;
  let out: { hits: RankedHit[]; entries: number } = { hits: [], entries: 0 };
  for (let round = 0; round < SEARCH_ROUNDS; round++) {
    const raw = await run(ctx, setup, a, want, mode);
    const chains = await loadChains(
      ctx.driver,
      a.tenant,
      raw.map((h) => h.record),
      viewJudge(ctx, a.tenant),
    );
    out = resolveHits(raw, chains, limit);
    if (out.entries >= limit || raw.length < want || want >= MAX_SEARCH_WINDOW) break;
    want = Math.min(MAX_SEARCH_WINDOW, want * 4);
  }
  return out.hits;
}

/** The hits a search returns at most when it names no `limit`. */
export const DEFAULT_SEARCH_LIMIT = 10;

/**
 * {@link Memory.searchWithInfo}: the hits of the mode asked for (default: hybrid with an embedder,
 * lexical without), marked read in the session. In the default mode a failing embedder does not
 * fail the search: it runs lexical and `reason` says why; a mode asked for explicitly fails instead.
 *
 * @throws MemauthError SEMANTIC_SEARCH_UNAVAILABLE (semantic/hybrid asked for without an embedder
 *   or vector index), EMBEDDER_UNAVAILABLE / EMBEDDER_BAD_RESPONSE (mode asked for explicitly),
 *   SESSION_FORBIDDEN, INVALID_ARGUMENT, TENANT_REQUIRED.
 */
export async function searchWithInfo(ctx: OpContext, setup: SearchSetup, input: In<'search'>): Promise<SearchResult> {
  const a = parseInput(schemas.search, input, 'search');
  const limit = a.limit ?? DEFAULT_SEARCH_LIMIT;
  let { mode, reason } = resolveMode(a.mode, setup);
  let hits: RankedHit[];
  try {
    hits = await resolved(ctx, setup, a, limit, mode);
  } catch (e) {
    const embedFailed = isMemauthError(e) && (e.code === 'EMBEDDER_UNAVAILABLE' || e.code === 'EMBEDDER_BAD_RESPONSE');
    if (!embedFailed || a.mode !== undefined) throw e;
    ({ mode, reason } = { mode: 'lexical', reason: `lexical: the embedder failed (${e.code}); hybrid needs it` });
    hits = await resolved(ctx, setup, a, limit, 'lexical');
  }
  await markRead(
    ctx,
    a.tenant,
    a.session,
    hits.map((h) => h.record.id),
    a.requester ?? null,
  );
  return { hits, mode, reason, embedder: mode === 'lexical' ? null : (setup.indexer?.embedder.id ?? null) };
}
