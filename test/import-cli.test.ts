/**
 * `memauth import` through the BUILT CLI (dist/src/cli/main.js), as a user runs it: exit codes,
 * --json report, and what lands in the store.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';

const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const EXAMPLES = fileURLToPath(new URL('../../examples/import/', import.meta.url));

function memauth(cwd: string, args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
  const env = { ...process.env };
  for (const k of ['MEMAUTH_DB', 'MEMAUTH_POLICY', 'MEMAUTH_TENANT', 'MEMAUTH_DEBUG']) delete env[k];
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, env, encoding: 'utf8', timeout: 60_000 });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('memauth import (CLI)', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'memauth-import-cli-'));
    assert.equal(memauth(dir, ['init']).status, 0);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('imports an MCP memory file, reports counts and bad lines, and exits 0', () => {
    const r = memauth(dir, ['--tenant', 'acme', 'import', '--format', 'mcp-memory', '--file', path.join(EXAMPLES, 'memory.jsonl'), '--scope', 'imported', '--json']);
    assert.equal(r.status, 0, r.stderr);
    const rep = JSON.parse(r.stdout) as { read: number; imported: number; duplicates: number; skipped: number; problems: Array<{ line: number; reason: string }>; authorities: Record<string, number> };
    assert.deepEqual([rep.read, rep.imported, rep.duplicates, rep.skipped], [9, 7, 0, 2]);
    assert.deepEqual(
      rep.problems.map((p) => [p.line, p.reason]),
      [
        [6, 'invalid_item'],
        [7, 'invalid_json'],
      ],
    );
    assert.deepEqual(rep.authorities, { external_untrusted: 7 });
    const list = JSON.parse(memauth(dir, ['--tenant', 'acme', 'list', '--scope', 'imported', '--json']).stdout) as Array<{ origin: { authority: string; principalId: string; sourceRef: string } }>;
    assert.equal(list.length, 7);
    assert.ok(list.every((x) => x.origin.authority === 'external_untrusted' && x.origin.principalId === 'import' && x.origin.sourceRef.startsWith('import:mcp-memory:memory.jsonl#')));
    const human = memauth(dir, ['--tenant', 'acme', 'import', '--format', 'mcp-memory', '--file', path.join(EXAMPLES, 'memory.jsonl'), '--scope', 'imported']);
    assert.equal(human.status, 0);
    assert.match(human.stdout, /imported 0 of 9 items/);
    assert.match(human.stdout, /duplicates {2}7/);
    assert.match(human.stdout, /line 6 +invalid_item/);
  });

  it('imports a mem0 export', () => {
    const r = memauth(dir, ['--tenant', 'acme', 'import', '--format', 'mem0', '--file', path.join(EXAMPLES, 'mem0-export.json'), '--scope', 'mem0', '--json']);
    assert.equal(r.status, 0, r.stderr);
    const rep = JSON.parse(r.stdout) as { imported: number; skippedByReason: Record<string, number> };
    assert.equal(rep.imported, 2);
    assert.deepEqual(rep.skippedByReason, { expired: 1, invalid_item: 1 });
  });

  it('exits 2 for --strict with a bad line, a trust above model_inferred, or no tenant', () => {
    const file = path.join(EXAMPLES, 'memory.jsonl');
    const strict = memauth(dir, ['--tenant', 'acme', 'import', '--format', 'mcp-memory', '--file', file, '--scope', 'strict', '--strict']);
    assert.equal(strict.status, 2);
    assert.match(strict.stderr, /error INVALID_ARGUMENT: .*line 6.*nothing was imported/);
    assert.equal((JSON.parse(memauth(dir, ['--tenant', 'acme', 'list', '--scope', 'strict', '--json']).stdout) as unknown[]).length, 0);
    assert.equal(memauth(dir, ['--tenant', 'acme', 'import', '--format', 'mcp-memory', '--file', file, '--scope', 's', '--trust', 'user_confirmed']).status, 2);
    assert.equal(memauth(dir, ['import', '--format', 'mcp-memory', '--file', file, '--scope', 's']).status, 2);
  });
});
