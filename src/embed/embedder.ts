/**
 * The embedder port: what memauth asks of anything that turns texts into vectors, and the one
 * check every answer passes before a vector is stored or compared ({@link embedChecked}).
 *
 * A vector is a derived artifact for ranking only: it is keyed by (record id, content hash,
 * embedder id), it carries no authority, and nothing about a record's origin or taint is read from
 * it (docs/design.md § Threat model — embedding is named with summarizing and merging as a step
 * that must not launder). The adapters (`adapters.ts`, `ai-sdk.ts`, `openai-compatible.ts`) and
 * the deterministic test stand-in (`test-embedder.ts`) all implement {@link Embedder}.
 *
 * May import: src/core/ only.
 */
import { MemauthError, isMemauthError } from '../core/errors.js';

/**
 * Anything that embeds texts.
 *
 * - `id`: a stable identity, `provider:model:dimensions` (see {@link embedderId}). Two embedders
 *   with the same id must give the same vectors for the same texts: the index keys every vector by
 *   it, and a changed id means every record must be embedded again (reindex).
 * - `dimensions`: the length of every vector (a positive integer, at most {@link MAX_DIMENSIONS}).
 * - `embed(texts)`: one vector per text, in the order given (numbers, any scale; the index
 *   normalizes). May throw anything: {@link embedChecked} maps a failure to EMBEDDER_UNAVAILABLE.
 */
export interface Embedder {
  readonly id: string;
  readonly dimensions: number;
  embed(texts: readonly string[]): Promise<readonly (Float32Array | readonly number[])[]>;
}

/** The largest vector length memauth accepts (pgvector's `vector` type stores up to 16,000). */
export const MAX_DIMENSIONS = 16_000;

const ID_PART = /^[A-Za-z0-9._\-/@+]{1,120}$/;

/**
 * The identity string of an embedder: `provider:model:dimensions`.
 *
 * @param provider - who serves the model (`openai-compatible`, `ai-sdk/openai`, `langchain`, `test`, …): letters, digits and `._-/@+`, 1–120 characters.
 * @param model - the model name, same alphabet.
 * @param dimensions - the vector length, 1…{@link MAX_DIMENSIONS}.
 * @returns e.g. `openai-compatible:text-embedding-3-small:1536`.
 * @throws MemauthError INVALID_ARGUMENT when a part is outside its alphabet or range (`details.field`).
 */
export function embedderId(provider: string, model: string, dimensions: number): string {
  if (!ID_PART.test(provider)) throw new MemauthError('INVALID_ARGUMENT', `embedder provider ${JSON.stringify(provider)} must be 1–120 of A-Z a-z 0-9 . _ - / @ +`, { field: 'provider' });
  if (!ID_PART.test(model)) throw new MemauthError('INVALID_ARGUMENT', `embedder model ${JSON.stringify(model)} must be 1–120 of A-Z a-z 0-9 . _ - / @ +`, { field: 'model' });
  checkDimensions(dimensions);
  return `${provider}:${model}:${dimensions}`;
}

/**
 * @throws MemauthError INVALID_ARGUMENT unless `dimensions` is an integer in 1…{@link MAX_DIMENSIONS}.
 */
export function checkDimensions(dimensions: number): void {
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > MAX_DIMENSIONS)
    throw new MemauthError('INVALID_ARGUMENT', `embedder dimensions must be an integer from 1 to ${MAX_DIMENSIONS}, got ${String(dimensions)}`, { field: 'dimensions' });
}

/**
 * Checks one answer of an embedder against what was asked.
 *
 * @param vectors - the answer, one vector per text.
 * @param count - how many texts were sent.
 * @param dimensions - the embedder's configured vector length.
 * @param who - the embedder's id, for the message.
 * @returns the vectors as Float32Array (a copy; the input is not kept).
 * @throws MemauthError EMBEDDER_BAD_RESPONSE when the count differs (`details.expected`, `details.got`),
 *   a vector's length differs (`details.index`, `details.dimensions`), or a value is NaN, infinite or
 *   not a number (`details.index`, `details.position`).
 */
export function checkVectors(vectors: unknown, count: number, dimensions: number, who: string): Float32Array[] {
  if (!Array.isArray(vectors) || vectors.length !== count) {
    const got = Array.isArray(vectors) ? vectors.length : typeof vectors;
    throw new MemauthError('EMBEDDER_BAD_RESPONSE', `embedder ${who} returned ${String(got)} vectors for ${count} texts`, { embedder: who, expected: count, got });
  }
  return vectors.map((v: unknown, index) => {
    if (!(v instanceof Float32Array) && !Array.isArray(v)) throw new MemauthError('EMBEDDER_BAD_RESPONSE', `embedder ${who}: vector ${index} is not an array of numbers`, { embedder: who, index });
    const arr = v as ArrayLike<unknown>;
    if (arr.length !== dimensions)
      throw new MemauthError('EMBEDDER_BAD_RESPONSE', `embedder ${who}: vector ${index} has ${arr.length} dimensions, the embedder is configured for ${dimensions}`, {
        embedder: who,
        index,
        dimensions: arr.length,
        expected: dimensions,
      });
    const out = new Float32Array(dimensions);
    for (let i = 0; i < dimensions; i++) {
      const x = arr[i];
      if (typeof x !== 'number' || !Number.isFinite(x) || !Number.isFinite(Math.fround(x)))
        throw new MemauthError('EMBEDDER_BAD_RESPONSE', `embedder ${who}: vector ${index} has a value that is not a finite number at position ${i}`, { embedder: who, index, position: i });
      out[i] = x;
    }
    return out;
  });
}

/**
 * Embeds `texts` with `embedder` and checks the answer. The one way the rest of memauth calls an
 * embedder.
 *
 * @param embedder - any {@link Embedder}.
 * @param texts - the texts (an empty list returns `[]` without calling the embedder).
 * @returns one Float32Array of `embedder.dimensions` finite values per text, in order.
 * @throws MemauthError EMBEDDER_BAD_RESPONSE (see {@link checkVectors});
 *   EMBEDDER_UNAVAILABLE when `embed` throws anything but a MemauthError (the cause is kept);
 *   a MemauthError thrown by `embed` passes through unchanged.
 */
export async function embedChecked(embedder: Embedder, texts: readonly string[]): Promise<Float32Array[]> {
  if (texts.length === 0) return [];
  let answer: unknown;
  try {
    answer = await embedder.embed(texts);
  } catch (e) {
    if (isMemauthError(e)) throw e;
    throw new MemauthError('EMBEDDER_UNAVAILABLE', `embedder ${embedder.id} failed: ${e instanceof Error ? e.message.slice(0, 300) : 'unknown error'}`, { embedder: embedder.id }, { cause: e });
  }
  return checkVectors(answer, texts.length, embedder.dimensions, embedder.id);
}
