/**
 * HTTP routes for memories: write, derive, supersede, get, list, search, lineage, delete (route specs; handlers
 * call the facade).
 */
import type { StoreOptions } from '../../api/options.js';
import { DEFAULT_SEARCH_LIMIT } from '../../api/search.js';
import type { Principal } from '../../core/types.js';
import { params, queries, requests } from '../schemas.js';
import { supersedeAs } from '../external-ids.js';
import { agentOf, assertCitesOwn, assertMayRead, assertSupersedesOwn, lineageFor, recordFor, viewFor } from '../exposure.js';
import { sideOf } from '../fairness.js';
import { markedByGet, markedBySearch } from '../write-budget.js';
import { type AnyRoute, type Services, assertMayDelete, callerOf, checkContent, created, ok, requesterOf, route, tenantFor, tenantHint, writerFor } from './common.js';

const DELETED_HASH =
  "A deleted record's `contentHash` is shown to the admin, user and system tokens only; an agent, tool or external principal's token gets the string `withheld` (the keyed hash of erased text would let it test guesses).";

/** A write's `beforeRecord`: what the record stores besides its content counts against a tool or external writer's byte budget. */
const storedBy = (services: Services, tenant: string, principal: Principal): StoreOptions => ({ beforeRecord: (bytes) => services.writeBudget.storing(tenant, principal, bytes, 'record') });

