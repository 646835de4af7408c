/**
 * The embedder of the `memauth` program and server (docs/embeddings.md, docs/cli.md): an
 * OpenAI-compatible `/v1/embeddings` endpoint named by URL, model and dimensions — from the global
 * flags `--embeddings-url`, `--embeddings-model`, `--embeddings-dimensions`, their variables
 * ($MEMAUTH_EMBEDDINGS_URL, …_MODEL, …_DIMENSIONS) or the server's config file (`embeddings`) —
 * with the key only from $MEMAUTH_EMBEDDINGS_KEY (never a flag: flags show in `ps`); or the
 * deterministic test embedder (`--embedder test`, $MEMAUTH_EMBEDDER=test: CI and demos, not a
 * model). Nothing configured: no embedder, search is lexical.
 *
 * May import: src/core/, src/embed/, src/api/ (types), src/server/config.ts (the config file's shape).
 */
import { MemauthError } from '../core/errors.js';
import type { Embedder } from '../embed/embedder.js';
import { openAiCompatibleEmbedder } from '../embed/openai-compatible.js';
import { testEmbedder } from '../embed/test-embedder.js';
import type { ServerConfig } from '../server/config.js';
import type { Memory } from '../api/memory.js';

/** The embedder settings, wherever they come from (each optional). */
export interface EmbedderSettings {
  /** `test` for the deterministic test embedder. */
  readonly embedder?: string | undefined;
  readonly embeddingsUrl?: string | undefined;
  readonly embeddingsModel?: string | undefined;
  readonly embeddingsDimensions?: string | number | undefined;
}

/** The settings of a config file's `embeddings` object. */
export function settingsOfFile(e: ServerConfig['embeddings']): EmbedderSettings {
  if (e === undefined) return {};
  return { embedder: e.test === true ? 'test' : undefined, embeddingsUrl: e.url, embeddingsModel: e.model, embeddingsDimensions: e.dimensions };
}

/** `a` where it sets a field, else `b` (flags and variables over the file). */
export function mergeSettings(a: EmbedderSettings, b: EmbedderSettings): EmbedderSettings {
  return {
    embedder: a.embedder ?? b.embedder,
    embeddingsUrl: a.embeddingsUrl ?? b.embeddingsUrl,
    embeddingsModel: a.embeddingsModel ?? b.embeddingsModel,
    embeddingsDimensions: a.embeddingsDimensions ?? b.embeddingsDimensions,
  };
}

const set = (v: string | number | undefined): boolean => v !== undefined && v !== '';

/**
 * The configured embedder, or null when none is.
 *
 * @param env - the process environment (for $MEMAUTH_EMBEDDINGS_KEY).
 * @throws MemauthError INVALID_ARGUMENT when the settings are incomplete (a URL without a model or
 *   dimensions, or the reverse), the dimensions are not an integer from 1 to 16000, `embedder` is
 *   not `test`, or the URL is refused by the client (not http(s), or carrying a password).
 */
export function embedderOf(s: EmbedderSettings, env: NodeJS.ProcessEnv = process.env): Embedder | null {
  const dims = set(s.embeddingsDimensions) ? Number(s.embeddingsDimensions) : undefined;
  if (set(s.embedder)) {
    if (s.embedder !== 'test')
      throw new MemauthError('INVALID_ARGUMENT', `--embedder ${JSON.stringify(s.embedder)}: the only named embedder is "test" (use --embeddings-url for a real one)`, { field: 'embedder' });
    return testEmbedder(dims ?? 384);
  }
  const given = [s.embeddingsUrl, s.embeddingsModel, s.embeddingsDimensions].filter(set).length;
  if (given === 0) return null;
  if (given < 3 || dims === undefined)
    throw new MemauthError('INVALID_ARGUMENT', 'an embeddings endpoint needs all of --embeddings-url, --embeddings-model and --embeddings-dimensions (or their MEMAUTH_EMBEDDINGS_* variables)', {
      field: 'embeddings',
    });
  const key = env.MEMAUTH_EMBEDDINGS_KEY;
  return openAiCompatibleEmbedder({ url: s.embeddingsUrl as string, model: s.embeddingsModel as string, dimensions: dims, ...(key !== undefined && key !== '' ? { apiKey: key } : {}) });
}

/**
 * One line on search for `memauth init`/`serve`: the default mode and why, and the vector
 * backend (e.g. that PostgreSQL runs without pgvector, as an exact scan).
 */
export function searchLine(mem: Memory): string {
  const s = mem.searchSetup;
  const note = mem.driver.vectorNote ?? 'this store has no vector index';
  return s.indexer === null ? `lexical (${s.reason}); ${note}` : `hybrid by default (${s.reason})`;
}
