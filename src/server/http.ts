/**
 * The HTTP server: builds the Fastify app (REST routes, MCP endpoint, dashboard, OpenAPI) over an open
 * store, maps errors to memauth's `{code, message, details}` shape, and starts/stops it.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance, LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Memory } from '../api/memory.js';
import { openMemory } from '../api/open.js';
import type { Embedder } from '../embed/embedder.js';
import { parseInput } from '../api/validation.js';
import { DEFAULT_CONFIG, type ServerConfig } from './config.js';
import { MemauthError } from '../core/errors.js';
import { DecisionBudget } from './decision-budget.js';
import { HttpError, errorResponse } from './errors.js';
import { TenantSlots } from './fairness.js';
import { WriteBudget } from './write-budget.js';
import { McpHttp } from './mcp-http.js';
import { exactJsonBodies, limitBodies, untrustedBodyLimit } from './json-body.js';
import { registerDashboard } from './dashboard.js';
import { buildOpenApi } from './openapi.js';
import { adminRoutes } from './routes/admin.js';
import { auditRoutes } from './routes/audit.js';
import { surfaceRoutes } from './routes/surfaces.js';
import { type AnyRoute, type Auth, type Services, route } from './routes/common.js';
import { gateRoutes } from './routes/gate.js';
import { memoryRoutes } from './routes/memories.js';
import { reviewRoutes } from './routes/review.js';
import { responses } from './schemas.js';
import { type Identity, type IssuedToken, TokenService } from './tokens.js';

declare module 'fastify' {
  interface FastifyRequest {
    identity: Identity | null;
    /** the error code sent, for the request log. */
    errorCode: string | null;
  }
}

