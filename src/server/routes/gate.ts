/**
 * HTTP routes for corroborations, confirmations and the action gate: decisions, evaluation, listing and
 * replay (route specs; handlers call the facade).
 */
import type { z } from 'zod';
import type { Identity } from '../tokens.js';
import { HttpError } from '../errors.js';
import { sideOf } from '../fairness.js';
import { decisionAs, replayAs } from '../external-ids.js';
import { agentOf, assertCitesOwn, assertCorroborationRoom, assertDecisionVisible, assertEvidenceOwn, decisionVisible, replayFor } from '../exposure.js';
import { params, queries, requests } from '../schemas.js';
import { type AnyRoute, type Services, callerOf, created, ok, requesterOf, route, tenantFor, tenantHint, writerFor } from './common.js';

/**
 * The gate input of a POST /v1/decisions(/evaluate) body: tenant and requester from the token, a
 * user's turn only from that user (or the admin).
 * @throws HttpError `USER_TURN_NOT_CALLER` (403), `INVALID_ARGUMENT` (400).
 */
function gateInput(identity: Identity, body: z.output<typeof requests.DecisionCreate>) {
  const tenant = tenantFor(identity, body.tenant);
  let userTurn: { principal: string; text: string } | undefined;
  if (body.userTurn !== undefined) {
    if (identity.kind === 'admin') {
      if (body.userTurn.principal === undefined) throw new HttpError(400, 'INVALID_ARGUMENT', 'authorize: with the admin token, userTurn.principal names the user', { field: 'userTurn.principal' });
      userTurn = { principal: body.userTurn.principal, text: body.userTurn.text };
    } else {
      const caller = identity.principal;
      if (caller.kind !== 'user' || (body.userTurn.principal !== undefined && body.userTurn.principal !== caller.id)) {
        throw new HttpError(403, 'USER_TURN_NOT_CALLER', `a user's turn can only be given by that user principal (or the admin); this token is ${caller.kind} ${JSON.stringify(caller.id)}`, {
          principal: caller.id,
          kind: caller.kind,
        });
      }
      userTurn = { principal: caller.id, text: body.userTurn.text };
    }
  }
  return { ...body, tenant, userTurn, requester: requesterOf(identity) };
}

/**
 * {@link gateInput}, charged to an external principal's decision budget, with its `dependsOn` limited
 * to records it wrote (an external principal reads nothing: naming another's record would make the
 * decision's value tracing an oracle for that record's words).
 * @throws HttpError `RATE_LIMITED` (429), `FORBIDDEN` (403), and those of {@link gateInput}.
 */
async function checkedGateInput(identity: Identity, body: z.output<typeof requests.DecisionCreate>, services: Services) {
  const input = gateInput(identity, body);
  const caller = identity.kind === 'principal' ? identity.principal : null;
  services.decisionBudget.admit(input.tenant, caller);
  await assertCitesOwn(services.mem, input.tenant, caller, body.dependsOn, 'dependsOn');
  return input;
}

const GATE_DESCRIPTION =
  "Dependencies: `dependsOn`, every session record that supplies an argument value, and (unless `context: declared`) every record read in the session. `userTurn` is the user's current turn: only that user principal (it defaults to the caller) or the admin may give it (USER_TURN_NOT_CALLER, 403). The token's principal is the decision's `requester`: the session must be its own (SESSION_FORBIDDEN, 403), and only a confirmation that admits it is used (never by an external principal). An external principal reads nothing, so its `dependsOn` may name only records it wrote (FORBIDDEN, 403, for any other id, existing or not).";

const DECISIONS_SEEN =
  "An agent, tool or external principal's token sees only the decisions it requested (`requester`); another principal's decision answers like a missing one (DECISION_NOT_FOUND, 404). The admin, user and system tokens see every decision.";

