/**
 * Every relative link in README.md and docs/*.md resolves: the file exists and, when the link has
 * a #anchor into a markdown file, that file has a heading whose GitHub slug is the anchor.
 * Links inside code (fenced blocks and inline spans) are not links and are skipped.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { it } from 'node:test';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The markdown text outside fenced code blocks, one string per line (fenced lines blanked). */
function proseLines(text: string): string[] {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line;
  });
}

/** GitHub's heading anchor (github-slugger): lower case, punctuation dropped, spaces to hyphens. */
function githubSlug(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** The anchors of a markdown file's headings, numbered like GitHub's for repeated headings. */
function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of proseLines(readFileSync(file, 'utf8'))) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = githubSlug(m[1] ?? '');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Relative link targets of a markdown file (inline code removed first). */
function linksOf(file: string): string[] {
  const out: string[] = [];
  for (const line of proseLines(readFileSync(file, 'utf8'))) {
    const prose = line.replace(/`[^`]*`/g, '');
    for (const m of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1] ?? '';
      if (!/^[a-z][a-z0-9+.-]*:/i.test(target)) out.push(target);
    }
  }
  return out;
}

const pages = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

it('the GitHub slug rules give the anchors GitHub gives', () => {
  assert.equal(githubSlug('Vercel AI SDK — `memauth/ai-sdk`'), 'vercel-ai-sdk--memauthai-sdk');
  assert.equal(githubSlug('Results (worst-case agent, `--defenses all`, 1 trial per cell, seed 1)'), 'results-worst-case-agent---defenses-all-1-trial-per-cell-seed-1');
  assert.equal(githubSlug('Deletion, retention, privacy'), 'deletion-retention-privacy');
});

for (const page of pages) {
  it(`every relative link in ${page} resolves`, () => {
    const problems: string[] = [];
    for (const link of linksOf(path.join(ROOT, page))) {
      const [target = '', anchor] = link.split('#', 2);
      const rel = target === '' ? page : path.posix.normalize(path.posix.join(path.posix.dirname(page), decodeURI(target)));
      const file = path.join(ROOT, rel);
      if (!existsSync(file)) {
        problems.push(`${link}: no file ${rel}`);
        continue;
      }
      if (anchor !== undefined && rel.endsWith('.md') && !anchorsOf(file).has(decodeURIComponent(anchor))) {
        problems.push(`${link}: no heading #${anchor} in ${rel}`);
      }
    }
    assert.deepEqual(problems, []);
  });
}
