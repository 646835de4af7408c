/**
 * An embedder from a Vercel AI SDK embedding model (`ai` v6): `openai.embedding('text-embedding-3-small')`,
 * any provider's `.embedding(...)`/`.textEmbeddingModel(...)`, or a gateway model id string.
 * Texts are sent with the SDK's `embedMany` (its batching by the model's `maxEmbeddingsPerCall`,
 * its retries). Imports the optional peer dependency `ai`: import this module only when it is installed.
 *
 * May import: src/core/, src/embed/, `ai`.
 */
import { type EmbeddingModel, embedMany } from 'ai';
import type { Embedder } from './embedder.js';
import { type EmbedderIdentity, fromFunction } from './adapters.js';

/** Options of {@link fromAiSdk}: the identity (provider and model default to the model's own) plus the SDK's knobs. */
export interface AiSdkEmbedderOptions extends Partial<EmbedderIdentity> {
  /** the vector length of the model (the SDK does not report it). */
  readonly dimensions: number;
  /** the SDK's retries per call (default 2, the SDK's default). */
  readonly maxRetries?: number;
  /** the SDK's parallel calls for a large batch (default: the SDK's, unlimited). */
  readonly maxParallelCalls?: number;
}

/**
 * @param model - an AI SDK `EmbeddingModel` (a model object, or a gateway id string).
 * @param options - `dimensions` (required), `model`/`provider` to override the id parts read from
 *   the model (`provider`, `modelId`), `maxRetries`, `maxParallelCalls`.
 * @returns an {@link Embedder} with id `provider:model:dimensions`, e.g. `openai.embedding:text-embedding-3-small:1536`.
 * @throws MemauthError INVALID_ARGUMENT for a bad identity (see `embedderId`). Failures of
 *   `embedMany` surface as EMBEDDER_UNAVAILABLE through `embedChecked`.
 */
export function fromAiSdk(model: EmbeddingModel, options: AiSdkEmbedderOptions): Embedder {
  const own = typeof model === 'string' ? { provider: 'ai-gateway', modelId: model } : { provider: model.provider, modelId: model.modelId };
  const identity = { provider: options.provider ?? own.provider, model: options.model ?? own.modelId, dimensions: options.dimensions };
  return fromFunction(async (values) => {
    const { embeddings } = await embedMany({
      model,
      values,
      ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
      ...(options.maxParallelCalls !== undefined ? { maxParallelCalls: options.maxParallelCalls } : {}),
    });
    return embeddings;
  }, identity);
}
