/**
 * The server's one JSON body parser (every REST route and MCP over Streamable HTTP, whose bodies
 * pass through Fastify): Fastify's own parser (prototype-poisoning refused as before), then every
 * number literal of the text is checked against the double it parsed to
 * (src/core/json-numbers.ts). A literal the double does not hold exactly — an account number
 * past 2^53, an amount with more digits than a double keeps — would be checked, hashed and stored
 * as a different value than the one an executor reading the same JSON exactly acts on
 * (docs/design.md § Known limits): it is refused, 400 `INEXACT_NUMBER`, before any route runs.
 * So is an object that repeats a key (`{"to":"A","to":"B"}`: `JSON.parse` keeps the last, another
 * reader of the same text may keep the first), 400 `DUPLICATE_KEY` (src/core/json-keys.ts).
 *
 *
 * A caller the tenant does not trust (an external or a tool principal) gets a smaller body limit
 * ({@link untrustedBodyLimit}), enforced before the body is read, so that its refused requests
 * cannot hold the parser for the length of a full-size body.
 *
 * May import: fastify types, node:stream, ./errors.js, ./config.js, ./tokens.js, core/json-numbers, core/json-keys.
 */
import { Transform } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ServerConfig } from './config.js';
import { duplicateKey } from '../core/json-keys.js';
import { inexactNumberLiteral } from '../core/json-numbers.js';
import { HttpError } from './errors.js';

/**
 * Replace the `application/json` parser of `app` by the checking one.
 * Refusals: `INEXACT_NUMBER` (400) with details `{literal, offset, parsed, why}` (`why`:
 * `rounded`, `unsafe_integer` or `overflow`); `DUPLICATE_KEY` (400) with details `{key, offset}`;
 * Fastify's own (INVALID_JSON, BODY_TOO_LARGE) as before.
 */
export function exactJsonBodies(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) => {
    // nesting costs the parser per level, before any budget: refuse it deep, in one linear pass
    if (tooDeep(body as string)) return done(new HttpError(400, 'INVALID_ARGUMENT', `the body nests arrays or objects more than ${MAX_DEPTH} levels deep`, { maxDepth: MAX_DEPTH }));
    parse(req, body as string, (err: Error | null, value?: unknown) => {
      if (err !== null) return done(err);
      const dup = duplicateKey(body as string);
      if (dup !== null) {
        const message = `the body repeats the key ${JSON.stringify(dup.key)} in one object (at offset ${dup.offset}): send each key once, so that every reader of the body sees the same value`;
        return done(new HttpError(400, 'DUPLICATE_KEY', message, { ...dup }));
      }
      const bad = inexactNumberLiteral(body as string);
      if (bad === null) return done(null, value);
      done(
        new HttpError(
          400,
          'INEXACT_NUMBER',
          `the body's number ${bad.literal} (at offset ${bad.offset}) ${bad.why === 'overflow' ? 'is too large for a JSON number here' : bad.why === 'unsafe_integer' ? 'is past 2^53 - 1, where a JSON number reads as a nearby integer' : `reads as ${bad.parsed}`}: pass it as a string ("${bad.literal}") so it is checked and stored exactly as written`,
          { ...bad },
        ),
      );
    });
  });
}

/**
 * The body limit of a caller, in bytes: for an external principal six times its content cap (every
 * character of the content escaped as `\uXXXX`) plus 64 KiB for the rest of the request, for a
 * tool principal likewise with its cap; never above `bodyLimit`. Null: the server's `bodyLimit`.
 */
export function untrustedBodyLimit(kind: string | undefined, config: Pick<ServerConfig, 'bodyLimit' | 'externalMaxContentBytes' | 'toolMaxContentBytes'>): number | null {
  const cap = kind === 'external' ? config.externalMaxContentBytes : kind === 'tool' ? config.toolMaxContentBytes : null;
  return cap === null ? null : Math.min(config.bodyLimit, cap * 6 + 64 * 1024);
}

/**
 * Refuse, before it is read, a body larger than its caller's limit ({@link untrustedBodyLimit}):
 * by its `content-length`, or — a chunked body — as soon as the bytes received pass the limit.
 * Refusal: 413 `BODY_TOO_LARGE` with details `{limit}`.
 *
 * @param limitOf - the caller's limit in bytes, or null for the server's own (run after authentication).
 */
export function limitBodies(app: FastifyInstance, limitOf: (req: FastifyRequest) => number | null): void {
  // statusCode: Fastify's body reader keeps a stream error's own status (and makes any other a 400)
  const tooLarge = (limit: number): HttpError =>
    Object.assign(new HttpError(413, 'BODY_TOO_LARGE', `the request body is larger than ${limit} bytes, the limit for this caller`, { limit }), { statusCode: 413 });
  app.addHook('preParsing', async (req, _reply, payload) => {
    const limit = limitOf(req);
    if (limit === null) return payload;
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit);
    let seen = 0;
    const counted = new Transform({
      transform(chunk: Buffer, _enc, next) {
        seen += chunk.length;
        next(seen > limit ? tooLarge(limit) : null, chunk);
      },
    });
    return payload.pipe(counted);
  });
}

/** The deepest nesting of arrays and objects a body may have (memauth's own requests need a handful). */
const MAX_DEPTH = 64;

/** Does a JSON text nest `[` / `{` more than {@link MAX_DEPTH} deep (brackets inside strings ignored)? One pass, no allocation. */
function tooDeep(text: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // a backslash escapes the next character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > MAX_DEPTH) return true;
    } else if (c === 93 || c === 125) depth--;
  }
  return false;
}
