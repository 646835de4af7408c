import { z } from 'zod';
import { AUTHORITIES } from '../core/authority.js';
import { MemauthError } from '../core/errors.js';
import { PRINCIPAL_KINDS, TRANSFORMS } from '../core/types.js';

/** Identifiers: 1–200 printable characters, no control characters. */
const ident = z.string().min(1).max(200).regex(/^[^\u0000-\u001f\u007f]+$/, 'must not contain control characters');
const tenant = ident;
const isoDate = z.string().refine((s) => !Number.isNaN(Date.parse(s)) && /^\d{4}-\d{2}-\d{2}T/.test(s), 'must be an ISO-8601 date-time');
/** Stored free text: no U+0000, which PostgreSQL text cannot hold (refused on every store alike). */
const NO_NUL = /^[^\u0000]*$/;
const noNul = 'must not contain U+0000 (NUL)';
const content = z.string().min(1).max(1_000_000).regex(NO_NUL, noNul);
const jsonArgs = z.record(z.string(), z.unknown());

export const schemas = {
  tenant: z.strictObject({ tenant }),
  registerPrincipal: z.strictObject({ tenant, id: ident, kind: z.enum(PRINCIPAL_KINDS), maxAuthority: z.enum(AUTHORITIES).optional(), domain: ident }),
  write: z.strictObject({
    tenant,
    scope: ident,
    principal: ident,
    content,
    source: z.string().min(1).max(2000).regex(NO_NUL, noNul).optional(),
    sourceAt: isoDate.optional(),
    authority: z.enum(AUTHORITIES).optional(),
    session: ident.optional(),
    expiresAt: isoDate.optional(),
    reason: z.string().max(1000).regex(NO_NUL, noNul).optional(),
  }),
  derive: z.strictObject({
    tenant,
    scope: ident.optional(),
    principal: ident,
    from: z.array(ident).max(1000),
    content,
    transform: z.enum(TRANSFORMS),
    session: ident.optional(),
    narrowInputs: z.boolean().optional(),
    source: z.string().min(1).max(2000).regex(NO_NUL, noNul).optional(),
    expiresAt: isoDate.optional(),
    reason: z.string().max(1000).regex(NO_NUL, noNul).optional(),
  }),
  get: z.strictObject({ tenant, id: ident, session: ident.optional() }),
  search: z.strictObject({ tenant, scope: ident, query: z.string().max(10_000), limit: z.number().int().min(1).max(1000).optional(), session: ident.optional() }),
  list: z.strictObject({ tenant, scope: ident.optional(), limit: z.number().int().min(1).max(10_000).optional(), offset: z.number().int().min(0).optional(), includeDeleted: z.boolean().optional() }),
  corroborate: z.strictObject({ tenant, recordId: ident, principal: ident, evidence: z.string().min(1).max(2000).regex(NO_NUL, noNul) }),
  confirm: z.strictObject({
    tenant,
    principal: ident,
    action: z.strictObject({ type: ident, args: jsonArgs.optional(), resource: z.string().min(1).max(2000).regex(NO_NUL, noNul).optional() }),
    argsHash: z.string().regex(/^[0-9a-f]{64}$/, 'must be a SHA-256 hex digest').optional(),
    memoryIds: z.array(ident).max(1000).optional(),
    expiresInSeconds: z.number().int().min(1).optional(),
    maxUses: z.number().int().min(1).max(1000).optional(),
  }),
  authorize: z.strictObject({
    tenant,
    action: z.strictObject({ type: ident, args: jsonArgs.default({}), resource: z.string().min(1).max(2000).regex(NO_NUL, noNul).optional() }),
    session: ident.optional(),
    dependsOn: z.array(ident).max(1000).optional(),
    userTurn: z.strictObject({ principal: ident, text: z.string().max(100_000) }).optional(),
    context: z.enum(['session', 'declared']).optional(),
    confirmationId: ident.optional(),
  }),
  delete: z.strictObject({ tenant, id: ident, principal: ident.optional(), reason: z.string().max(1000).regex(NO_NUL, noNul).optional() }),
  replay: z.strictObject({ tenant, decisionId: ident }),
  listDecisions: z.strictObject({ tenant, limit: z.number().int().min(1).max(10_000).optional() }),
  verify: z.strictObject({ tenant: tenant.optional() }),
} as const;

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** String.prototype.isWellFormed, spelled out for the ES2023 lib. */
const wellFormed = (s: string): boolean => !LONE_SURROGATE.test(s);

/**
 * A fresh plain-JSON copy of `value`, or an error path + reason. Accepts null, booleans,
 * finite numbers, well-formed strings, arrays and plain objects; drops properties whose value
 * is `undefined` (absent); refuses functions, symbols, bigints, NaN/Infinity, class instances
 * (incl. objects with `toJSON`), `__proto__`/`constructor`/`prototype` keys, lone surrogates,
 * cycles and nesting deeper than 64. What the gate hashes, walks and stores is this one copy.
 */
export function toPlainJson(value: unknown, path = ''): { ok: true; value: unknown } | { ok: false; path: string; reason: string } {
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
      if (Array.isArray(v)) return v.map((x, i) => (x === undefined ? fail(`${p}[${i}]`, 'must not be undefined') : walk(x, `${p}[${i}]`, depth + 1)));
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
