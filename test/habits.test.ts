/**
 * House habits that a reviewer would otherwise have to remember (issue 15, "Habits"): every
 * TypeScript file starts with a module header comment saying what it is for, and the helpers that
 * were once copied (the mulberry32 PRNG, the percentile, the temp directory) exist once.
 * Reads the source tree next to dist/ as text; runs nothing of it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (this file runs as dist/test/habits.test.js). */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Folders whose .ts files must start with a header comment. */
const DIRS = ['src', 'test', 'reliability', 'perf', 'formal/impl', 'examples'];

/**
 * Files that still lack a header, in rooms another change is rewriting. Empty is the goal: remove
 * an entry when its file gets a header (the test fails on an entry that has one, or is gone).
 */
const NO_HEADER_YET: readonly string[] = [];

function tsFiles(dir: string): string[] {
  const abs = join(ROOT, dir);
  if (!existsSync(abs)) return [];
  const out: string[] = [];
  for (const e of readdirSync(abs, { withFileTypes: true })) {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) {
      if (e.name !== 'node_modules') out.push(...tsFiles(rel));
    } else if (/\.(ts|mts|cts)$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

/**
 * The header comment a file opens with (after an optional `#!` line), as plain text; null when
 * its first line of code comes first, or the comment is only a tool directive.
 */
function moduleHeader(text: string): string | null {
  const body = text.replace(/^#!.*\n/, '').trimStart();
  let comment: string;
  if (body.startsWith('/*')) {
    const end = body.indexOf('*/');
    if (end < 0) return null;
    comment = body.slice(2, end).replace(/^\s*\*+ ?/gm, '');
  } else if (body.startsWith('//')) {
    const lines: string[] = [];
    for (const line of body.split('\n')) {
      if (!line.startsWith('//')) break;
      lines.push(line.slice(2));
    }
    comment = lines.join('\n');
  } else return null;
  const flat = comment.replace(/\s+/g, ' ').trim();
  if (/^(eslint|prettier-ignore|@ts-|global |jshint)/.test(flat)) return null;
  // a header says what the file is for: a few words at least
  return flat.split(' ').length >= 4 ? flat : null;
}

const ALL = DIRS.flatMap(tsFiles);

test('the header check reads block and line comments, and refuses code first or a bare directive', () => {
  assert.equal(moduleHeader('/**\n * The gate: decides actions.\n */\nimport x from "y";\n'), 'The gate: decides actions.');
  assert.equal(moduleHeader('#!/usr/bin/env node\n// The CLI entry point of memauth.\nimport "x";\n'), 'The CLI entry point of memauth.');
  assert.equal(moduleHeader('import x from "y";\n/** Later comment about things. */\n'), null);
  assert.equal(moduleHeader('/* eslint-disable no-console */\nimport x from "y";\n'), null);
});

test('every TypeScript file starts with a module header comment saying what it is for', () => {
  assert.ok(ALL.length > 100, `found only ${ALL.length} files under ${ROOT}`);
  const missing = ALL.filter((f) => !NO_HEADER_YET.includes(f) && moduleHeader(readFileSync(join(ROOT, f), 'utf8')) === null);
  assert.deepEqual(missing, [], `files without a module header comment (add one: what the file is for, and what it may import where relevant):\n  ${missing.join('\n  ')}`);
});

test('the allow-list of files without a header only names files that still lack one', () => {
  const stale = NO_HEADER_YET.filter((f) => !existsSync(join(ROOT, f)) || moduleHeader(readFileSync(join(ROOT, f), 'utf8')) !== null);
  assert.deepEqual(stale, [], `remove from NO_HEADER_YET in test/habits.test.ts (gone, or has a header now):\n  ${stale.join('\n  ')}`);
});

test('the PRNG, the percentile and the temp directory helper are defined once', () => {
  // (this file names the patterns it looks for, so it is left out)
  const defs = (re: RegExp): string[] => ALL.filter((f) => f !== 'test/habits.test.ts' && re.test(readFileSync(join(ROOT, f), 'utf8')));
  // mulberry32's increment constant: the PRNG itself, wherever it is called from
  assert.deepEqual(defs(/0x6d2b79f5/i), ['src/bench/stats.ts']);
  assert.deepEqual(defs(/function percentile\b|const percentile\s*=/), ['src/bench/stats.ts']);
  assert.deepEqual(defs(/function tempDir\b|const tempDir\s*=/), ['test/support/tmp.ts']);
});