/** Corroborations, confirmations and the action gate (decisions, replay). */
export const gateRoutes: readonly AnyRoute[] = [
  route({
    method: 'POST',
    path: '/v1/corroborations',
    operationId: 'corroborate',
    tag: 'gate',
    summary: "Record that the token's principal corroborates a record with evidence; the result says whether it counts",
    description:
      "Counts only when docs/design.md § Corroboration holds (independent principal and domain, ≥ trusted_tool_verified, outside the lineage, evidence not derived from the record). Evidence `memory:<id>` must name a record of the same tenant; a tool principal may cite only records it wrote (FORBIDDEN, 403: another's trusted record says nothing of what the tool vouches for), and attach at most 8 corroborations to one record (FORBIDDEN, 403: every read of the record returns them all). A tool or external principal's corroboration (stored, or refused and logged) counts as one record of its write budget, its evidence as its bytes (429 RATE_LIMITED past it).",
    auth: 'principal',
    body: requests.CorroborationCreate,
    responses: { 201: 'CorroborateResult' },
    errors: [404, 409, 429],
    handler: async ({ identity, body, services }) => {
      const principal = writerFor(identity, body.principal);
      const tenant = tenantFor(identity, body.tenant);
      await assertEvidenceOwn(services.mem, tenant, principal, body.evidence);
      await assertCorroborationRoom(services.mem, tenant, principal, body.recordId);
      services.writeBudget.admit(tenant, principal, body.evidence);
      return created(await services.mem.corroborate({ ...body, tenant, principal: principal.id }));
    },
  }),
  route({
    method: 'POST',
    path: '/v1/confirmations',
    operationId: 'confirm',
    tag: 'gate',
    summary: 'A human confirmation scoped to one exact action (user principals only): single-use by default, expiring',
    description:
      "Only a user principal's token can confirm (CONFIRMATION_REQUIRES_USER, 403, logged; a tool or external principal's attempt counts as one record of its write budget, the action as its bytes: 429 RATE_LIMITED past it). `memoryIds`, when given, must name records of the same tenant. `usableBy` names the principals whose requests may use it (never an external or tool one: CONFIRMATION_USABLE_BY_EXTERNAL / CONFIRMATION_USABLE_BY_TOOL, 403); without it, user, system and agent principals and the admin token may (never tool or external principals).",
    auth: 'principal',
    body: requests.ConfirmationCreate,
    responses: { 201: 'Confirmation' },
    errors: [404, 429],
    handler: async ({ identity, body, services }) => {
      const principal = writerFor(identity, body.principal);
      const tenant = tenantFor(identity, body.tenant);
      // a refused attempt is audited: from a tool or external token it costs what a write costs
      services.writeBudget.admitAttempt(tenant, principal, Buffer.byteLength(JSON.stringify(body.action ?? null), 'utf8'));
      return created(await services.mem.confirm({ ...body, tenant, principal: principal.id }));
    },
  }),
  route({
    method: 'POST',
    path: '/v1/decisions',
    operationId: 'authorize',
    tag: 'gate',
    summary: 'The action gate: decide, record and audit one proposed action; returns the structured decision (consumes the confirmation it is allowed by)',
    description: `${GATE_DESCRIPTION} A denial is a 201 with \`outcome: deny\`, not an error. An external principal may request \`externalDecisionsPerMinute\` decisions per minute (default 30, HTTP and MCP together); past it RATE_LIMITED (429) with \`Retry-After\`.`,
    auth: 'any',
    body: requests.DecisionCreate,
    responses: { 201: 'Decision' },
    errors: [404, 429],
    handler: async ({ identity, body, services }) => {
      // a decision stores bytes: refused while earlier ones have spent the byte budget
      const principal = identity.kind === 'principal' ? identity.principal : null;
      services.writeBudget.admitStoring(tenantFor(identity, body.tenant), principal);
      const input = await checkedGateInput(identity, body, services);
      // stored twice (the row and its audit entry): a tool or external principal pays its bytes before they are written
      const d = await services.mem.authorize(input, { beforeRecord: (bytes) => services.writeBudget.storing(input.tenant, principal, bytes) });
      return created(await decisionAs(services.mem, callerOf(identity), d));
    },
  }),
  route({
    method: 'POST',
    path: '/v1/decisions/evaluate',
    operationId: 'evaluateAction',
    tag: 'gate',
    summary: 'Dry run of the action gate: the decision it would make now, with nothing recorded (no decision, no audit entry, no confirmation consumed, no read marked)',
    description: `${GATE_DESCRIPTION} \`confirmationId\` names the confirmation a POST /v1/decisions would use now; it is not consumed. A dry run costs an external principal as much as a decision: it counts against the same \`externalDecisionsPerMinute\` (RATE_LIMITED, 429, with \`Retry-After\`).`,
    auth: 'any',
    body: requests.DecisionCreate,
    responses: { 200: 'Evaluation' },
    errors: [404, 429],
    handler: async ({ identity, body, services }) => {
      const input = await checkedGateInput(identity, body, services);
      return ok(await decisionAs(services.mem, callerOf(identity), await services.mem.evaluate(input)));
    },
  }),
  route({
    method: 'GET',
    path: '/v1/decisions',
    operationId: 'listDecisions',
    tag: 'gate',
    summary: 'Recent decisions, newest first',
    description: `${DECISIONS_SEEN} The list is of the newest \`limit\` decisions the caller may see: an agent, tool or external token's own, a person's every one. A page reads up to 8 Mi characters of decisions: for a tool or external token it runs in the tenant's expensive-request slots of its side (one at a time, TOO_MANY_REQUESTS (429) past \`maxExpensivePerTenant\`), like replay and verification.`,
    auth: 'any',
    query: queries.ListDecisions,
    responses: { 200: 'DecisionList' },
    handler: async ({ identity, query, services }) => {
      const agent = agentOf(identity);
      const tenant = tenantFor(identity, query.tenant);
      const principal = identity.kind === 'principal' ? identity.principal : null;
      // a page reads the tenant's decisions, not only the caller's: a channel's requests queue behind each other
      const list = () => services.mem.listDecisions({ tenant, limit: query.limit, ...(agent !== null ? { requester: agent } : {}) });
      const decisions = sideOf(principal) === 'external' ? await services.expensive.run(tenant, 'listDecisions', list) : await list();
      const shown = await Promise.all(decisions.filter((d) => decisionVisible(agent, d)).map((d) => decisionAs(services.mem, callerOf(identity), d)));
      return ok({ decisions: shown, ...(await tenantHint(identity, services, tenant, decisions.length === 0)) });
    },
  }),
  route({
    method: 'GET',
    path: '/v1/decisions/:id',
    operationId: 'getDecision',
    tag: 'gate',
    summary: 'One stored decision',
    description: DECISIONS_SEEN,
    auth: 'any',
    params: params.Id,
    query: queries.Tenant,
    responses: { 200: 'Decision' },
    errors: [404],
    handler: async ({ identity, params: p, query, services }) => {
      const tenant = tenantFor(identity, query.tenant);
      return ok(await decisionAs(services.mem, callerOf(identity), assertDecisionVisible(agentOf(identity), tenant, await services.mem.getDecision({ tenant, decisionId: p.id }))));
    },
  }),
  route({
    method: 'GET',
    path: '/v1/decisions/:id/replay',
    operationId: 'replayDecision',
    tag: 'audit',
    summary: 'Rebuild a decision from the audit log alone and re-evaluate it (`matches`)',
    description: `${DECISIONS_SEEN} For a principal token, corroboration evidence is withheld as in GET /v1/memories/{id} (of the dependency it corroborates) and an origin\'s sourceRef below the corroboration floor is null. The admin token gets the whole replay, evidence still flagged.`,
    auth: 'any',
    params: params.Id,
    query: queries.Tenant,
    responses: { 200: 'ReplayResult' },
    errors: [404, 429],
    handler: async ({ identity, params: p, query, services }) => {
      const tenant = tenantFor(identity, query.tenant);
      assertDecisionVisible(agentOf(identity), tenant, await services.mem.getDecision({ tenant, decisionId: p.id }));
      const r = await services.expensive.run(tenant, 'replayDecision', () => services.mem.replay({ tenant, decisionId: p.id }));
      return ok(replayFor(identity, services.mem, await replayAs(services.mem, tenant, callerOf(identity), r)));
    },
  }),
];
