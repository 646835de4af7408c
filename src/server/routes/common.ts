/**
 * The route table's types (route spec, auth, handler context, services) and the helpers every route
 * module shares. The OpenAPI document and the registry read these.
 */
import type { Readable } from 'node:stream';
import type { FastifyBaseLogger } from 'fastify';
import type { z } from 'zod';
import type { Memory } from '../../api/memory.js';
import { emptyTenantHint } from '../../api/surfaces.js';
import { MemauthError } from '../../core/errors.js';
import type { Principal } from '../../core/types.js';
import type { ServerConfig } from '../config.js';
import { HttpError } from '../errors.js';
import { assertCitesOwn } from '../exposure.js';
import type { DecisionBudget } from '../decision-budget.js';
import type { TenantSlots } from '../fairness.js';
import type { WriteBudget } from '../write-budget.js';
import type { ResponseName } from '../schemas.js';
import type { Identity, TokenService } from '../tokens.js';

/** What every handler can reach. */
export interface Services {
  readonly mem: Memory;
  readonly tokens: TokenService;
  readonly config: ServerConfig;
  readonly version: string;
  /** per-tenant limit of the expensive endpoints (src/server/fairness.ts); a handler gets the view of its caller's side. */
  readonly expensive: TenantSlots;
  /** external principals' decisions per minute (src/server/decision-budget.ts), shared with MCP. */
  readonly decisionBudget: DecisionBudget;
  /** external principals' records and bytes per minute (src/server/write-budget.ts), shared with MCP. */
  readonly writeBudget: WriteBudget;
}

/** Who may call a route: nobody needs a token (`none`), the admin token, a principal token, or `any` token. */
export type Auth = 'none' | 'admin' | 'principal' | 'any';

/** A handler's result: a JSON body checked against the route's response schema, or a stream. */
export type HandlerResult = { readonly status: number; readonly body: unknown } | { readonly status: number; readonly stream: Readable; readonly contentType: string };

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

/** What a handler gets: the identity its token fixes and the validated body, query and path. */
export interface HandlerCtx<B, Q, P, A extends Auth> {
  readonly identity: A extends 'none' ? Identity | null : Identity;
  readonly body: B;
  readonly query: Q;
  readonly params: P;
  readonly services: Services;
  readonly log: FastifyBaseLogger;
}

/** A route of the HTTP API: method, path, auth, schemas and a thin handler. The OpenAPI document is generated from these. */
export interface RouteSpec<B extends z.ZodType | undefined, Q extends z.ZodType | undefined, P extends z.ZodType | undefined, A extends Auth> {
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** fastify style: `/v1/memories/:id` */
  readonly path: string;
  readonly operationId: string;
  readonly tag: string;
  readonly summary: string;
  readonly description?: string;
  readonly auth: A;
  readonly body?: B;
  readonly query?: Q;
  readonly params?: P;
  /** success statuses and the name of their response schema (or a non-JSON content type). */
  readonly responses: Readonly<Record<number, ResponseName | { readonly contentType: string; readonly item: ResponseName; readonly description: string }>>;
  /** documented error statuses besides the ones every authenticated route has (400, 401, 403). */
  readonly errors?: readonly number[];
  readonly handler: (ctx: HandlerCtx<Out<B>, Out<Q>, Out<P>, A>) => Promise<HandlerResult>;
}

/** A route with its types erased, as the registry and the OpenAPI generator hold it. */
export interface AnyRoute {
  readonly method: 'GET' | 'POST' | 'DELETE';
  readonly path: string;
  readonly operationId: string;
  readonly tag: string;
  readonly summary: string;
  readonly description?: string;
  readonly auth: Auth;
  readonly body?: z.ZodType;
  readonly query?: z.ZodType;
  readonly params?: z.ZodType;
  readonly responses: RouteSpec<undefined, undefined, undefined, Auth>['responses'];
  readonly errors?: readonly number[];
  readonly handler: (ctx: HandlerCtx<unknown, unknown, unknown, Auth>) => Promise<HandlerResult>;
}

/** Declare a route (keeps the handler's types tied to its schemas). */
export function route<B extends z.ZodType | undefined = undefined, Q extends z.ZodType | undefined = undefined, P extends z.ZodType | undefined = undefined, A extends Auth = Auth>(
  spec: RouteSpec<B, Q, P, A>,
): AnyRoute {
  return spec as unknown as AnyRoute;
}

