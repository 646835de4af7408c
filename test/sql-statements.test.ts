/**
 * The shared SQL layer's statements whose row count varies (src/store/sql/statements.ts): the
 * number of distinct statement texts stays bounded whatever the count, and no statement binds
 * more parameters than an engine accepts. Each distinct text is a prepared statement kept for the
 * life of a connection, and an agent controls the count (a write in a session derives from every
 * record read before it when stored one edge each; its session log grows with every read).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MemoryRecord } from '../src/core/types.js';
import { postgresDialect, sqliteDialect } from '../src/store/sql/dialect.js';
import { insertDerivations, insertSessionLog } from '../src/store/sql/statements.js';

/** SQLite's default SQLITE_MAX_VARIABLE_NUMBER; PostgreSQL allows 65,535. */
const SQLITE_MAX_VARIABLES = 32_766;

const recordWith = (edges: number): MemoryRecord =>
  ({ id: 'mem_x', derivedFrom: Array.from({ length: edges }, (_, i) => ({ from: `mem_${i}`, transform: 'context', kind: 'context' })) }) as unknown as MemoryRecord;

for (const [name, dialect] of [
  ['sqlite', sqliteDialect],
  ['postgres', postgresDialect],
] as const) {
  test(`[${name}] derivation edges: every count from 1 to 3,000 (and 20,000) uses at most 8 statement texts, each under the parameter limit, every edge once in order`, () => {
    const texts = new Set<string>();
    for (const n of [...Array.from({ length: 3000 }, (_, i) => i + 1), 20_000]) {
      const stmts = insertDerivations(dialect, recordWith(n));
      const ords = stmts.flatMap((s) => s.values.filter((_, i) => i % 5 === 1));
      assert.deepEqual(
        ords,
        Array.from({ length: n }, (_, i) => i),
        `${n} edges: ord 0..${n - 1} once each, in order`,
      );
      for (const s of stmts) {
        texts.add(s.text);
        assert.ok(s.values.length <= SQLITE_MAX_VARIABLES, `${s.values.length} parameters`);
      }
    }
    assert.ok(texts.size <= 8, `${texts.size} distinct statement texts`);
    assert.deepEqual(insertDerivations(dialect, recordWith(0)), []);
  });

  test(`[${name}] session log: every count of entries from 1 to 1,000 uses at most 7 statement texts, every entry once in order`, () => {
    const texts = new Set<string>();
    for (let n = 1; n <= 1000; n++) {
      const entries = Array.from({ length: n }, (_, i) => ({
        ord: i + 1,
        recordId: `mem_${i}`,
        hash: 'h',
        summary: { lowestAuthority: 'model_inferred' as const, channels: [], sources: [], oldestSourceAt: 'a' },
      }));
      const stmts = insertSessionLog(dialect, 't', 's', entries, '2026-01-01T00:00:00.000Z');
      assert.deepEqual(
        stmts.flatMap((s) => s.values.filter((_, i) => i % 7 === 2)),
        entries.map((e) => e.ord),
      );
      for (const s of stmts) texts.add(s.text);
    }
    assert.ok(texts.size <= 7, `${texts.size} distinct statement texts`);
  });
}
