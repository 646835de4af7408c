/**
 * The embedder port (src/embed/): the answer check, the adapters (plain function, LangChain.js
 * `Embeddings`, AI SDK `EmbeddingModel` through `embedMany`), the built-in OpenAI-compatible
 * client and the deterministic test embedder.
 *
 * The client is tested against a local HTTP server on 127.0.0.1 that speaks the OpenAI
 * `POST /v1/embeddings` protocol — a STAND-IN written here (it returns hashed vectors, and can be
 * told to fail, stall, or answer malformed bodies); no real provider is contacted.
 */
import assert from 'node:assert/strict';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { MockEmbeddingModelV3 } from 'ai/test';
import { FakeEmbeddings } from '@langchain/core/utils/testing';
import { isMemauthError } from '../src/core/errors.js';
import { checkVectors, embedChecked, embedderId } from '../src/embed/embedder.js';
import { fromFunction, fromLangChain } from '../src/embed/adapters.js';
import { fromAiSdk } from '../src/embed/ai-sdk.js';
import { openAiCompatibleEmbedder } from '../src/embed/openai-compatible.js';
import { terms, testEmbedder, testVector } from '../src/embed/test-embedder.js';

const code = (c: string) => (e: unknown) => isMemauthError(e) && e.code === c;
const dot = (a: Float32Array, b: Float32Array): number => a.reduce((s, x, i) => s + x * (b[i] as number), 0);

describe('the answer check', () => {
  it('accepts one finite vector per text and copies it into Float32Arrays', () => {
    const out = checkVectors([[1, 2], new Float32Array([3, 4])], 2, 2, 'x');
    assert.ok(out.every((v) => v instanceof Float32Array));
    assert.deepEqual([...(out[1] as Float32Array)], [3, 4]);
  });
  it('refuses a wrong count, a wrong length, NaN, Infinity, a float32 overflow and non-numbers (EMBEDDER_BAD_RESPONSE)', () => {
    for (const bad of [[[1, 2]], [[1, 2], [1]], [[1, NaN]], [[1, Infinity]], [[1, 1e39]], [[1, '2']], [null], 'nope'])
      assert.throws(
        () =>
          checkVectors(
            bad,
            Array.isArray(bad) && bad.length === 1 && bad[0] !== null && (bad[0] as unknown[]).length === 2 && typeof (bad[0] as unknown[])[1] === 'number' && Number.isFinite((bad[0] as number[])[1])
              ? 2
              : 1,
            2,
            'x',
          ),
        code('EMBEDDER_BAD_RESPONSE'),
        JSON.stringify(bad),
      );
  });
  it('maps a thrown non-memauth error to EMBEDDER_UNAVAILABLE, and does not call the embedder for no texts', async () => {
    let calls = 0;
    const e = fromFunction(
      async () => {
        calls++;
        throw new Error('socket hang up');
      },
      { model: 'm', dimensions: 2 },
    );
    assert.deepEqual(await embedChecked(e, []), []);
    assert.equal(calls, 0);
    await assert.rejects(embedChecked(e, ['a']), code('EMBEDDER_UNAVAILABLE'));
  });
  it('builds stable ids and refuses bad parts (INVALID_ARGUMENT)', () => {
    assert.equal(embedderId('openai-compatible', 'text-embedding-3-small', 1536), 'openai-compatible:text-embedding-3-small:1536');
    assert.throws(() => embedderId('a:b', 'm', 3), code('INVALID_ARGUMENT'));
    assert.throws(() => embedderId('p', 'm', 0), code('INVALID_ARGUMENT'));
    assert.throws(() => embedderId('p', 'm', 1.5), code('INVALID_ARGUMENT'));
  });
});

