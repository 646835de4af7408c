/**
 * The zod input schemas of every public operation, shared by the library, the HTTP API, the MCP
 * tools and the CLI, and `parseInput`, which turns a schema failure into `INVALID_ARGUMENT` (or
 * `TENANT_REQUIRED`, `SCOPE_REQUIRED`) naming the field.
 */
import { z } from 'zod';
import { assertArgumentsWithinLimits } from '../core/argument-limits.js';
import { AUTHORITIES } from '../core/authority.js';
import { MemauthError } from '../core/errors.js';
import { ADMIN_CHAIN } from '../core/identity.js';
import { PRINCIPAL_KINDS, TRANSFORMS } from '../core/types.js';

/** Identifiers: 1–200 printable characters, no control characters. */
const ident = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^\u0000-\u001f\u007f]+$/, 'must not contain control characters');
/** A tenant: an identifier, but never the reserved chain of admin tokens (core/identity.ts). */
const tenant = ident.refine((t) => t !== ADMIN_CHAIN, `${ADMIN_CHAIN} is reserved for the admin tokens' audit chain`);
const isoDate = z.string().refine((s) => !Number.isNaN(Date.parse(s)) && /^\d{4}-\d{2}-\d{2}T/.test(s), 'must be an ISO-8601 date-time');
/** Stored free text: no U+0000, which PostgreSQL text cannot hold (refused on every store alike). */
const NO_NUL = /^[^\u0000]*$/;
const noNul = 'must not contain U+0000 (NUL)';
const content = z.string().min(1).max(1_000_000).regex(NO_NUL, noNul);
const jsonArgs = z.record(z.string(), z.unknown());
/**
 * A corroboration's evidence is a reference to where it was checked (a URL, `registry:…`,
 * `memory:<id>`), not prose: no white space, control, format (zero-width, tag) or unassigned
 * characters (docs/design.md § What the model sees).
 */
const evidenceRef = z
  .string()
  .min(1)
  .max(2000)
  .regex(/^[^\s\p{C}]+$/u, 'must be a reference (a URL, registry:…, memory:<id>): no white space, control or invisible characters');

/**
 * A record's `source` is a reference to where its text came from (a URL, message id, file path),
 * shown beside the record to agents: like evidence, no white space, control, format or
 * unassigned characters, so it cannot carry prose or forge a line (docs/design.md § What the model sees).
 */
const sourceRef = z
  .string()
  .min(1)
  .max(2000)
  .regex(/^[^\s\p{C}]+$/u, 'must be a reference (a URL, message id or file path): no white space, control or invisible characters');

/**
 * A record's typed claims as given (docs/design.md § Claims and intent): their shape here; their
 * bounds (count, field, sizes) are checked by core/claims.ts `checkClaims` (`CLAIM_INVALID`).
 */
const claims = z.array(z.strictObject({ subject: z.string().max(10_000), field: z.string().max(1000), value: z.string().max(10_000) })).max(1000);

