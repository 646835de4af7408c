/**
 * The built-in embeddings client: any endpoint that speaks OpenAI's `POST /v1/embeddings`
 * (OpenAI, Azure-style gateways, Ollama, vLLM, LM Studio, llama.cpp server, text-embeddings-inference).
 * Configured by URL, model, key and dimensions; no model is downloaded, nothing but the
 * configured URL is contacted.
 *
 * Behaviour: texts are sent in batches of at most `maxBatchSize`, one batch at a time, in order;
 * each request has a timeout; a 429 or 5xx answer, a timeout or a network error is retried up to
 * `maxRetries` times with exponential backoff (full jitter, `Retry-After` honoured up to 60 s);
 * any other 4xx is not retried. The key is sent as `Authorization: Bearer …` and never appears in
 * an error message or its details (a URL carrying user:password is refused; the query is never shown).
 *
 * May import: src/core/, src/embed/, node built-ins (global fetch).
 */
import { MemauthError } from '../core/errors.js';
import { type Embedder, embedderId } from './embedder.js';

/** Configuration of {@link openAiCompatibleEmbedder}. */
export interface OpenAiCompatibleOptions {
  /** the base URL (`https://api.openai.com/v1`) or the full `…/embeddings` URL; http or https. */
  readonly url: string;
  /** the model name sent in each request and part of the embedder id. */
  readonly model: string;
  /** the vector length the model returns (checked on every answer). */
  readonly dimensions: number;
  /** bearer key; omit for a local server without one. */
  readonly apiKey?: string;
  /** send `dimensions` in the request (models that can shorten their vectors, e.g. text-embedding-3-*); default false. */
  readonly requestDimensions?: boolean;
  /** texts per request, 1…2048 (default 64). */
  readonly maxBatchSize?: number;
  /** per-request timeout in milliseconds (default 30,000). */
  readonly timeoutMs?: number;
  /** retries of one request after a 429/5xx/timeout/network error (default 3). */
  readonly maxRetries?: number;
  /** the first backoff in milliseconds, doubled per retry (default 500). */
  readonly backoffMs?: number;
  /** the provider part of the embedder id (default `openai-compatible`). */
  readonly provider?: string;
}

/** The longest wait memauth honours from a `Retry-After` header, in milliseconds. */
const MAX_RETRY_AFTER_MS = 60_000;

/** A failed attempt: whether retrying may help, and what to report. */
class AttemptError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status: number | null,
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
  }
}

/** The URL for messages: origin and path only (no credentials, no query). */
function shownUrl(u: URL): string {
  return `${u.origin}${u.pathname}`;
}

/** Parses and checks the options; returns the request URL. */
function endpoint(opts: OpenAiCompatibleOptions): URL {
  let u: URL;
  try {
    u = new URL(opts.url);
  } catch {
    throw new MemauthError('INVALID_ARGUMENT', 'the embeddings URL is not a valid URL', { field: 'url' });
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new MemauthError('INVALID_ARGUMENT', `the embeddings URL must be http or https, not ${u.protocol}`, { field: 'url' });
  if (u.username !== '' || u.password !== '') throw new MemauthError('INVALID_ARGUMENT', 'the embeddings URL must not carry a user or password: pass the key as apiKey', { field: 'url' });
  if (!u.pathname.endsWith('/embeddings')) u.pathname = `${u.pathname.replace(/\/+$/, '')}/embeddings`;
  const batch = opts.maxBatchSize ?? 64;
  if (!Number.isInteger(batch) || batch < 1 || batch > 2048) throw new MemauthError('INVALID_ARGUMENT', 'maxBatchSize must be an integer from 1 to 2048', { field: 'maxBatchSize' });
  for (const f of ['timeoutMs', 'maxRetries', 'backoffMs'] as const) {
    const v = opts[f];
    if (v !== undefined && (!Number.isInteger(v) || v < 0)) throw new MemauthError('INVALID_ARGUMENT', `${f} must be a non-negative integer`, { field: f });
  }
  return u;
}

/** `Retry-After` in milliseconds (seconds or an HTTP date), capped; null when absent or unreadable. */
function retryAfter(h: string | null, now: number): number | null {
  if (h === null) return null;
  const secs = Number(h);
  const ms = Number.isFinite(secs) ? secs * 1000 : Date.parse(h) - now;
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS) : null;
}

