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
 * May import: fastify types, ./errors.js, core/json-numbers, core/json-keys.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
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