export const schemas = {
  tenant: z.strictObject({ tenant }),
  registerPrincipal: z.strictObject({ tenant, id: ident, kind: z.enum(PRINCIPAL_KINDS), maxAuthority: z.enum(AUTHORITIES).optional(), domain: ident }),
  write: z.strictObject({
    tenant,
    scope: ident,
    principal: ident,
    content,
    source: sourceRef.optional(),
    sourceAt: isoDate.optional(),
    authority: z.enum(AUTHORITIES).optional(),
    session: ident.optional(),
    requester: ident.optional(),
    expiresAt: isoDate.optional(),
    reason: z.string().max(1000).regex(NO_NUL, noNul).optional(),
    claims: claims.optional(),
  }),
  derive: z.strictObject({
    tenant,
    scope: ident.optional(),
    principal: ident,
    from: z.array(ident).max(1000),
    content,
    transform: z.enum(TRANSFORMS),
    session: ident.optional(),
    requester: ident.optional(),
    narrowInputs: z.boolean().optional(),
    source: sourceRef.optional(),
    expiresAt: isoDate.optional(),
    reason: z.string().max(1000).regex(NO_NUL, noNul).optional(),
    claims: claims.optional(),
  }),
  supersede: z.strictObject({
    tenant,
    id: ident,
    principal: ident,
    content,
    reason: z.string().min(1).max(1000).regex(NO_NUL, noNul),
    source: sourceRef.optional(),
    session: ident.optional(),
    requester: ident.optional(),
    expiresAt: isoDate.optional(),
    claims: claims.optional(),
  }),
  get: z.strictObject({ tenant, id: ident, session: ident.optional(), requester: ident.optional(), exact: z.boolean().optional() }),
  search: z.strictObject({
    tenant,
    scope: ident,
    query: z.string().max(10_000),
    limit: z.number().int().min(1).max(1000).optional(),
    mode: z.enum(['lexical', 'semantic', 'hybrid']).optional(),
    session: ident.optional(),
    requester: ident.optional(),
  }),
  list: z.strictObject({
    tenant,
    scope: ident.optional(),
    limit: z.number().int().min(1).max(10_000).optional(),
    offset: z.number().int().min(0).optional(),
    includeDeleted: z.boolean().optional(),
    allVersions: z.boolean().optional(),
  }),
  corroborate: z.strictObject({ tenant, recordId: ident, principal: ident, evidence: evidenceRef }),
  confirm: z.strictObject({
    tenant,
    principal: ident,
    action: z.strictObject({ type: ident, args: jsonArgs.optional(), resource: z.string().min(1).max(2000).regex(NO_NUL, noNul).optional() }),
    argsHash: z
      .string()
      .regex(/^[0-9a-f]{64}$/, 'must be a SHA-256 hex digest')
      .optional(),
    memoryIds: z.array(ident).max(1000).optional(),
    expiresInSeconds: z.number().int().min(1).optional(),
    maxUses: z.number().int().min(1).max(1000).optional(),
    usableBy: z.array(ident).max(100).optional(),
  }),
  authorize: z.strictObject({
    tenant,
    action: z.strictObject({ type: ident, args: jsonArgs.default({}), resource: z.string().min(1).max(2000).regex(NO_NUL, noNul).optional() }),
    session: ident.optional(),
    dependsOn: z.array(ident).max(1000).optional(),
    userTurn: z.strictObject({ principal: ident, text: z.string().max(100_000) }).optional(),
    context: z.enum(['session', 'declared']).optional(),
    confirmationId: ident.optional(),
    requester: ident.optional(),
    intent: ident.optional(),
  }),
  delete: z.strictObject({ tenant, id: ident, principal: ident.optional(), reason: z.string().max(1000).regex(NO_NUL, noNul).optional() }),
  replay: z.strictObject({ tenant, decisionId: ident }),
  listDecisions: z.strictObject({ tenant, limit: z.number().int().min(1).max(10_000).optional(), requester: ident.optional() }),
  // the admin tokens' chain can be verified by name
  verify: z.strictObject({ tenant: ident.optional() }),
} as const;

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** String.prototype.isWellFormed (native from Node 20), spelled out where it is missing. */
const nativeWellFormed = (String.prototype as { isWellFormed?: (this: string) => boolean }).isWellFormed;
const wellFormed: (s: string) => boolean = nativeWellFormed !== undefined ? (s) => nativeWellFormed.call(s) : (s) => !LONE_SURROGATE.test(s);

/**
 * A fresh plain-JSON copy of `value`, or an error path + reason. Accepts null, booleans,
 * finite numbers, well-formed strings, arrays and plain objects; drops properties whose value
 * is `undefined` (absent); refuses functions, symbols, bigints, NaN/Infinity, class instances
 * (incl. objects with `toJSON`), `__proto__`/`constructor`/`prototype` keys, lone surrogates,
 * cycles and nesting deeper than 64. What the gate hashes, walks and stores is this one copy.
 */
export function toPlainJson(value: unknown, path = ''): { ok: true; value: unknown } | { ok: false; path: string; reason: string } {
  // the common case first: the same walk without building paths; on any refusal the walk
  // below runs again to name the path (both refuse exactly the same values)
  const fast = plainCopy(value);
  if (fast !== REFUSED) return { ok: true, value: fast };
  return toPlainJsonWithPaths(value, path);
}

const REFUSED: unique symbol = Symbol('refused');

/**
 * {@link toPlainJson}'s walk without paths: the same checks in the same order, the same copy,
 * or REFUSED. Kept in step with {@link toPlainJsonWithPaths} (a property test compares them).
 */