/** Memories: write, derive, supersede, get, list, search, lineage, delete. */
export const memoryRoutes: readonly AnyRoute[] = [
  route({
    method: 'POST',
    path: '/v1/memories',
    operationId: 'writeMemory',
    tag: 'memories',
    summary: "Write a memory as the token's principal; origin = min(principal ceiling, authority of the source)",
    description:
      'The principal and tenant come from the token. `authority` may only lower the origin; above the ceiling it is refused (AUTHORITY_EXCEEDS_PRINCIPAL, 403, logged in the audit chain). 201 for a new record; 200 with `created: false` when the text is recalled memory echoed back in the same session (it resolves to the original).',
    auth: 'principal',
    body: requests.MemoryWrite,
    responses: { 201: 'WriteResult', 200: 'WriteResult' },
    errors: [404, 413, 429],
    handler: async ({ identity, body, services }) => {
      const principal = writerFor(identity, body.principal);
      const tenant = tenantFor(identity, body.tenant);
      checkContent(services.config, body.content);
      services.writeBudget.admit(tenant, principal, body.content, body.claims);
      const r = await services.mem.write({ ...body, tenant, principal: principal.id, requester: principal.id }, storedBy(services, tenant, principal));
      return { status: r.created ? 201 : 200, body: r };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/derivations',
    operationId: 'deriveMemory',
    tag: 'memories',
    summary: 'Derive a record (summarize, extract, merge, dedup, rewrite, import, embed); taint = min over every input',
    description:
      "Inputs are `from` plus every record read in `session` (unless `narrowInputs` is proven by verbatim extraction). Every `from` id must be in the token's tenant (404 otherwise); an external principal's only records it wrote (FORBIDDEN, 403, for any other id, existing or not).",
    auth: 'principal',
    body: requests.Derivation,
    responses: { 201: 'MemoryRecord' },
    errors: [404, 413, 429],
    handler: async ({ identity, body, services }) => {
      const principal = writerFor(identity, body.principal);
      const tenant = tenantFor(identity, body.tenant);
      checkContent(services.config, body.content);
      services.writeBudget.admit(tenant, principal, body.content, body.claims);
      await assertCitesOwn(services.mem, tenant, principal, body.from, 'from');
      return created(await services.mem.derive({ ...body, tenant, principal: principal.id, requester: principal.id }, storedBy(services, tenant, principal)));
    },
  }),
  route({
    method: 'POST',
    path: '/v1/memories/:id/versions',
    operationId: 'supersedeMemory',
    tag: 'memories',
    summary: "Write a new version of a record as the token's principal (write rules); it competes with current versions it does not outrank",
    description:
      "The record must be a current version in the token's tenant (404 otherwise; RECORD_DELETED or RECORD_SUPERSEDED, 409, with `details.current`). The new version hides the current versions whose action authority is at most its own; below one of them it competes (`conflict: true`) and reads and the gate show both. A chain past half its room takes only a version that outranks every current one (TOO_MANY_VERSIONS, 409); a chain of `maxVersionsPerChain` versions (default 100) takes none (VERSION_CHAIN_FULL, 409: write a new record). An external or tool principal may supersede only records it wrote (FORBIDDEN, 403; for an external one, as for an unknown id): a channel's version of the tenant's records would compete with them at the gate. It writes a new record instead.",
    auth: 'principal',
    params: params.Id,
    body: requests.Supersede,
    responses: { 201: 'SupersedeResult' },
    errors: [404, 409, 413, 429],
    handler: async ({ identity, params: p, body, services }) => {
      const principal = writerFor(identity, body.principal);
      const tenant = tenantFor(identity, body.tenant);
      checkContent(services.config, body.content);
      await assertSupersedesOwn(services.mem, tenant, principal, p.id);
      services.writeBudget.admit(tenant, principal, body.content, body.claims);
      const r = await supersedeAs(services.mem, principal, { ...body, id: p.id, tenant, principal: principal.id, requester: principal.id }, storedBy(services, tenant, principal));
      return created({ ...r, record: recordFor(agentOf(identity) !== null, r.record) });
    },
  }),
  route({
    method: 'POST',
    path: '/v1/memories/search',
    operationId: 'searchMemories',
    tag: 'memories',
    summary: 'Search one scope — `mode` lexical (BM25), semantic or hybrid (default hybrid with an embedder); hits are marked read in `session`',
    description: `A session belongs to the principal whose token used it first (the admin token may use any): another principal's session is SESSION_FORBIDDEN (403). An external principal reads nothing (FORBIDDEN, 403). A tool principal's hits count against its reads per minute (\`toolReadsPerMinute\`, at least one per search; RATE_LIMITED, 429, before searching when \`limit\` reads are not left).`,
    auth: 'any',
    body: requests.Search,
    responses: { 200: 'SearchResult' },
    errors: [429],
    handler: async ({ identity, body, services }) => {
      assertMayRead(identity, 'memory search', body.session);
      const agent = agentOf(identity) !== null;
      const tenant = tenantFor(identity, body.tenant);
      const search = () => services.mem.searchWithInfo({ ...body, tenant, requester: requesterOf(identity) });
      const r = await services.writeBudget.reading(tenant, callerOf(identity), body.limit ?? DEFAULT_SEARCH_LIMIT, search, markedBySearch);
      return ok({ ...r, hits: r.hits.map((h) => ({ ...h, record: recordFor(agent, h.record) })) });
    },
  }),
  route({
    method: 'GET',
    path: '/v1/memories',
    operationId: 'listMemories',
    tag: 'memories',
    summary: 'List records, newest first (does not mark reads: the admin, user and system tokens only)',
    description: DELETED_HASH,
    auth: 'any',
    query: queries.ListMemories,
    responses: { 200: 'RecordList' },
    handler: async ({ identity, query, services }) => {
      assertMayRead(identity, 'the memory listing', 'unmarked');
      const agent = agentOf(identity) !== null;
      const tenant = tenantFor(identity, query.tenant);
      const records = await services.mem.list({ ...query, tenant });
      return ok({ records: records.map((r) => recordFor(agent, r)), ...(await tenantHint(identity, services, tenant, records.length === 0)) });
    },
  }),
  route({
    method: 'GET',
    path: '/v1/memories/:id',
    operationId: 'getMemory',
    tag: 'memories',
    summary: 'One record (the current version of its chain unless `exact`) with its action authority, corroborations, deleted sources and versions; marked read in `session`',
    description: `A corroboration's evidence is shown to a principal token only when its authority is at least the policy's corroboration floor and the record's lowest authority; otherwise \`evidenceRef\` is null and \`evidenceWithheld\` true. The admin token (a person) gets the text, still flagged. A tool principal's read counts against its reads per minute (\`toolReadsPerMinute\`: the record and its current versions; RATE_LIMITED, 429, before reading when none are left). ${DELETED_HASH}`,
    auth: 'any',
    params: params.Id,
    query: queries.GetMemory,
    responses: { 200: 'RecordView' },
    errors: [404, 429],
    handler: async ({ identity, params: p, query, services }) => {
      assertMayRead(identity, 'a memory record', query.session);
      const tenant = tenantFor(identity, query.tenant);
      const get = () => services.mem.get({ tenant, id: p.id, session: query.session, exact: query.exact, requester: requesterOf(identity) });
      const record = await services.writeBudget.reading(tenant, callerOf(identity), 1, get, markedByGet);
      return ok(recordFor(agentOf(identity) !== null, await viewFor(identity, services.mem, tenant, record)));
    },
  }),
  route({
    method: 'GET',
    path: '/v1/memories/:id/lineage',
    operationId: 'getLineage',
    tag: 'memories',
    summary: "A record's derivation lineage down to its roots, as nodes and edges",
    description:
      'For a principal token nodes carry no content (read a record with GET /v1/memories/{id}, which marks the read) and a sourceRef only at or above the corroboration floor; `withheld` says when something was left out. The admin token gets every node whole. The graph walks every ancestor: for a tool token it runs in the tenant’s expensive-request slots of its side (one at a time, TOO_MANY_REQUESTS (429) past `maxExpensivePerTenant`).',
    auth: 'any',
    params: params.Id,
    query: queries.Tenant,
    responses: { 200: 'LineageGraph' },
    errors: [404],
    handler: async ({ identity, params: p, query, services }) => {
      // lineage nodes carry no text for a principal token, so only the external source is refused
      if (identity.kind === 'principal' && identity.principal.kind === 'external') assertMayRead(identity, 'a lineage graph', 'unmarked');
      const tenant = tenantFor(identity, query.tenant);
      const graph = () => services.mem.lineageGraph({ tenant, id: p.id });
      // a graph walks every ancestor: a channel's requests queue behind each other in its side's slots
      const channel = identity.kind === 'principal' && sideOf(identity.principal) === 'external';
      return ok(lineageFor(identity, services.mem, channel ? await services.expensive.run(tenant, 'lineageGraph', graph) : await graph()));
    },
  }),
  route({
    method: 'DELETE',
    path: '/v1/memories/:id',
    operationId: 'deleteMemory',
    tag: 'memories',
    summary: 'Delete a record: content and index entries erased; hash, provenance and the audit chain kept',
    description: `Allowed to the admin, to user and system principals, and to the principal that wrote the record (FORBIDDEN, 403, otherwise). Deleting a deleted record returns it unchanged. ${DELETED_HASH}`,
    auth: 'any',
    params: params.Id,
    query: queries.DeleteMemory,
    responses: { 200: 'MemoryRecord' },
    errors: [404],
    handler: async ({ identity, params: p, query, services }) => {
      const tenant = tenantFor(identity, query.tenant);
      await assertMayDelete(services.mem, tenant, callerOf(identity), p.id);
      const principal = identity.kind === 'principal' ? identity.principal.id : undefined;
      return ok(recordFor(agentOf(identity) !== null, await services.mem.delete({ tenant, id: p.id, principal, reason: query.reason })));
    },
  }),
];