describe('adapters', () => {
  it('a LangChain.js Embeddings (FakeEmbeddings of @langchain/core)', async () => {
    const e = fromLangChain(new FakeEmbeddings(), { model: 'fake', dimensions: 4 });
    assert.equal(e.id, 'langchain:fake:4');
    const out = await embedChecked(e, ['a', 'b', 'c']);
    assert.equal(out.length, 3);
    await assert.rejects(embedChecked(fromLangChain(new FakeEmbeddings(), { model: 'fake', dimensions: 8 }), ['a']), code('EMBEDDER_BAD_RESPONSE'));
    assert.throws(() => fromLangChain({} as never, { model: 'x', dimensions: 2 }), code('INVALID_ARGUMENT'));
  });
  it('an AI SDK EmbeddingModel through embedMany (batched by the model maxEmbeddingsPerCall)', async () => {
    const model = new MockEmbeddingModelV3({
      provider: 'mock.embedding',
      modelId: 'mock-1',
      maxEmbeddingsPerCall: 2,
      doEmbed: async ({ values }) => ({ embeddings: values.map((v) => [...testVector(v, 8)]), warnings: [] }),
    });
    const e = fromAiSdk(model, { dimensions: 8, maxRetries: 0 });
    assert.equal(e.id, 'mock.embedding:mock-1:8');
    const out = await embedChecked(e, ['one', 'two', 'three']);
    assert.equal(out.length, 3);
    assert.equal(model.doEmbedCalls.length, 2);
    assert.ok(Math.abs(dot(out[2] as Float32Array, testVector('three', 8)) - 1) < 1e-6);
  });
});

/** The stand-in server's behaviour for the next requests. */
interface Script {
  /** statuses to answer before a good answer (e.g. [429, 503]). */
  fail: number[];
  mode: 'ok' | 'nan' | 'short' | 'not-json' | 'stall' | 'shuffled';
  requests: { auth: string | undefined; input: string[]; model: string }[];
}

function standIn(script: Script): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const parsed = JSON.parse(body) as { input: string[]; model: string };
      script.requests.push({ auth: req.headers.authorization, input: parsed.input, model: parsed.model });
      const status = script.fail.shift();
      if (status !== undefined) {
        res.writeHead(status, status === 429 ? { 'retry-after': '0' } : {}).end('{"error":{"message":"busy"}}');
        return;
      }
      if (script.mode === 'stall') return; // never answers
      if (script.mode === 'not-json') return void res.writeHead(200, { 'content-type': 'application/json' }).end('<html>');
      const data = parsed.input.map((t, index) => ({
        object: 'embedding',
        index,
        embedding: script.mode === 'short' ? [1] : [...testVector(t, 4)].map((x, i) => (script.mode === 'nan' && i === 0 ? 'NaN' : x)),
      }));
      if (script.mode === 'shuffled') data.reverse();
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data, model: parsed.model, usage: { prompt_tokens: 1, total_tokens: 1 } }).replace(/"NaN"/g, 'NaN'));
    });
  };
}