function plainCopy(value: unknown): unknown {
  const seen = new Set<object>();
  let nodes = 0;
  let bad = false;
  const walk = (v: unknown, depth: number): unknown => {
    if (++nodes > 200_000 || depth > 64) return (bad = true);
    if (v === null || typeof v === 'boolean') return v;
    if (typeof v === 'number') return Number.isFinite(v) ? v : (bad = true);
    if (typeof v === 'string') return wellFormed(v) ? v : (bad = true);
    if (typeof v !== 'object') return (bad = true);
    if (seen.has(v)) return (bad = true);
    seen.add(v);
    if (Array.isArray(v)) {
      const out = new Array<unknown>(v.length);
      for (let i = 0; i < v.length; i++) {
        const x = v[i] as unknown;
        if (x === undefined) return (bad = true);
        out[i] = walk(x, depth + 1);
        if (bad) return true;
      }
      seen.delete(v);
      return out;
    }
    const proto = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return (bad = true);
    const out: Record<string, unknown> = {};
    for (const k of Reflect.ownKeys(v)) {
      if (typeof k === 'symbol' || FORBIDDEN_KEYS.has(k) || !wellFormed(k)) return (bad = true);
      const x = (v as Record<string, unknown>)[k];
      if (x === undefined) continue;
      out[k] = walk(x, depth + 1);
      if (bad) return true;
    }
    seen.delete(v);
    return out;
  };
  try {
    const out = walk(value, 0);
    return bad ? REFUSED : out;
  } catch {
    // a getter or proxy that throws: the walk with paths reports it
    return REFUSED;
  }
}

/** {@link toPlainJson} naming the path of the first refused value. */
export function toPlainJsonWithPaths(value: unknown, path = ''): { ok: true; value: unknown } | { ok: false; path: string; reason: string } {
  const seen = new Set<object>();
  let nodes = 0;
  const fail = (p: string, reason: string): never => {
    throw Object.assign(new Error(reason), { jsonPath: p });
  };
  const walk = (v: unknown, p: string, depth: number): unknown => {
    if (++nodes > 200_000) fail(p, 'is too large (more than 200000 values)');
    if (depth > 64) fail(p, 'is nested deeper than 64 levels');
    if (v === null || typeof v === 'boolean') return v;
    if (typeof v === 'number') return Number.isFinite(v) ? v : fail(p, 'must be a finite number');
    if (typeof v === 'string') return wellFormed(v) ? v : fail(p, 'contains a lone surrogate (not well-formed Unicode)');
    if (typeof v !== 'object') return fail(p, `must be JSON (got ${typeof v})`);
    if (seen.has(v)) fail(p, 'contains a cycle');
    seen.add(v);
    try {
      if (Array.isArray(v)) {
        // an index loop, not map: map skips holes and keeps them, which JSON stores as null while
        // the arguments hash (canonicalize) leaves them out — a hole is refused like undefined
        const out = new Array<unknown>(v.length);
        for (let i = 0; i < v.length; i++) {
          const x = v[i] as unknown;
          out[i] = x === undefined ? fail(`${p}[${i}]`, 'must not be undefined (or an empty array slot)') : walk(x, `${p}[${i}]`, depth + 1);
        }
        return out;
      }
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) fail(p, 'must be a plain JSON object');
      const out: Record<string, unknown> = {};
      for (const k of Reflect.ownKeys(v)) {
        if (typeof k === 'symbol') fail(p, 'must not have symbol keys');
        const key = k as string;
        const kp = p ? `${p}.${key}` : key;
        if (FORBIDDEN_KEYS.has(key)) fail(kp, 'is a forbidden key');
        if (!wellFormed(key)) fail(kp, 'key contains a lone surrogate');
        const x = (v as Record<string, unknown>)[key];
        if (x === undefined) continue;
        out[key] = walk(x, kp, depth + 1);
      }
      return out;
    } finally {
      seen.delete(v);
    }
  };
  try {
    return { ok: true, value: walk(value, path, 0) };
  } catch (e) {
    return { ok: false, path: (e as { jsonPath?: string }).jsonPath ?? path, reason: (e as Error).message };
  }
}

