/**
 * Byte sizes in the server configuration (src/server/config.ts): every size setting — the body
 * limit, the external and tool per-record and per-minute byte budgets — takes a number of bytes or
 * one with a unit (`512kb`, `1mib`, `1.5MiB`, `10gb`; 1 kb = 1024 bytes), from the environment,
 * a flag or the config file alike; anything else is INVALID_ARGUMENT naming the setting, where it
 * came from and the units it takes; a size out of range says the bound in units.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { MemauthError } from '../src/core/errors.js';
import { resolveConfig } from '../src/server/config.js';
import { tempDir } from './helpers.js';

const refusal = (fn: () => unknown): MemauthError => {
  try {
    fn();
  } catch (e) {
    return e as MemauthError;
  }
  assert.fail('expected a refusal');
};

test('sizes with units, from the environment, flags and the config file', () => {
  const env = { MEMAUTH_TOOL_MAX_CONTENT: '512kb', MEMAUTH_TOOL_WRITE_BYTES_PER_MINUTE: '10gb', MEMAUTH_EXTERNAL_MAX_CONTENT: '1mib', MEMAUTH_EXTERNAL_WRITE_BYTES_PER_MINUTE: '1.5MiB' };
  const c = resolveConfig({ env });
  assert.equal(c.toolMaxContentBytes, 512 * 1024);
  assert.equal(c.toolWriteBytesPerMinute, 10 * 1024 ** 3);
  assert.equal(c.externalMaxContentBytes, 1024 * 1024);
  assert.equal(c.externalWriteBytesPerMinute, 1.5 * 1024 * 1024);
  assert.equal(resolveConfig({ env: { MEMAUTH_BODY_LIMIT: '4 MB' } }).bodyLimit, 4 * 1024 * 1024);
  assert.equal(resolveConfig({ flags: { bodyLimit: '1g' } }).bodyLimit, 1024 ** 3);
  const file = path.join(tempDir(), 'c.json');
  writeFileSync(file, JSON.stringify({ toolMaxContentBytes: '2mb', toolWriteBytesPerMinute: 4096 }));
  const f = resolveConfig({ configFile: file });
  assert.deepEqual([f.toolMaxContentBytes, f.toolWriteBytesPerMinute], [2 * 1024 * 1024, 4096]);
});

test('garbage and out-of-range sizes are refused with the setting, its source and the units', () => {
  for (const v of ['garbage', '10 tb', '-5', '1e3', '12 kilobytes', 'kb']) {
    const e = refusal(() => resolveConfig({ env: { MEMAUTH_TOOL_MAX_CONTENT: v } }));
    assert.equal(e.code, 'INVALID_ARGUMENT', v);
    assert.match(e.message, /\$MEMAUTH_TOOL_MAX_CONTENT: invalid toolMaxContentBytes/);
    assert.match(e.message, /unit b, kb, mb or gb/, v);
  }
  assert.match(refusal(() => resolveConfig({ env: { MEMAUTH_TOOL_MAX_CONTENT: '10gb' } })).message, /at most 100mb/);
  assert.match(refusal(() => resolveConfig({ flags: { bodyLimit: '5' } })).message, /--body-limit: .*at least 1kb/);
});
