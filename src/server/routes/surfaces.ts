/**
 * HTTP route of the write-surface inventory (route spec; the handler calls src/api/surfaces.ts).
 */
import { surfaceInventory } from '../../api/surfaces.js';
import { assertReadsEverything } from '../exposure.js';
import { queries } from '../schemas.js';
import { type AnyRoute, ok, route, tenantFor } from './common.js';

/** GET /v1/surfaces: the operator's inventory before a tier is switched to enforce (docs/policy.md § Rolling out). */
export const surfaceRoutes: readonly AnyRoute[] = [
  route({
    method: 'GET',
    path: '/v1/surfaces',
    operationId: 'surfaces',
    tag: 'audit',
    summary: "The tenant's write-surface inventory: every principal and source rule, what was written through it and the decisions per risk tier that depended on it",
    description:
      'Over a window (`since`, default 7 days): per principal, policy source rule, self-statement path and default source — its kind, domain, owner, default authority, store and deletion — the records written and the decisions, per tier and outcome, that cited them. Reads the newest 100,000 records and 20,000 decisions of the window at most (`window.complete` says whether that was all). The admin, user and system tokens only: agent, tool and external principals get FORBIDDEN (403).',
    auth: 'any',
    query: queries.Surfaces,
    responses: { 200: 'SurfaceInventory' },
    errors: [429],
    handler: async ({ identity, query, services }) => {
      const tenant = tenantFor(identity, query.tenant);
      assertReadsEverything(identity, 'the write-surface inventory', "it is the operator's map of every writer and what each fed");
      return ok(await services.expensive.run(tenant, 'surfaces', () => surfaceInventory(services.mem, { tenant, since: query.since })));
    },
  }),
];
