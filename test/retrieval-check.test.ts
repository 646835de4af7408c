/**
 * The retrieval-quality gate CI runs: the built CLI's `memauth eval retrieval --embedder test
 * --check` over the whole bundled set (2,200 records, 250 queries; about 30 s on a loaded 2-core
 * machine) exits 0 only when hybrid search is at least lexical on recall@1/5/10 and MRR, and the
 * check itself names every figure that is below.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { FIGURES, type RetrievalScores, figuresBelow } from '../src/bench/retrieval/score.js';

const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));

const scores = (r1: number, r5: number, r10: number, mrr: number): RetrievalScores => ({ queries: 10, recallAt1: r1, recallAt5: r5, recallAt10: r10, mrr });

describe('figuresBelow', () => {
  it('names each figure below, none when every figure is at least as high', () => {
    const lexical = { name: 'lexical', scores: scores(0.1, 0.2, 0.3, 0.15) };
    assert.deepEqual(figuresBelow({ name: 'hybrid', scores: scores(0.1, 0.5, 0.6, 0.4) }, lexical), []);
    assert.deepEqual(figuresBelow({ name: 'hybrid', scores: scores(0.05, 0.2, 0.29, 0.2) }, lexical), ['R@1: hybrid 5.0 < lexical 10.0', 'R@10: hybrid 29.0 < lexical 30.0']);
    assert.deepEqual(figuresBelow({ name: 'hybrid', scores: scores(0.1, 0.2, 0.3, 0.149) }, lexical), ['MRR: hybrid 0.149 < lexical 0.150']);
    assert.equal(FIGURES.length, 4);
  });
});

describe('memauth eval retrieval --embedder test --check', () => {
  it('runs the bundled set and finds hybrid at least lexical on every figure', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'memauth-evalcheck-'));
    try {
      const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, 'eval', 'retrieval', '--embedder', 'test', '--check', '--json'], {
        cwd,
        env: Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MEMAUTH_'))),
        timeout: 300_000,
        maxBuffer: 1 << 24,
      });
      const r = JSON.parse(stdout) as { records: number; queries: number; scores: Record<'lexical' | 'semantic' | 'hybrid', RetrievalScores>; check: { passed: boolean; below: string[] } };
      assert.ok(r.records >= 2000 && r.queries >= 200, `${r.records} records, ${r.queries} queries`);
      for (const [key, label] of FIGURES) assert.ok(r.scores.hybrid[key] >= r.scores.lexical[key], `${label}: hybrid ${r.scores.hybrid[key]} < lexical ${r.scores.lexical[key]}`);
      assert.deepEqual(r.check, { passed: true, below: [] });
      assert.match(stderr, /check passed/);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
