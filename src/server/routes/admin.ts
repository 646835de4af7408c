/**
 * HTTP routes for identity, the policy, principals and tokens (route specs; handlers call the facade).
 */
import { HttpError } from '../errors.js';
import { assertNotExternal } from '../exposure.js';
import { params, queries, requests } from '../schemas.js';
import { type AnyRoute, created, ok, route, tenantFor, tenantHint } from './common.js';

/** Identity, policy, principals and tokens. Managing principals and tokens needs the admin token. */
export const adminRoutes: readonly AnyRoute[] = [
  route({
    method: 'GET',
    path: '/v1/whoami',
    operationId: 'whoami',
    tag: 'auth',
    summary: 'The identity the bearer token fixes: admin, or a principal with its tenant and ceiling',
    auth: 'any',
    responses: { 200: 'Whoami' },
    handler: async ({ identity }) =>
      ok(
        identity.kind === 'admin'
          ? { admin: true, tokenId: identity.tokenId, tenant: null, principal: null }
          : { admin: false, tokenId: identity.tokenId, tenant: identity.tenant, principal: identity.principal },
      ),
  }),
  route({
    method: 'GET',
    path: '/v1/policy',
    operationId: 'getPolicy',
    tag: 'auth',
    summary: 'The policy in force (risk tiers, modes, source rules, corroboration k) and its version',
    description: 'The policy is fixed when the server starts (--policy FILE or $MEMAUTH_POLICY); change it by restarting with another file. Every decision records the version it was taken under.',
    auth: 'any',
    responses: { 200: 'Policy' },
    handler: async ({ services }) => ok({ version: services.mem.policy.version, document: services.mem.policy.document }),
  }),
  route({
    method: 'POST',
    path: '/v1/principals',
    operationId: 'createPrincipal',
    tag: 'principals',
    summary: 'Register a principal in a tenant and (by default) issue its bearer token, shown once',
    description:
      "A principal's kind fixes the highest ceiling it can hold (system > user > tool > agent > external); everything it writes gets at most that authority. Idempotent: when the principal already exists with the same kind, domain and ceiling the answer is 200 with it and no token (issue one with POST /v1/tokens); with another kind, domain or ceiling it is 409 PRINCIPAL_EXISTS naming the differences — a registered principal is never changed.",
    auth: 'admin',
    body: requests.PrincipalCreate,
    responses: { 201: 'PrincipalCreated', 200: 'PrincipalCreated' },
    errors: [404, 409],
    handler: async ({ body, services }) => {
      const { issueToken, ...input } = body;
      const { principal, created: isNew } = await services.mem.ensurePrincipal(input);
      if (!isNew) return ok({ principal, token: null, created: false });
      const token = issueToken === false ? null : await services.tokens.issue({ tenant: principal.tenant, principal: principal.id });
      return created({ principal, token, created: true });
    },
  }),
  route({
    method: 'GET',
    path: '/v1/principals',
    operationId: 'listPrincipals',
    tag: 'principals',
    summary: "The tenant's principals",
    auth: 'any',
    query: queries.Tenant,
    responses: { 200: 'PrincipalList' },
    handler: async ({ identity, query, services }) => {
      assertNotExternal(identity, "the tenant's principals");
      const tenant = tenantFor(identity, query.tenant);
      const principals = await services.mem.listPrincipals({ tenant });
      return ok({ principals, ...(await tenantHint(identity, services, tenant, principals.length === 0)) });
    },
  }),
  route({
    method: 'GET',
    path: '/v1/tokens',
    operationId: 'listTokens',
    tag: 'tokens',
    summary: "List a tenant's tokens (?tenant=), or the admin tokens; never their secrets",
    auth: 'admin',
    query: queries.ListTokens,
    responses: { 200: 'TokenList' },
    handler: async ({ query, services }) => ok({ tokens: await services.tokens.list(query.tenant ?? null) }),
  }),
  route({
    method: 'POST',
    path: '/v1/tokens',
    operationId: 'createToken',
    tag: 'tokens',
    summary: 'Issue another token for a principal ({tenant, principal}) or another admin token ({admin: true}); shown once',
    auth: 'admin',
    body: requests.TokenCreate,
    responses: { 201: 'IssuedToken' },
    errors: [404],
    handler: async ({ body, services }) => {
      if (body.admin === true) {
        if (body.tenant !== undefined || body.principal !== undefined) throw new HttpError(400, 'INVALID_ARGUMENT', 'give either {admin: true} or {tenant, principal}, not both', { field: 'admin' });
        return created(await services.tokens.issue('admin'));
      }
      if (body.tenant === undefined) throw new HttpError(400, 'TENANT_REQUIRED', 'createToken: a tenant is required (or admin: true)', { field: 'tenant' });
      if (body.principal === undefined) throw new HttpError(400, 'INVALID_ARGUMENT', 'createToken: principal is required (or admin: true)', { field: 'principal' });
      return created(await services.tokens.issue({ tenant: body.tenant, principal: body.principal }));
    },
  }),
  route({
    method: 'POST',
    path: '/v1/tokens/:id/rotate',
    operationId: 'rotateToken',
    tag: 'tokens',
    summary: 'Rotate a token: a new token for the same principal (shown once); the old one is revoked at once',
    auth: 'admin',
    params: params.Id,
    responses: { 201: 'TokenRotated' },
    errors: [404, 409],
    handler: async ({ params: p, services }) => created(await services.tokens.rotate(p.id)),
  }),
  route({
    method: 'DELETE',
    path: '/v1/tokens/:id',
    operationId: 'revokeToken',
    tag: 'tokens',
    summary: 'Revoke a token: refused from the next request on (the row is kept, with revokedAt)',
    auth: 'admin',
    params: params.Id,
    responses: { 200: 'TokenInfo' },
    errors: [404, 409],
    handler: async ({ params: p, services }) => ok(await services.tokens.revoke(p.id)),
  }),
];
