/**
 * Pins the public surface of src/index.ts: a change to this list must be deliberate
 * (STYLE.md: a curated public surface; a test pins the export list).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as memauth from '../src/index.js';

const EXPECTED = [
  'ARGUMENT_TYPES',
  'AUTHORITIES',
  'CHANNELS',
  'DEFAULT_POLICY',
  'ERROR_CODES',
  'IMPORT_FORMATS',
  'IMPORT_TRUST',
  'KIND_CEILING',
  'MAX_DIMENSIONS',
  'MODES',
  'MemauthError',
  'Memory',
  'PRINCIPAL_KINDS',
  'PolicySchema',
  'REASON_CODES',
  'SKIP_REASONS',
  'SqliteDriver',
  'TIERS',
  'TRANSFORMS',
  'TRUSTED_THRESHOLD',
  'argsHashOf',
  'atLeast',
  'canonicalJson',
  'checkpointSignatureValid',
  'decide',
  'embedderId',
  'entryHash',
  'fromFunction',
  'fromLangChain',
  'genesisHash',
  'hashCanonical',
  'importMemories',
  'isMemauthError',
  'loadPolicy',
  'maxAuthority',
  'minAuthority',
  'openAiCompatibleEmbedder',
  'openMemory',
  'originAuthority',
  'parseMcpMemory',
  'parseMem0',
  'rank',
  'riskTier',
  'sourceAuthority',
  'testEmbedder',
  'verifyChain',
];

test('the runtime export list of src/index.ts is pinned', () => {
  assert.deepEqual(Object.keys(memauth).sort(), EXPECTED);
});

test('the subpath integrations export the same pinned surface', async () => {
  const surface = ['HOW_TO_PROCEED_CONFIRM', 'HOW_TO_PROCEED_NEVER', 'ToolGate', 'actionArgs', 'gateTools', 'isToolDenial', 'memoryTools'];
  for (const spec of ['memauth/ai-sdk', 'memauth/langchain']) {
    const mod = (await import(spec)) as Record<string, unknown>;
    // the AI SDK subpath also carries the AI SDK embedder adapter (docs/embeddings.md)
    assert.deepEqual(Object.keys(mod).sort(), spec === 'memauth/ai-sdk' ? [...surface, 'fromAiSdk'].sort() : surface, spec);
  }
});

test('memauth/postgres exports the PostgreSQL driver only, and the main entry never loads pg', async () => {
  const mod = (await import('memauth/postgres')) as Record<string, unknown>;
  assert.deepEqual(Object.keys(mod).sort(), ['PostgresDriver', 'mapPgError']);
  // pg is imported only under src/store/postgres/ (STYLE.md: the core never imports a driver package)
  const { readdirSync, readFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { fileURLToPath } = await import('node:url');
  const root = fileURLToPath(new URL('../src/', import.meta.url));
  const files = (readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.js'));
  const importers = files.filter((f) => /from ['"]pg['"]/.test(readFileSync(join(root, f), 'utf8'))).sort();
  assert.ok(importers.includes(join('store', 'postgres', 'driver.js')), importers.join(', '));
  for (const f of importers) assert.ok(f.startsWith(join('store', 'postgres') + '/'), `${f} imports pg outside src/store/postgres/`);
});

test('no default export; every export is defined', () => {
  assert.equal((memauth as Record<string, unknown>).default, undefined);
  for (const k of Object.keys(memauth)) assert.notEqual((memauth as Record<string, unknown>)[k], undefined, k);
});

test('exported constants are frozen or read-only tuples with the documented values', () => {
  assert.deepEqual([...memauth.AUTHORITIES], ['external_untrusted', 'model_inferred', 'trusted_tool_verified', 'user_confirmed', 'system_policy']);
  assert.equal(memauth.TRUSTED_THRESHOLD, 'trusted_tool_verified');
  assert.deepEqual([...memauth.REASON_CODES], ['untrusted_origin', 'missing_corroboration', 'needs_confirmation', 'metadata_missing', 'deleted_source', 'expired', 'untrusted_requester', 'conflict']);
  assert.deepEqual([...memauth.TRANSFORMS], ['summarize', 'extract', 'merge', 'dedup', 'rewrite', 'import', 'embed']);
  assert.ok(Object.isFrozen(memauth.KIND_CEILING));
});