describe('the OpenAI-compatible client (against a local stand-in server)', () => {
  const script: Script = { fail: [], mode: 'ok', requests: [] };
  let server: Server;
  let base = '';
  before(async () => {
    server = createServer(standIn(script));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  const reset = (mode: Script['mode'] = 'ok', fail: number[] = []): void => {
    script.mode = mode;
    script.fail = fail;
    script.requests = [];
  };
  const client = (extra: Partial<Parameters<typeof openAiCompatibleEmbedder>[0]> = {}) =>
    openAiCompatibleEmbedder({ url: base, model: 'emb-small', dimensions: 4, apiKey: 'sk-secret-123', backoffMs: 1, maxBatchSize: 3, ...extra });

  it('sends batches of at most maxBatchSize, in order, with the key, and returns one vector per text', async () => {
    reset();
    const texts = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf'];
    const out = await embedChecked(client(), texts);
    assert.deepEqual(
      script.requests.map((r) => r.input),
      [texts.slice(0, 3), texts.slice(3, 6), texts.slice(6)],
    );
    assert.ok(script.requests.every((r) => r.auth === 'Bearer sk-secret-123' && r.model === 'emb-small'));
    texts.forEach((t, i) => assert.ok(Math.abs(dot(out[i] as Float32Array, testVector(t, 4)) - 1) < 1e-6));
  });
  it('orders items by their index, not by their position in the answer', async () => {
    reset('shuffled');
    const out = await embedChecked(client(), ['x', 'y']);
    assert.ok(Math.abs(dot(out[0] as Float32Array, testVector('x', 4)) - 1) < 1e-6);
  });
  it('retries 429 and 5xx with backoff, then succeeds', async () => {
    reset('ok', [429, 503, 500]);
    assert.equal((await embedChecked(client(), ['a'])).length, 1);
    assert.equal(script.requests.length, 4);
  });
  it('gives up after maxRetries with EMBEDDER_UNAVAILABLE naming the status, never the key', async () => {
    reset('ok', [503, 503, 503]);
    const err = await embedChecked(client({ maxRetries: 2 }), ['a']).catch((e: unknown) => e);
    assert.ok(code('EMBEDDER_UNAVAILABLE')(err));
    assert.equal(script.requests.length, 3);
    assert.equal((err as { details: { status: number } }).details.status, 503);
    assert.doesNotMatch(JSON.stringify({ m: (err as Error).message, d: (err as { details: unknown }).details }), /sk-secret/);
  });
  it('does not retry a 401 (a bad key) and says to check it', async () => {
    reset('ok', [401]);
    await assert.rejects(embedChecked(client(), ['a']), (e: unknown) => code('EMBEDDER_UNAVAILABLE')(e) && /check the key/.test((e as Error).message));
    assert.equal(script.requests.length, 1);
  });
  it('times out a stalled request (EMBEDDER_UNAVAILABLE)', async () => {
    reset('stall');
    await assert.rejects(embedChecked(client({ timeoutMs: 100, maxRetries: 1 }), ['a']), (e: unknown) => code('EMBEDDER_UNAVAILABLE')(e) && /within 100 ms/.test((e as Error).message));
    assert.equal(script.requests.length, 2);
  });
  it('refuses a NaN, a wrong dimension and a body that is not JSON (EMBEDDER_BAD_RESPONSE)', async () => {
    for (const mode of ['nan', 'short', 'not-json'] as const) {
      reset(mode);
      await assert.rejects(embedChecked(client(), ['a']), code('EMBEDDER_BAD_RESPONSE'), mode);
    }
  });
  it('cannot reach a closed port: EMBEDDER_UNAVAILABLE', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    await assert.rejects(embedChecked(openAiCompatibleEmbedder({ url: `http://127.0.0.1:${port}/v1`, model: 'm', dimensions: 4, maxRetries: 0 }), ['a']), code('EMBEDDER_UNAVAILABLE'));
  });
  it('refuses a bad configuration up front (INVALID_ARGUMENT)', () => {
    for (const bad of [{ url: 'ftp://x/v1' }, { url: 'not a url' }, { url: 'http://u:p@h/v1' }, { maxBatchSize: 0 }, { dimensions: -1 }, { timeoutMs: -5 }])
      assert.throws(() => openAiCompatibleEmbedder({ url: 'http://h/v1', model: 'm', dimensions: 4, ...bad }), code('INVALID_ARGUMENT'), JSON.stringify(bad));
  });
});

describe('the deterministic test embedder', () => {
  it('is deterministic, unit length, and puts a synonym paraphrase nearer than an unrelated text', async () => {
    const e = testEmbedder(256);
    assert.equal(e.id, 'test:hashed-trigrams-synonyms-v1:256');
    const [a, b, c, a2] = await embedChecked(e, ["Priya's automobile is a green Subaru", 'What vehicle does Priya drive?', 'Priya is allergic to peanuts', "Priya's automobile is a green Subaru"]);
    assert.deepEqual(a, a2);
    assert.ok(Math.abs(dot(a as Float32Array, a as Float32Array) - 1) < 1e-5);
    assert.ok(dot(a as Float32Array, b as Float32Array) > dot(c as Float32Array, b as Float32Array));
  });
  it('maps synonyms to one concept and drops stopwords', () => {
    assert.deepEqual(terms('What vehicle does the automobile drive'), ['car', 'car', 'car']);
  });
});