/** Reads an OpenAI embeddings response body into vectors ordered by `index`. */
function parseBody(body: unknown, count: number, who: string): unknown[] {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) throw new MemauthError('EMBEDDER_BAD_RESPONSE', `embedder ${who}: the response has no "data" array`, { embedder: who });
  const out = new Array<unknown>(count);
  for (const [pos, item] of data.entries()) {
    const index = (item as { index?: unknown } | null)?.index ?? pos;
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count || out[index] !== undefined)
      throw new MemauthError('EMBEDDER_BAD_RESPONSE', `embedder ${who}: response item ${pos} has a missing, repeated or out-of-range index`, { embedder: who, index: pos });
    out[index] = (item as { embedding?: unknown }).embedding;
  }
  return data.length === count ? out : data;
}

/**
 * An {@link Embedder} over an OpenAI-compatible embeddings endpoint.
 *
 * @param opts - see {@link OpenAiCompatibleOptions}.
 * @returns an embedder with id `provider:model:dimensions` (provider default `openai-compatible`).
 *   Its `embed` resolves to one `number[]` per text (checked by `embedChecked` before use).
 * @throws MemauthError INVALID_ARGUMENT for a bad URL, model, dimensions or limit (`details.field`).
 *   `embed` rejects with EMBEDDER_UNAVAILABLE (unreachable, timeout, a 4xx, or 429/5xx after the
 *   retries; `details.status`, `details.attempts`) or EMBEDDER_BAD_RESPONSE (not JSON, no `data`,
 *   bad indices).
 */
export function openAiCompatibleEmbedder(opts: OpenAiCompatibleOptions): Embedder {
  const url = endpoint(opts);
  const id = embedderId(opts.provider ?? 'openai-compatible', opts.model, opts.dimensions);
  const batchSize = opts.maxBatchSize ?? 64;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (opts.apiKey !== undefined && opts.apiKey !== '') headers.authorization = `Bearer ${opts.apiKey}`;
  const request = url.href;
  const shown = shownUrl(url);

  const attempt = async (input: readonly string[]): Promise<unknown[]> => {
    const body = JSON.stringify({ model: opts.model, input, encoding_format: 'float', ...(opts.requestDimensions === true ? { dimensions: opts.dimensions } : {}) });
    let res: Response;
    try {
      res = await fetch(request, { method: 'POST', headers, body, signal: AbortSignal.timeout(opts.timeoutMs ?? 30_000) });
    } catch (e) {
      const timedOut = e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError');
      throw new AttemptError(timedOut ? `no answer from ${shown} within ${opts.timeoutMs ?? 30_000} ms` : `cannot reach ${shown}`, true, null);
    }
    if (!res.ok) {
      await res.body?.cancel();
      const retryable = res.status === 429 || res.status >= 500;
      throw new AttemptError(
        `${shown} answered HTTP ${res.status}${res.status === 401 || res.status === 403 ? ' (check the key)' : ''}`,
        retryable,
        res.status,
        retryAfter(res.headers.get('retry-after'), Date.now()),
      );
    }
    let parsed: unknown;
    try {
      parsed = await res.json();
    } catch {
      throw new MemauthError('EMBEDDER_BAD_RESPONSE', `embedder ${id}: ${shown} answered with a body that is not JSON`, { embedder: id });
    }
    return parseBody(parsed, input.length, id);
  };

  const withRetries = async (input: readonly string[]): Promise<unknown[]> => {
    const retries = opts.maxRetries ?? 3;
    for (let n = 0; ; n++) {
      try {
        return await attempt(input);
      } catch (e) {
        if (!(e instanceof AttemptError)) throw e;
        if (!e.retryable || n >= retries)
          throw new MemauthError('EMBEDDER_UNAVAILABLE', `embedder ${id}: ${e.message}${n > 0 ? ` after ${n + 1} attempts` : ''}`, { embedder: id, status: e.status, attempts: n + 1 });
        const backoff = (opts.backoffMs ?? 500) * 2 ** n;
        await new Promise((r) => setTimeout(r, e.retryAfterMs ?? Math.random() * backoff));
      }
    }
  };

  return {
    id,
    dimensions: opts.dimensions,
    async embed(texts) {
      const out: unknown[] = [];
      for (let i = 0; i < texts.length; i += batchSize) out.push(...(await withRetries(texts.slice(i, i + batchSize))));
      return out as number[][];
    },
  };
}