/**
 * Validate a public API input. A missing or empty tenant is `TENANT_REQUIRED`, a missing scope
 * `SCOPE_REQUIRED`; anything else malformed is `INVALID_ARGUMENT` naming the field.
 */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown, op: string): z.output<S> {
  const plain = toPlainJson(input ?? {});
  if (!plain.ok) {
    if (plain.path === 'tenant') throw new MemauthError('TENANT_REQUIRED', `${op}: a valid tenant is required: tenant ${plain.reason}`, { field: 'tenant' });
    throw new MemauthError('INVALID_ARGUMENT', `${op}: ${plain.path || '(input)'} ${plain.reason}`, { field: plain.path });
  }
  const r = schema.safeParse(plain.value);
  if (r.success) return r.data;
  const issue = r.error.issues[0];
  const field = issue ? issue.path.join('.') : '';
  if (field === 'tenant') throw new MemauthError('TENANT_REQUIRED', `${op}: a tenant is required (every read and write names its tenant; fails closed without one)`, { field });
  if (field === 'scope') throw new MemauthError('SCOPE_REQUIRED', `${op}: a scope is required`, { field });
  throw new MemauthError('INVALID_ARGUMENT', `${op}: ${field || '(input)'}: ${issue?.message ?? 'invalid'}`, {
    field,
    issues: r.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
  });
}

const IDENT_CHARS = /^[^\u0000-\u001f\u007f]+$/;
const isIdent = (v: unknown): v is string => typeof v === 'string' && v.length >= 1 && v.length <= 200 && IDENT_CHARS.test(v);
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const AUTHORIZE_KEYS = new Set(['tenant', 'action', 'session', 'dependsOn', 'userTurn', 'context', 'confirmationId', 'requester']);
const ACTION_KEYS = new Set(['type', 'args', 'resource']);

/**
 * `schemas.authorize` on a {@link toPlainJson} copy, for inputs that plainly satisfy it: the
 * same output zod gives, or null whenever anything is not plainly valid (zod then decides and
 * words the error). Accepts a subset of what zod accepts, never more (a property test compares).
 */
export function authorizeFast(v: unknown): z.output<typeof schemas.authorize> | null {
  if (!isPlainObject(v)) return null;
  for (const k in v) if (!AUTHORIZE_KEYS.has(k)) return null;
  if (!isIdent(v.tenant) || v.tenant === ADMIN_CHAIN) return null;
  const action = v.action;
  if (!isPlainObject(action)) return null;
  for (const k in action) if (!ACTION_KEYS.has(k)) return null;
  if (!isIdent(action.type)) return null;
  const args = action.args === undefined ? {} : action.args;
  if (!isPlainObject(args)) return null;
  const resource = action.resource;
  if (resource !== undefined && (typeof resource !== 'string' || resource.length < 1 || resource.length > 2000 || !NO_NUL.test(resource))) return null;
  if (v.session !== undefined && !isIdent(v.session)) return null;
  const dependsOn = v.dependsOn;
  if (dependsOn !== undefined) {
    if (!Array.isArray(dependsOn) || dependsOn.length > 1000) return null;
    for (const id of dependsOn) if (!isIdent(id)) return null;
  }
  const userTurn = v.userTurn;
  if (userTurn !== undefined) {
    if (!isPlainObject(userTurn)) return null;
    for (const k in userTurn) if (k !== 'principal' && k !== 'text') return null;
    if (!isIdent(userTurn.principal) || typeof userTurn.text !== 'string' || userTurn.text.length > 100_000) return null;
  }
  if (v.context !== undefined && v.context !== 'session' && v.context !== 'declared') return null;
  if (v.confirmationId !== undefined && !isIdent(v.confirmationId)) return null;
  if (v.requester !== undefined && !isIdent(v.requester)) return null;
  // the copy is fresh (toPlainJson) and now known valid: only the default needs filling in
  const out = v as z.output<typeof schemas.authorize>;
  if (action.args === undefined) (action as Record<string, unknown>).args = args;
  return out;
}

/**
 * {@link parseInput} for `authorize`, with {@link authorizeFast} in front of zod.
 * @throws MemauthError `INVALID_ARGUMENT`, `TENANT_REQUIRED`; `ARGS_TOO_LARGE` for arguments over
 *   the limits of src/core/argument-limits.ts.
 */
export function parseAuthorize(input: unknown): z.output<typeof schemas.authorize> {
  const plain = toPlainJson(input ?? {});
  const fast = plain.ok ? authorizeFast(plain.value) : null;
  const a = fast ?? parseInput(schemas.authorize, input, 'authorize');
  assertArgumentsWithinLimits(a.action, 'authorize');
  return a;
}
