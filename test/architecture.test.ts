/**
 * The shape of src/ (docs/architecture.md): no import circle among its modules, src/core
 * pure (it imports nothing outside src/core), no file over 400 lines, and no function in the facade (src/api) or the stores (src/store)
 * over 60 lines. Reads the TypeScript sources (not dist/); type-only imports count as imports.
 */
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

const MAX_FILE_LINES = 400;
const MAX_FUNCTION_LINES = 60;
/** The rooms held to the function limit: the facade and its operations, and the stores. */
const FUNCTION_LIMIT_ROOMS = ['api/', 'store/'];

/** Every .ts file under src/, as a path relative to src/ with `/` separators. */
function sources(): string[] {
  return (readdirSync(SRC, { recursive: true }) as string[])
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))
    .map((f) => f.split(sep).join('/'))
    .sort();
}

const text = (file: string): string => readFileSync(join(SRC, file), 'utf8');

/** The src/-relative files `file` imports (relative specifiers only; `.js` resolved to `.ts`). */
function importsOf(file: string, known: ReadonlySet<string>): string[] {
  const out: string[] = [];
  const re = /(?:^|\n)\s*(?:import|export)\b[^'"`;]*?\bfrom\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g;
  for (const m of text(file).matchAll(re)) {
    const spec = m[1] ?? m[2] ?? m[3];
    if (spec === undefined || !spec.startsWith('.')) continue;
    const target = relative(SRC, resolve(dirname(join(SRC, file)), spec))
      .split(sep)
      .join('/')
      .replace(/\.js$/, '.ts');
    const resolved = known.has(target) ? target : known.has(`${target.replace(/\.ts$/, '')}/index.ts`) ? `${target.replace(/\.ts$/, '')}/index.ts` : target;
    out.push(resolved);
  }
  return out;
}

/** The import graph of src/. */
function graph(): Map<string, string[]> {
  const files = sources();
  const known = new Set(files);
  return new Map(files.map((f) => [f, importsOf(f, known).filter((t) => known.has(t))]));
}

/** One import circle per strongly connected component of more than one file (or a self-import). */
function cycles(g: ReadonlyMap<string, readonly string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    on.add(v);
    for (const w of g.get(v) ?? []) {
      if (!idx.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v) as number, idx.get(w) as number));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (g.get(v) ?? []).includes(v)) out.push(scc.sort());
    }
  };
  for (const v of g.keys()) if (!idx.has(v)) visit(v);
  return out;
}

test('no import circle in src/', () => {
  assert.deepEqual(cycles(graph()), []);
});

test('the import graph sees imports of every form (self-check)', () => {
  const g = graph();
  assert.ok(g.get('api/memory.ts')?.includes('api/records.ts'), 'import * as … from');
  assert.ok(g.get('api/memory.ts')?.includes('api/views.ts'), 'export type { … } from');
  assert.ok(g.get('api/metrics.ts')?.includes('api/memory.ts'), 'import type { … } from');
  assert.ok(g.get('index.ts')?.includes('api/open.ts'), 'export { … } from');
});

test('the cycle finder finds a circle (self-check)', () => {
  assert.deepEqual(
    cycles(
      new Map([
        ['a.ts', ['b.ts']],
        ['b.ts', ['c.ts']],
        ['c.ts', ['a.ts']],
        ['d.ts', ['a.ts']],
      ]),
    ),
    [['a.ts', 'b.ts', 'c.ts']],
  );
});

test('src/core imports nothing outside src/core', () => {
  const g = graph();
  const known = new Set(g.keys());
  const outside: string[] = [];
  for (const f of known) {
    if (!f.startsWith('core/')) continue;
    for (const t of importsOf(f, known)) if (!t.startsWith('core/')) outside.push(`${f} -> ${t}`);
  }
  assert.deepEqual(outside, []);
});

test(`no file in src/ over ${MAX_FILE_LINES} lines`, () => {
  const over = sources()
    .map((f) => ({ f, lines: text(f).split('\n').length - (text(f).endsWith('\n') ? 1 : 0) }))
    .filter((x) => x.lines > MAX_FILE_LINES)
    .map((x) => `${x.f}: ${x.lines}`);
  assert.deepEqual(over, []);
});

test(`no function in src/api or src/store over ${MAX_FUNCTION_LINES} lines`, () => {
  const over: string[] = [];
  for (const f of sources().filter((x) => FUNCTION_LIMIT_ROOMS.some((r) => x.startsWith(r)))) {
    const sf = ts.createSourceFile(f, text(f), ts.ScriptTarget.ES2022, true);
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
        const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
        const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
        if (end - start + 1 > MAX_FUNCTION_LINES) over.push(`${f}:${start + 1} (${end - start + 1} lines)`);
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  assert.deepEqual(over, []);
});
