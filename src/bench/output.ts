/**
 * `memauth bench --out DIR`: writes results.json, results.md and results.svg for a bench report.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderSvg } from './chart.js';
import { renderMarkdown, resultsJson } from './report.js';
import type { BenchReport } from './types.js';

/**
 * `--out DIR`: write results.json (schema-versioned: config, policy versions, summaries with
 * Wilson intervals, every trial), results.md (the tables) and results.svg (the chart).
 * @returns the paths written.
 */
export function writeResults(dir: string, report: BenchReport, now: Date = new Date()): string[] {
  mkdirSync(dir, { recursive: true });
  const files: Array<[string, string]> = [
    ['results.json', `${JSON.stringify(resultsJson(report, now), null, 2)}\n`],
    ['results.md', renderMarkdown(report)],
    ['results.svg', renderSvg(report)],
  ];
  const out: string[] = [];
  for (const [name, text] of files) {
    const p = join(dir, name);
    writeFileSync(p, text);
    out.push(p);
  }
  return out;
}
