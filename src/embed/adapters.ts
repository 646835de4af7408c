/**
 * Embedders from what an application already has: a plain function, or a LangChain.js
 * `Embeddings` (matched by shape, so `@langchain/core` is not imported). The AI SDK adapter is in
 * `ai-sdk.ts` (it imports the optional `ai` package); the HTTP client in `openai-compatible.ts`.
 *
 * Every adapter returns an {@link Embedder} whose answers still pass `embedChecked` before use.
 * May import: src/core/, src/embed/.
 */
import { MemauthError } from '../core/errors.js';
import { type Embedder, embedderId } from './embedder.js';

/** Names an adapted embedder: its `id` becomes `provider:model:dimensions`. */
export interface EmbedderIdentity {
  /** who serves the model; default depends on the adapter (`function`, `langchain`). */
  readonly provider?: string;
  /** the model name (part of the id: change it when the model changes). */
  readonly model: string;
  /** the length of every vector the model returns. */
  readonly dimensions: number;
}

/**
 * An embedder from a plain function.
 *
 * @param fn - `(texts) => Promise<number[][]>`, one vector per text in order.
 * @param identity - model and dimensions (provider default `function`).
 * @returns an {@link Embedder} with id `provider:model:dimensions`.
 * @throws MemauthError INVALID_ARGUMENT for a bad identity (see `embedderId`).
 */
export function fromFunction(fn: (texts: string[]) => Promise<readonly (readonly number[] | Float32Array)[]>, identity: EmbedderIdentity): Embedder {
  const id = embedderId(identity.provider ?? 'function', identity.model, identity.dimensions);
  return { id, dimensions: identity.dimensions, embed: (texts) => fn([...texts]) };
}

/** The part of LangChain.js's `Embeddings` (`EmbeddingsInterface`) memauth uses. */
export interface LangChainEmbeddingsLike {
  embedDocuments(documents: string[]): Promise<number[][]>;
}

/**
 * An embedder from a LangChain.js `Embeddings` (e.g. `OpenAIEmbeddings`, `OllamaEmbeddings`):
 * records and queries are both embedded with `embedDocuments` (one space for both; a model with
 * distinct query and document modes should be wrapped with {@link fromFunction} instead).
 *
 * @param embeddings - any object with `embedDocuments(texts): Promise<number[][]>`.
 * @param identity - model and dimensions (provider default `langchain`).
 * @throws MemauthError INVALID_ARGUMENT for a bad identity, or when `embeddings` has no `embedDocuments`.
 */
export function fromLangChain(embeddings: LangChainEmbeddingsLike, identity: EmbedderIdentity): Embedder {
  if (typeof embeddings?.embedDocuments !== 'function') throw new MemauthError('INVALID_ARGUMENT', 'the LangChain embeddings object has no embedDocuments method', { field: 'embeddings' });
  return fromFunction((texts) => embeddings.embedDocuments(texts), { provider: 'langchain', ...identity });
}