/** memauth's version (package.json). */
export const VERSION: string = (() => {
  try {
    return (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
})();

/** Options of {@link startServer}. */
export interface StartServerOptions {
  /** settings over {@link DEFAULT_CONFIG} (resolve flags/env/file first with `resolveConfig`). */
  readonly config?: Partial<ServerConfig>;
  /** an already open store; default: `openMemory({path: config.db, policy: config.policy, groupCommit: true, embedder})`, closed by `close()`. */
  readonly memory?: Memory;
  /** the embedder of the store opened from `config.db` (semantic and hybrid search); default none. */
  readonly embedder?: Embedder | null;
  /** create an admin token when the store has none unrevoked (default true); it is returned once as `adminToken`. */
  readonly ensureAdminToken?: boolean;
  /** where the JSON request log goes (default: stderr). */
  readonly logStream?: NodeJS.WritableStream;
}

/** A running server. */
export interface RunningServer {
  /** `http://host:port` */
  readonly url: string;
  readonly port: number;
  readonly config: ServerConfig;
  readonly memory: Memory;
  readonly app: FastifyInstance;
  /** the admin token created at this start (print it once), or null when one already existed. */
  readonly adminToken: IssuedToken | null;
  /**
   * Graceful shutdown: refuse new requests (503 SHUTTING_DOWN), close MCP sessions, let in-flight
   * requests finish (cut after `shutdownTimeoutMs`), then close the store (final signed checkpoint).
   * Idempotent.
   */
  close(): Promise<void>;
}

const bearer = (h: string | undefined): string | null => {
  if (h === undefined) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? (m[1] as string) : null;
};

/** Fastify's own errors (body parsing, limits) in memauth's `{code, message, details}` shape. */
function fastifyError(e: unknown): HttpError | null {
  if (e instanceof HttpError) return e;
  const err = e as { code?: unknown; statusCode?: unknown; message?: unknown };
  const code = typeof err.code === 'string' ? err.code : '';
  const message = typeof err.message === 'string' ? err.message : 'invalid request';
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new HttpError(413, 'BODY_TOO_LARGE', 'the request body is larger than this server accepts', {});
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new HttpError(415, 'UNSUPPORTED_MEDIA_TYPE', 'send the body as application/json', {});
  if (code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return new HttpError(400, 'INVALID_JSON', 'the body is empty but the content type is application/json', {});
  if (code === 'FST_ERR_CTP_INVALID_JSON_BODY' || e instanceof SyntaxError) return new HttpError(400, 'INVALID_JSON', `the body is not valid JSON: ${message}`, {});
  if (code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') return new HttpError(400, 'INVALID_ARGUMENT', 'the Content-Length header does not match the body', {});
  if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
    return new HttpError(err.statusCode, err.statusCode === 413 ? 'BODY_TOO_LARGE' : err.statusCode === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : 'INVALID_ARGUMENT', message, code ? { fastify: code } : {});
  }
  return null;
}

/** The REST routes, in documentation order. */
export function apiRoutes(): AnyRoute[] {
  return [...adminRoutes, ...memoryRoutes, ...gateRoutes, ...auditRoutes, ...surfaceRoutes, ...reviewRoutes];
}

/**
 * Build the Fastify app of the HTTP API and MCP server over an open store (not listening).
 * Use {@link startServer} to run it; this is exposed for embedding.
 */
export function buildApp(mem: Memory, config: ServerConfig, opts: { logStream?: NodeJS.WritableStream } = {}): { app: FastifyInstance; services: Services; mcp: McpHttp; startClosing: () => void } {
  const tokens = new TokenService(mem.driver);
  const decisionBudget = new DecisionBudget({ external: config.externalDecisionsPerMinute, tool: config.toolDecisionsPerMinute });
  const writeBudget = new WriteBudget(config);
  const expensive = new TenantSlots(config.maxExpensivePerTenant);
  const services: Services = { mem, tokens, config, version: VERSION, expensive, decisionBudget, writeBudget };
  const mcp = new McpHttp(mem, config, VERSION, { decisionBudget, writeBudget, expensive });
  let closing = false;
  const app = Fastify({
    logger: config.logLevel === 'silent' ? false : { level: config.logLevel, stream: opts.logStream ?? process.stderr },
    bodyLimit: config.bodyLimit,
    // one structured line per request is written by the onResponse hook below
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    genReqId: () => `req_${randomBytes(8).toString('hex')}`,
  });
  // JSON only: a text/plain body is 415 UNSUPPORTED_MEDIA_TYPE, not a string to validate
  app.removeContentTypeParser('text/plain');
  exactJsonBodies(app);
  // an external or tool caller's body is refused past its own limit before it is read (authentication runs first, onRequest);
  // a request no token vouches for (no route of ours takes a body without one: a 404, a GET) gets 16 KiB
  limitBodies(app, (req) => (req.identity === null ? Math.min(config.bodyLimit, 16 * 1024) : untrustedBodyLimit(req.identity.kind === 'principal' ? req.identity.principal.kind : undefined, config)));
  app.decorateRequest('identity', null);
  app.decorateRequest('errorCode', null);

  app.addHook('onRequest', async (req, reply) => {
    if (closing) {
      reply.header('connection', 'close');
      throw new HttpError(503, 'SHUTTING_DOWN', 'the server is shutting down; retry shortly', {});
    }
  });
  app.addHook('onResponse', async (req, reply) => {
    const id = req.identity;
    req.log.info(
      {
        method: req.method,
        url: req.url.split('?')[0],
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        tenant: id?.kind === 'principal' ? id.tenant : undefined,
        principal: id?.kind === 'principal' ? id.principal.id : id?.kind === 'admin' ? '(admin)' : undefined,
        token: id?.tokenId,
        code: req.errorCode ?? undefined,
      },
      'request',
    );
  });

  const authenticate =
    (auth: Auth) =>
    async (req: FastifyRequest): Promise<void> => {
      if (auth === 'none') return;
      const h = req.headers.authorization;
      const token = bearer(h);
      if (token === null)
        throw new HttpError(401, 'UNAUTHENTICATED', h === undefined ? 'missing bearer token: send Authorization: Bearer mat_…' : 'malformed Authorization header: expected Bearer mat_…', {
          reason: h === undefined ? 'missing' : 'malformed',
        });
      const identity = await tokens.authenticate(token);
      if (auth === 'admin' && identity.kind !== 'admin') throw new HttpError(403, 'ADMIN_REQUIRED', 'this endpoint needs the admin token', {});
      if (auth === 'principal' && identity.kind !== 'principal')
        throw new HttpError(403, 'PRINCIPAL_TOKEN_REQUIRED', "this endpoint acts as a principal: use that principal's token, not the admin token", {});
      req.identity = identity;
    };

  // a corrupted page found by any request fails /healthz from then on (its own probe reads little)
  let corrupt: MemauthError | null = null;
  app.setErrorHandler((e: unknown, req: FastifyRequest, reply: FastifyReply) => {
    const { status, body, internal } = errorResponse(fastifyError(e) ?? e, req.id);
    if (internal) req.log.error({ err: e }, 'unexpected error');
    if (body.code === 'DATABASE_CORRUPT') corrupt ??= new MemauthError('DATABASE_CORRUPT', body.message, body.details);
    req.errorCode = body.code;
    if (status === 401) reply.header('www-authenticate', 'Bearer realm="memauth"');
    if (typeof body.details.retryAfterSeconds === 'number') reply.header('retry-after', String(body.details.retryAfterSeconds));
    return reply.code(status).type('application/json; charset=utf-8').send(body);
  });
  app.setNotFoundHandler((req, reply) => {
    req.errorCode = 'NOT_FOUND';
    return reply.code(404).send({ code: 'NOT_FOUND', message: `no route ${req.method} ${req.url.split('?')[0]}; see /openapi.json`, details: { method: req.method, path: req.url.split('?')[0] } });
  });

  const systemRoutes: AnyRoute[] = [
    route({
      method: 'GET',
      path: '/healthz',
      operationId: 'health',
      tag: 'system',
      summary: 'Liveness and readiness: the store answers',
      description: 'Fails with 500 DATABASE_CORRUPT when the store cannot be read, or once any request has found it corrupted (restore it from a backup and restart).',
      auth: 'none',
      responses: { 200: 'Health' },
      handler: async () => {
        if (corrupt !== null) throw corrupt;
        await mem.driver.auditHead('');
        return { status: 200, body: { status: 'ok', version: VERSION, storage: mem.driver.kind, policyVersion: mem.policy.version } };
      },
    }),
  ];
  const routes = [...systemRoutes, ...apiRoutes()];
  const openapi = buildOpenApi(
    [
      ...routes,
      route({
        method: 'GET',
        path: '/openapi.json',
        operationId: 'openapi',
        tag: 'system',
        summary: 'This OpenAPI 3.1 document',
        auth: 'none',
        responses: { 200: { contentType: 'application/json', item: 'OpenApiDocument', description: 'this document' } },
        handler: async () => ({ status: 200, body: null }),
      }),
    ],
    VERSION,
  );
  app.get('/openapi.json', async () => openapi);
  registerDashboard(app);

  for (const r of routes) {
    app.route({
      method: r.method,
      url: r.path,
      onRequest: authenticate(r.auth),
      handler: async (req, reply) => {
        const body = r.body ? parseInput(r.body, req.body ?? {}, r.operationId) : undefined;
        // fastify's query and params objects have a prototype of their own: validate plain copies
        const query = r.query ? parseInput(r.query, { ...(req.query as object) }, r.operationId) : undefined;
        const params = r.params ? parseInput(r.params, { ...(req.params as object) }, r.operationId) : undefined;
        const identity = req.identity as Identity;
        // the expensive-request slots of the caller's side: an external token never takes those of the tenant's own principals
        const scoped = { ...services, expensive: expensive.for(identity?.kind === 'principal' ? identity.principal : null) };
        const out = await r.handler({ identity, body, query, params, services: scoped, log: req.log });
        if ('stream' in out) return reply.code(out.status).type(out.contentType).send(out.stream);
        const declared = r.responses[out.status];
        if (config.validateResponses) {
          const schema = typeof declared === 'string' ? responses[declared] : undefined;
          const check = schema?.safeParse(out.body);
          if (!check || !check.success) {
            req.log.error({ operation: r.operationId, status: out.status, issues: check?.error.issues.slice(0, 5) }, 'response does not match its schema');
            throw new Error(`response of ${r.operationId} (${out.status}) does not match its declared schema`);
          }
        }
        return reply.code(out.status).send(out.body);
      },
    });
  }

  const mcpHandler = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => mcp.handle(req, reply, req.identity as Identity);
  for (const method of ['POST', 'GET', 'DELETE'] as const) app.route({ method, url: '/mcp', onRequest: authenticate('any'), handler: mcpHandler });

  return {
    app,
    services,
    mcp,
    startClosing: () => {
      closing = true;
    },
  };
}

/**
 * Start the HTTP API and the MCP-over-HTTP endpoint on the embedded store.
 *
 * Opens (or creates) the SQLite file `config.db`, creates the admin token if the store has none,
 * and listens on `config.host:config.port` (127.0.0.1:8787 by default; port 0 picks a free one).
 *
 * @example
 * ```ts
 * import { startServer } from 'memauth/server';
 * const srv = await startServer({ config: { db: 'agent.db', port: 0 } });
 * if (srv.adminToken) console.log('admin token:', srv.adminToken.token);
 * // … fetch(`${srv.url}/v1/memories`, { headers: { authorization: `Bearer ${token}` } })
 * await srv.close();
 * ```
 * @throws MemauthError `DATABASE_CORRUPT`, `DATABASE_LOCKED`, `POLICY_INVALID`; a listen error (EADDRINUSE…).
 */
export async function startServer(options: StartServerOptions = {}): Promise<RunningServer> {
  const config: ServerConfig = Object.freeze({ ...DEFAULT_CONFIG, ...options.config });
  const ownsMemory = options.memory === undefined;
  const mem =
    options.memory ??
    (await openMemory({
      path: config.db,
      // group commit: concurrent requests share one COMMIT (fsync); each response is sent only
      // after the COMMIT that includes its write (src/store/sqlite/group-commit.ts)
      groupCommit: true,
      embedder: options.embedder ?? null,
      maxVersionsPerChain: config.maxVersionsPerChain,
      ...(config.policy !== undefined ? { policy: config.policy } : {}),
      ...(config.checkpointKeyFile !== undefined ? { checkpointKeyFile: config.checkpointKeyFile } : {}),
    }));
  let built: ReturnType<typeof buildApp>;
  let adminToken: IssuedToken | null = null;
  try {
    built = buildApp(mem, config, options.logStream !== undefined ? { logStream: options.logStream } : {});
    if (options.ensureAdminToken !== false) adminToken = await built.services.tokens.ensureAdmin();
    await built.app.listen({ host: config.host, port: config.port });
  } catch (e) {
    if (ownsMemory) await mem.close();
    throw e;
  }
  const { app, mcp, startClosing } = built;
  const addr = app.server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  let closed: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      startClosing();
      await mcp.closeAll();
      const cut = setTimeout(() => app.server.closeAllConnections(), config.shutdownTimeoutMs);
      cut.unref();
      try {
        await app.close();
      } finally {
        clearTimeout(cut);
        if (ownsMemory) await mem.close();
      }
    })();
    return closed;
  };
  return { url: `http://${host}:${addr.port}`, port: addr.port, config, memory: mem, app, adminToken, close };
}
