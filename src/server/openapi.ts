/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the route table and its zod schemas.
 */
import { z } from 'zod';
import type { AnyRoute } from './routes/common.js';
import { requests, responses } from './schemas.js';

type JsonObject = Record<string, unknown>;

const REF = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });

const ERROR_TEXT: Readonly<Record<number, string>> = {
  400: 'invalid input (INVALID_ARGUMENT, INVALID_JSON, TENANT_REQUIRED, SCOPE_REQUIRED…); nothing was stored',
  401: 'no, malformed, unknown or revoked bearer token (UNAUTHENTICATED)',
  403: 'the token may not do this (ADMIN_REQUIRED, PRINCIPAL_TOKEN_REQUIRED, TENANT_MISMATCH, PRINCIPAL_MISMATCH, AUTHORITY_EXCEEDS_PRINCIPAL, …)',
  404: "not found in the token's tenant (RECORD_NOT_FOUND, DECISION_NOT_FOUND, UNKNOWN_PRINCIPAL, TOKEN_NOT_FOUND…)",
  409: 'conflict with the stored state (PRINCIPAL_EXISTS, RECORD_DELETED, TOKEN_REVOKED)',
  413: 'body larger than the body limit (BODY_TOO_LARGE), or content longer than the maximum (CONTENT_TOO_LONG)',
  415: 'the body is not application/json (UNSUPPORTED_MEDIA_TYPE)',
  429: 'over a limit: the tenant already runs its limit of expensive requests (TOO_MANY_REQUESTS; retry when one has finished), or an external or tool principal used its decisions, writes or reads per minute (RATE_LIMITED; retry after `Retry-After` seconds)',
  500: 'unexpected error: a generic message with the request id; never a stack trace',
  503: 'shutting down (SHUTTING_DOWN) or the database is locked (DATABASE_LOCKED)',
};

/** JSON Schemas of every request and response component, generated with zod 4's `z.toJSONSchema`. */
function components(): Record<string, unknown> {
  const strip = (all: Record<string, unknown>): Record<string, unknown> =>
    Object.fromEntries(
      Object.entries(all).map(([k, v]) => {
        const { $schema: _s, $id: _i, ...rest } = v as JsonObject;
        return [k, rest];
      }),
    );
  const out: Record<string, unknown> = {};
  for (const [names, io] of [
    [requests, 'input'],
    [responses, 'output'],
  ] as const) {
    const reg = z.registry<{ id: string }>();
    for (const [name, schema] of Object.entries(names)) reg.add(schema as z.ZodType, { id: name });
    const doc = z.toJSONSchema(reg, { io, unrepresentable: 'any', uri: (id) => `#/components/schemas/${id}` }) as { schemas: Record<string, unknown> };
    Object.assign(out, strip(doc.schemas));
  }
  return out;
}

/** Query or path parameters of an object schema. */
function parameters(schema: z.ZodType | undefined, where: 'query' | 'path'): JsonObject[] {
  if (!schema) return [];
  const js = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, JsonObject>; required?: string[] };
  return Object.entries(js.properties ?? {}).map(([name, s]) => {
    const { description, ...rest } = s;
    return { name, in: where, required: where === 'path' || (js.required ?? []).includes(name), schema: rest, ...(typeof description === 'string' ? { description } : {}) };
  });
}

const nameOf = (schema: z.ZodType): string | undefined => Object.entries(requests).find(([, s]) => s === schema)?.[0];

/**
 * The OpenAPI 3.1 document of the HTTP API, generated from the route table and the same zod
 * schemas that validate requests and responses (src/server/schemas.ts).
 */
export function buildOpenApi(routes: readonly AnyRoute[], version: string): JsonObject {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const ok: Record<string, unknown> = {};
    for (const [status, res] of Object.entries(r.responses)) {
      ok[status] =
        typeof res === 'string'
          ? { description: res, content: { 'application/json': { schema: REF(res) } } }
          : { description: res.description, content: { [res.contentType]: { schema: REF(res.item) } } };
    }
    const errors = new Set<number>([500, 503, ...(r.errors ?? [])]);
    if (r.auth !== 'none') for (const s of [400, 401, 403]) errors.add(s);
    if (r.body) for (const s of [400, 413, 415]) errors.add(s);
    if (r.query || r.params) errors.add(400);
    for (const s of [...errors].sort()) ok[String(s)] = { description: ERROR_TEXT[s] ?? 'error', content: { 'application/json': { schema: REF('Error') } } };
    const bodyName = r.body ? nameOf(r.body) : undefined;
    const op: JsonObject = {
      operationId: r.operationId,
      tags: [r.tag],
      summary: r.summary,
      ...(r.description !== undefined ? { description: r.description } : {}),
      security: r.auth === 'none' ? [] : [{ bearer: [] }],
      ...(r.auth === 'admin'
        ? { 'x-memauth-auth': 'admin token' }
        : r.auth === 'principal'
          ? { 'x-memauth-auth': 'principal token' }
          : r.auth === 'any'
            ? { 'x-memauth-auth': 'admin or principal token' }
            : {}),
      parameters: [...parameters(r.params, 'path'), ...parameters(r.query, 'query')],
      ...(r.body ? { requestBody: { required: true, content: { 'application/json': { schema: bodyName ? REF(bodyName) : z.toJSONSchema(r.body, { io: 'input', unrepresentable: 'any' }) } } } } : {}),
      responses: ok,
    };
    paths[path] = { ...(paths[path] ?? {}), [r.method.toLowerCase()]: op };
  }
  const mcpOp = (summary: string): JsonObject => ({
    tags: ['mcp'],
    summary,
    security: [{ bearer: [] }],
    'x-memauth-auth': 'principal token of an agent, tool or external principal',
    responses: {
      200: { description: 'MCP Streamable HTTP (JSON-RPC 2.0; JSON or text/event-stream)' },
      401: { description: ERROR_TEXT[401], content: { 'application/json': { schema: REF('Error') } } },
      403: { description: 'MCP_PRINCIPAL_KIND: the token is not an agent, tool or external principal', content: { 'application/json': { schema: REF('Error') } } },
    },
  });
  paths['/mcp'] = {
    post: { ...mcpOp("MCP Streamable HTTP endpoint: JSON-RPC requests (initialize opens a session bound to the token's principal)"), operationId: 'mcpPost' },
    get: { ...mcpOp('MCP Streamable HTTP endpoint: server-to-client event stream of a session'), operationId: 'mcpGet' },
    delete: { ...mcpOp('MCP Streamable HTTP endpoint: end a session'), operationId: 'mcpDelete' },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'memauth',
      version,
      description:
        "Long-term memory for LLM agents whose authority to drive an action is bound to where each memory came from, at write time. The bearer token fixes the principal, its tenant and its authority ceiling; a request can never claim a higher origin than its principal's.",
    },
    servers: [{ url: '/' }],
    tags: ['auth', 'principals', 'tokens', 'memories', 'gate', 'audit', 'review', 'system', 'mcp'].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'mat_… (memauth token)' } },
      schemas: components(),
    },
  };
}
