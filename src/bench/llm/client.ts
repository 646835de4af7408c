/**
 * A small client for OpenAI-compatible chat-completions endpoints (`POST {baseUrl}/chat/completions`)
 * over the global fetch: a timeout per request (AbortController), retries with exponential
 * backoff and jitter on 429, 5xx, timeouts and network errors (honouring `Retry-After`), and the
 * token counts the server reports. No JSON mode is requested: the caller parses the text.
 */

export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

export interface ChatClientOptions {
  /** e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8000/v1` */
  readonly baseUrl: string;
  /** bearer token; null sends no Authorization header (local servers) */
  readonly apiKey: string | null;
  /** per-request timeout; default 60 000 ms */
  readonly timeoutMs?: number;
  /** retries after the first attempt; default 4 */
  readonly retries?: number;
  /** first backoff delay; default 500 ms, doubled per retry, with jitter */
  readonly retryBaseMs?: number;
  /** cap on one backoff delay (and on Retry-After); default 20 000 ms */
  readonly retryMaxMs?: number;
  /** for tests */
  readonly fetch?: typeof fetch;
  /** jitter source in [0, 1); default Math.random (kept apart from the experiment's seeded PRNG) */
  readonly random?: () => number;
}

export interface ChatRequest {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly temperature?: number;
  readonly seed?: number;
  readonly maxTokens?: number;
}

export interface ChatResult {
  /** the first choice's text ('' when the server sent none) */
  readonly content: string;
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** whether the server reported usage */
  readonly usageReported: boolean;
  /** HTTP attempts made (1 + retries used) */
  readonly attempts: number;
}

/** A request that failed for good. `fatal` ones (bad key, unknown model or endpoint) stop a run. */
export class ChatError extends Error {
  readonly status: number | null;
  readonly fatal: boolean;
  readonly attempts: number;
  constructor(message: string, opts: { status: number | null; fatal: boolean; attempts: number; cause?: unknown }) {
    super(message, { cause: opts.cause });
    this.name = 'ChatError';
    this.status = opts.status;
    this.fatal = opts.fatal;
    this.attempts = opts.attempts;
  }
}

const RETRYABLE_STATUS = (s: number): boolean => s === 408 || s === 409 || s === 425 || s === 429 || s >= 500;
const FATAL_STATUS = (s: number): boolean => s === 401 || s === 403 || s === 404;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Retry-After in ms (delta-seconds or an HTTP date), or null. */
export function retryAfterMs(h: string | null, now: number = Date.now()): number | null {
  if (h === null || h.trim() === '') return null;
  const s = Number(h);
  if (Number.isFinite(s)) return Math.max(0, s * 1000);
  const t = Date.parse(h);
  return Number.isNaN(t) ? null : Math.max(0, t - now);
}

/** Backoff before retry number `retry` (0-based): equal jitter over `min(max, base·2^retry)`. */
export function backoffMs(retry: number, base: number, max: number, random: () => number): number {
  const d = Math.min(max, base * 2 ** retry);
  return d / 2 + random() * (d / 2);
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p === 'string' ? p : typeof (p as { text?: unknown })?.text === 'string' ? (p as { text: string }).text : '')).join('');
  return '';
}

/** The chat-completions URL for a base URL (`…/v1` → `…/v1/chat/completions`). */
export function completionsUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/chat/completions`;
}

/**
 * One chat completion with retries.
 * @throws ChatError when every attempt failed, or at once for a non-retryable status.
 */
export async function chatCompletion(opts: ChatClientOptions, req: ChatRequest): Promise<ChatResult> {
  const doFetch = opts.fetch ?? fetch;
  const retries = opts.retries ?? 4;
  const base = opts.retryBaseMs ?? 500;
  const max = opts.retryMaxMs ?? 20_000;
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const random = opts.random ?? Math.random;
  const body: Record<string, unknown> = { model: req.model, messages: req.messages };
  if (req.temperature !== undefined) body.temperature = req.temperature;
  if (req.seed !== undefined) body.seed = req.seed;
  if (req.maxTokens !== undefined) body.max_tokens = req.maxTokens;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (opts.apiKey !== null && opts.apiKey !== '') headers.authorization = `Bearer ${opts.apiKey}`;
  const url = completionsUrl(opts.baseUrl);
  let lastError = 'no attempt made';
  let lastStatus: number | null = null;
  for (let attempt = 0; attempt <= retries; attempt++) {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), timeoutMs);
    let waitHint: number | null = null;
    try {
      const res = await doFetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: ctl.signal });
      const text = await res.text();
      if (res.ok) {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          // a 200 with a body that is not JSON: treat as a transient server fault
          lastError = `HTTP 200 with a body that is not JSON (${text.slice(0, 80)})`;
          lastStatus = 200;
          throw new RetryableSignal();
        }
        const j = json as { choices?: Array<{ message?: { content?: unknown } }>; usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } };
        const usage = j.usage;
        const pt = typeof usage?.prompt_tokens === 'number' ? usage.prompt_tokens : 0;
        const ct = typeof usage?.completion_tokens === 'number' ? usage.completion_tokens : 0;
        return { content: textOf(j.choices?.[0]?.message?.content), promptTokens: pt, completionTokens: ct, usageReported: usage !== undefined, attempts: attempt + 1 };
      }
      lastStatus = res.status;
      lastError = `HTTP ${res.status}: ${text.slice(0, 200)}`;
      if (!RETRYABLE_STATUS(res.status)) {
        throw new ChatError(`chat completion failed: ${lastError}`, { status: res.status, fatal: FATAL_STATUS(res.status), attempts: attempt + 1 });
      }
      waitHint = retryAfterMs(res.headers.get('retry-after'));
    } catch (e) {
      if (e instanceof ChatError) throw e;
      if (!(e instanceof RetryableSignal)) {
        lastStatus = null;
        lastError = ctl.signal.aborted ? `timed out after ${timeoutMs} ms` : `network error: ${(e as Error).message}`;
      }
    } finally {
      clearTimeout(timer);
    }
    if (attempt < retries) await sleep(Math.min(max, waitHint ?? backoffMs(attempt, base, max, random)));
  }
  throw new ChatError(`chat completion failed after ${retries + 1} attempts: ${lastError}`, { status: lastStatus, fatal: false, attempts: retries + 1 });
}

class RetryableSignal extends Error {}
