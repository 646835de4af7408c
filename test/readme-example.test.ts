/**
 * The README's library example runs as printed: its ```js block (under "## Library example") is
 * run against the built package in a fresh directory, and its output must be the ```text block
 * that follows it. Keeps the first example a user copies honest.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { it } from 'node:test';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The first fenced block of `lang` after `from` in `text`, without its fences. */
function fencedBlock(text: string, lang: string, from: number): { body: string; end: number } {
  const open = text.indexOf('```' + lang + '\n', from);
  assert.ok(open >= 0, `no \`\`\`${lang} block after offset ${from}`);
  const start = open + lang.length + 4;
  const close = text.indexOf('\n```', start);
  assert.ok(close >= 0, `unterminated \`\`\`${lang} block`);
  return { body: text.slice(start, close + 1), end: close + 4 };
}

it("README's library example prints what the README says it prints", () => {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const section = readme.indexOf('\n## Library example\n');
  assert.ok(section >= 0, 'README has a "## Library example" section');
  const code = fencedBlock(readme, 'js', section);
  const expected = fencedBlock(readme, 'text', code.end).body;
  assert.match(code.body, /from 'memauth'/);
  const entry = pathToFileURL(path.join(ROOT, 'dist/src/index.js')).href;
  const dir = mkdtempSync(path.join(tmpdir(), 'memauth-readme-'));
  try {
    const file = path.join(dir, 'example.mjs');
    writeFileSync(file, code.body.replaceAll("from 'memauth'", `from '${entry}'`));
    const r = spawnSync(process.execPath, [file], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.equal(r.stdout, expected);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
