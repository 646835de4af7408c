/**
 * Command table of the vector commands: `reindex` (embed every record that has no vector for its
 * content under the configured embedder; progress bar on stderr; resumable) and `eval retrieval`
 * (recall@1/5/10 and MRR of lexical, semantic and hybrid search on the labelled set shipped in
 * data/retrieval-eval/; `--check` fails when hybrid is below lexical on any figure). See docs/embeddings.md.
 */
import { type RetrievalEvalResult, evalRetrieval, loadRetrievalSet } from '../../bench/retrieval/eval.js';
import { figuresBelow } from '../../bench/retrieval/score.js';
import { MemauthError } from '../../core/errors.js';
import { EXIT } from '../errors.js';
import { type Ctx, requireTenant, withMemory } from '../context.js';
import { embedderOf } from '../embedder-config.js';
import { createProgress } from '../progress.js';
import { type AnyCommand, command, group } from '../spec.js';

/** `reindex` → `Memory.reindex`, with a progress bar (unless --json or --no-progress). */
async function reindexCommand(ctx: Ctx, o: { progress?: boolean }): Promise<void> {
  const tenant = requireTenant(ctx);
  const bar = ctx.json || o.progress === false ? null : createProgress(process.stderr, 'reindex');
  const r = await withMemory(ctx, (mem) => mem.reindex({ tenant }, (p) => bar?.update(p.done, p.total, p.embedder)));
  bar?.finish();
  ctx.emit(r, () => `embedded ${r.done} record(s) of ${r.tenant} with ${r.embedder}; ${r.vectors} vector(s) in the index (run again to resume after an error)`);
}

const pct = (x: number): string => `${(100 * x).toFixed(1)}`.padStart(6);

/** The table `memauth eval retrieval` prints (also used by perf/retrieval-eval.ts). */
export function renderRetrievalEval(r: RetrievalEvalResult): string {
  const test = r.embedder.startsWith('test:') ? ' — the deterministic TEST embedder (checks the plumbing; not a model)' : '';
  return [
    `retrieval set: ${r.records} records, ${r.queries} queries; embedder ${r.embedder}${test}`,
    'figures in %, MRR 0..1; lexical = BM25, semantic = vector index, hybrid = RRF (k = 60) of both',
    '',
    `${'mode'.padEnd(9)}${'R@1'.padStart(6)}${'R@5'.padStart(6)}${'R@10'.padStart(6)}${'MRR'.padStart(7)}`,
    ...(['lexical', 'semantic', 'hybrid'] as const).map((m) => {
      const s = r.scores[m];
      return `${m.padEnd(9)}${pct(s.recallAt1)}${pct(s.recallAt5)}${pct(s.recallAt10)}${s.mrr.toFixed(3).padStart(7)}`;
    }),
    '',
    `time: write ${r.seconds.write} s, embed ${r.seconds.embed} s, ${r.queries * 3} searches ${r.seconds.search} s`,
  ].join('\n');
}

/**
 * `eval retrieval` → {@link evalRetrieval} on a temporary store (the embedder of the global flags; `--embedder test` in CI).
 * With `--check`: exit code 1 when hybrid is below lexical on any figure (the lines below name them, on stderr).
 */
async function evalRetrievalCommand(ctx: Ctx, o: { data?: string; progress?: boolean; check?: boolean }): Promise<number> {
  const embedder = embedderOf(ctx.embeddings);
  if (embedder === null)
    throw new MemauthError(
      'SEMANTIC_SEARCH_UNAVAILABLE',
      'eval retrieval needs an embedder: --embeddings-url/--embeddings-model/--embeddings-dimensions, or --embedder test (the deterministic test embedder, not a model)',
      {
        reason: 'no embedder is configured',
      },
    );
  const set = loadRetrievalSet(o.data);
  const bar = ctx.json || o.progress === false ? null : createProgress(process.stderr, 'embedding');
  const r = await evalRetrieval(set, embedder, (p) => bar?.update(p.done, p.total, p.embedder));
  bar?.finish();
  const below = figuresBelow({ name: 'hybrid', scores: r.scores.hybrid }, { name: 'lexical', scores: r.scores.lexical });
  ctx.emit(o.check === true ? { ...r, check: { passed: below.length === 0, below } } : r, () => renderRetrievalEval(r));
  if (o.check !== true) return EXIT.OK;
  process.stderr.write(below.length === 0 ? 'check passed: hybrid >= lexical on R@1, R@5, R@10 and MRR\n' : `check FAILED: hybrid below lexical on ${below.join('; ')}\n`);
  return below.length === 0 ? EXIT.OK : EXIT.FAILED;
}

/** `reindex` and the `eval` group. */
export const vectorCommands: readonly AnyCommand[] = [
  command({
    name: 'reindex',
    description: 'embed every record of the tenant that has no vector for its content under the configured embedder (after changing it, or to catch up failed embeds); resumable',
    options: [{ flags: '--no-progress', description: 'no progress bar on stderr' }],
    handler: reindexCommand,
  }),
  group('eval', 'measure retrieval quality'),
  command({
    name: 'eval retrieval',
    description: 'recall@1/5/10 and MRR of lexical, semantic and hybrid search on the bundled labelled set (needs an embedder; --embedder test in CI)',
    options: [
      { flags: '--data <file>', description: 'another retrieval set of the same shape' },
      { flags: '--no-progress', description: 'no progress bar on stderr' },
      { flags: '--check', description: 'exit code 1 when hybrid is below lexical on any figure (R@1, R@5, R@10, MRR)' },
    ],
    handler: evalRetrievalCommand,
  }),
];
