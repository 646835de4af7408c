/**
 * Canonical JSON (RFC 8785) and SHA-256 helpers: the one serialisation every hash in memauth (audit
 * entries, policy versions, argument hashes) is computed over. Pure.
 */
import * as crypto from 'node:crypto';
import canonicalizeImpl from 'canonicalize';

const reference = canonicalizeImpl as unknown as (v: unknown) => string | undefined;

/** Thrown inside {@link serialise} when a value needs the reference implementation. */
const EXOTIC: unique symbol = Symbol('exotic');

/** Characters JSON.stringify would escape (and lone surrogates): such strings go through it. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

const quote = (s: string): string => (NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`);

/**
 * RFC 8785 for plain JSON data (null, booleans, finite numbers, strings, dense arrays, plain
 * objects), byte-identical to the `canonicalize` package on such data; anything else (toJSON,
 * functions, symbols, bigints, holes, non-finite numbers) throws {@link EXOTIC} so the caller
 * falls back to the package. Numbers print as ECMAScript `Number.prototype.toString`, as RFC
 * 8785 and the package do; keys sort by UTF-16 code units (`Array.prototype.sort`).
 *
 * With `plain`, it also refuses (EXOTIC) objects that are not plain (class instances, boxed
 * primitives, Maps, null-prototype objects), arrays that are not plain arrays, `undefined`
 * anywhere and -0. What it then accepts, `JSON.parse(JSON.stringify(v))` gives back deep-equal —
 * so its output is the canonical JSON of what storing `v` as JSON keeps.
 */
function serialise(v: unknown, plain: boolean): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return quote(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(v) || (plain && Object.is(v, -0))) throw EXOTIC;
      return String(v);
    case 'object':
      break;
    default:
      throw EXOTIC;
  }
  const proto: unknown = plain ? Object.getPrototypeOf(v) : null;
  if (Array.isArray(v)) {
    if (plain && proto !== Array.prototype) throw EXOTIC;
    let out = '[';
    for (let i = 0; i < v.length; i++) {
      if (i > 0) out += ',';
      if (!(i in v)) throw EXOTIC;
      const x: unknown = v[i];
      out += x === undefined && !plain ? 'null' : serialise(x, plain);
    }
    return `${out}]`;
  }
  if (plain && proto !== Object.prototype) throw EXOTIC;
  const o = v as Record<string, unknown>;
  if (typeof o.toJSON === 'function') throw EXOTIC;
  const keys = Object.keys(o);
  if (keys.length > 1) keys.sort();
  let out = '{';
  let first = true;
  for (const k of keys) {
    const x = o[k];
    if (x === undefined && !plain) continue;
    if (first) first = false;
    else out += ',';
    out += `${quote(k)}:${serialise(x, plain)}`;
  }
  return `${out}}`;
}

/**
 * The RFC 8785 canonical JSON of `JSON.parse(JSON.stringify(value))` — of what storing `value`
 * as JSON keeps — computed without the round trip when `value` is plain JSON data (null,
 * booleans, finite numbers but -0, strings, plain arrays and objects, no `undefined` anywhere),
 * which that round trip gives back deep-equal; null when it is not (the caller then makes it).
 */
export function canonicalJsonOfPlain(value: unknown): string | null {
  try {
    return serialise(value, true);
  } catch {
    // not plain (or a cycle, a throwing getter): the round trip decides, and throws as it did
    return null;
  }
}

/**
 * RFC 8785 (JSON Canonicalization Scheme) serialisation: byte-identical to the `canonicalize`
 * package (pinned by a property test), with a faster path for plain JSON data.
 * Every hashed structure in memauth (audit entries, policies, argument hashes) goes through here.
 *
 * @throws TypeError when `value` is not representable as JSON (e.g. `undefined` at the top level).
 */
export function canonicalJson(value: unknown): string {
  if (value !== undefined) {
    try {
      return serialise(value, false);
    } catch (e) {
      if (e !== EXOTIC) throw e;
    }
  }
  const s = reference(value);
  if (s === undefined) throw new TypeError('value is not JSON-serialisable');
  return s;
}

/** The `canonicalize` package itself, for tests that pin {@link canonicalJson} to it. */
export function canonicalJsonReference(value: unknown): string | undefined {
  return reference(value);
}

/** One-shot SHA-256 (`crypto.hash`, Node >= 20.12), else `createHash`. */
const oneShot = (crypto as { hash?: (alg: string, data: string | Buffer, enc: 'hex') => string }).hash;

/** SHA-256 of a UTF-8 string, lower-case hex (64 chars). */
export function sha256Hex(s: string | Buffer): string {
  return oneShot !== undefined ? oneShot('sha256', s, 'hex') : crypto.createHash('sha256').update(s).digest('hex');
}

/** SHA-256 (hex) of the RFC 8785 canonical JSON of `value`. */
export function hashCanonical(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