/**
 * The tenant of a request. A principal token fixes it: naming another one is `TENANT_MISMATCH`
 * (403). The admin token must name it (`TENANT_REQUIRED`, 400).
 */
export function tenantFor(identity: Identity, named: string | undefined): string {
  if (identity.kind === 'principal') {
    if (named !== undefined && named !== identity.tenant)
      throw new HttpError(403, 'TENANT_MISMATCH', `this token belongs to tenant ${JSON.stringify(identity.tenant)}; it cannot act in ${JSON.stringify(named)}`, { tenant: named });
    return identity.tenant;
  }
  if (named === undefined) throw new MemauthError('TENANT_REQUIRED', 'the admin token must name the tenant (tenant in the body, or ?tenant= for GET and DELETE)', { field: 'tenant' });
  return named;
}

/**
 * `{hint}` for the admin when a listing came back empty and its tenant holds nothing at all (no
 * principal, no record: a misspelt `?tenant=`), else `{}`. A principal token's tenant exists.
 */
export async function tenantHint(identity: Identity, services: Services, tenant: string, empty: boolean): Promise<{ hint?: string }> {
  if (!empty || identity.kind !== 'admin') return {};
  const hint = await emptyTenantHint(services.mem, tenant);
  return hint === undefined ? {} : { hint };
}

/**
 * The principal a write is made by: always the token's. The admin token cannot write
 * (`PRINCIPAL_TOKEN_REQUIRED`, 403); naming another principal is `PRINCIPAL_MISMATCH` (403).
 */
export function writerFor(identity: Identity, named: string | undefined): Principal {
  if (identity.kind !== 'principal') throw new HttpError(403, 'PRINCIPAL_TOKEN_REQUIRED', "writes are bound to the principal that makes them: use that principal's token, not the admin token", {});
  if (named !== undefined && named !== identity.principal.id)
    throw new HttpError(403, 'PRINCIPAL_MISMATCH', `this token belongs to principal ${JSON.stringify(identity.principal.id)}; it cannot act as ${JSON.stringify(named)}`, { principal: named });
  return identity.principal;
}

/**
 * The requester a call is made for (docs/design.md § What the model sees: who asks is the token's,
 * never the body's): a principal token's principal id — it owns the sessions it opens and is
 * recorded on its decisions — or `undefined` for the admin token (the application).
 */
export function requesterOf(identity: Identity): string | undefined {
  return identity.kind === 'principal' ? identity.principal.id : undefined;
}

/** Refuse a memory content longer than the configured maximum (`CONTENT_TOO_LONG`, 413). */
export function checkContent(config: Pick<ServerConfig, 'maxContentChars'>, content: string): void {
  if (content.length > config.maxContentChars) {
    throw new HttpError(413, 'CONTENT_TOO_LONG', `content is ${content.length} characters; this server accepts at most ${config.maxContentChars}`, {
      field: 'content',
      length: content.length,
      max: config.maxContentChars,
    });
  }
}

/**
 * Deletion rule of the server: the admin, `user` and `system` principals may delete any record of
 * their tenant; any other principal only records it wrote (`FORBIDDEN`, 403). An unknown id is
 * `RECORD_NOT_FOUND` (404) — except for an external principal, which reads nothing: another's
 * record and an unknown id are both `FORBIDDEN` without the writer ({@link assertCitesOwn}).
 */
export async function assertMayDelete(mem: Memory, tenant: string, caller: Principal | null, id: string): Promise<void> {
  if (caller === null || caller.kind === 'user' || caller.kind === 'system') return;
  await assertCitesOwn(mem, tenant, caller, [id], 'id');
  const [rec] = await mem.driver.getRecords(tenant, [id]);
  if (!rec) throw new MemauthError('RECORD_NOT_FOUND', `no record ${JSON.stringify(id)} in tenant ${JSON.stringify(tenant)}`, { id });
  if (rec.origin.principalId !== caller.id) {
    throw new HttpError(
      403,
      'FORBIDDEN',
      `${caller.kind === 'agent' || caller.kind === 'external' ? 'an' : 'a'} ${caller.kind} principal can delete only records it wrote; ${id} was written by ${rec.origin.principalId}`,
      { id, writer: rec.origin.principalId },
    );
  }
}

/** The principal of a principal token, or null for the admin token. */
export const callerOf = (identity: Identity): Principal | null => (identity.kind === 'principal' ? identity.principal : null);

export const ok = (body: unknown): HandlerResult => ({ status: 200, body });
export const created = (body: unknown): HandlerResult => ({ status: 201, body });
