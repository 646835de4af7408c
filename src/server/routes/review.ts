/**
 * HTTP routes of the dashboard's review queue (blocked and would_deny decisions, their classes,
 * approval by scoped confirmation, rejections) and the metrics over time.
 */
import { randomBytes } from 'node:crypto';
import { REVIEW_LANES, reviewQueuePage } from '../../api/decisions.js';
import { computeMetricsSeries } from '../../api/metrics-series.js';
import type { Memory } from '../../api/memory.js';
import { DEFAULT_USABLE_KINDS, confirmationMismatch } from '../../core/confirmation.js';
import type { Decision, PrincipalKind, ReasonCode } from '../../core/types.js';
import type { RequesterSide, ReviewNoteRow } from '../../store/driver.js';
import { HttpError } from '../errors.js';
import { assertNotExternal, assertReadsEverything } from '../exposure.js';
import { params, queries, requests } from '../schemas.js';
import { type AnyRoute, created, ok, route, tenantFor } from './common.js';

/**
 * The review classes of blocked and would_deny decisions. `missing_corroboration` stays in the type
 * (and the API's enum) but {@link reviewClassOf} never gives it: a record short of corroboration
 * is real risk until corroboration lifts it.
 */
export type ReviewClass = 'real_risk' | 'missing_corroboration' | 'missing_metadata';

/**
 * Reasons that make a decision real risk: a deleted or expired source, or a dependency or argument
 * value below the action's required authority and not lifted. `missing_corroboration` names such a
 * record too: at least one corroboration counts, fewer than k. A partial vote is easy to get (one
 * tool token, evidence any trusted record, docs/design.md § Corroboration), so it never lowers the class.
 */
const REAL_RISK_CODES: ReadonlySet<ReasonCode> = new Set(['deleted_source', 'expired', 'untrusted_origin', 'missing_corroboration']);

/**
 * The review class of a queued decision, from the reasons the decision recorded (never from
 * corroborations recorded since, nor from how many votes a record has).
 *
 * @param d - the decision (its `reasons`).
 * @returns `real_risk` when a reason is deleted_source, expired, untrusted_origin (context or
 *   argument value) or missing_corroboration, or when nothing else classifies it (conflict, a
 *   bare needs_confirmation) or an argument value no record supplies (metadata_missing, detail
 *   value_unsourced); else `missing_metadata` when a reason is metadata_missing. Never
 *   `missing_corroboration`.
 *
 * Source: docs/design.md § Rules, § Corroboration, § Reasons.
 */
export function reviewClassOf(d: Pick<Decision, 'reasons'>): ReviewClass {
  if (d.reasons.some((r) => REAL_RISK_CODES.has(r.code))) return 'real_risk';
  // a value no record holds reached the agent from outside the store: an injected payee looks like this
  if (d.reasons.some((r) => r.code === 'metadata_missing' && r.detail === 'value_unsourced')) return 'real_risk';
  if (d.reasons.some((r) => r.code === 'metadata_missing')) return 'missing_metadata';
  return 'real_risk';
}

/** Who requested a decision, as the review queue shows it: a principal (kind null when not registered) or id null for the application / admin token. */
export interface RequesterView {
  readonly id: string | null;
  readonly kind: PrincipalKind | null;
}

async function requesterView(mem: Memory, tenant: string, d: Pick<Decision, 'requester'>): Promise<RequesterView> {
  const id = d.requester ?? null;
  if (id === null) return { id: null, kind: null };
  return { id, kind: (await mem.driver.getPrincipal(tenant, id))?.kind ?? null };
}

/**
 * A denial a user can lift with a scoped confirmation: only soft reasons (needs_confirmation is
 * added only then), requested by the application or a registered user, system or agent principal
 * (core/confirmation.ts `DEFAULT_USABLE_KINDS`: a confirmation is never usable by an external
 * principal or a tool channel, so approving their request would only hand it to someone else).
 */
export const approvable = (d: Pick<Decision, 'outcome' | 'reasons'>, requester: RequesterView = { id: null, kind: null }): boolean =>
  d.outcome === 'deny' && d.reasons.some((r) => r.code === 'needs_confirmation') && (requester.id === null || (requester.kind !== null && DEFAULT_USABLE_KINDS.has(requester.kind)));

/** The memory a confirmation approving `d` is bound to: the untrusted records its denial named. */
const approvedMemoryIds = (d: Pick<Decision, 'reasons'>): string[] => [...new Set(d.reasons.filter((r) => r.code === 'needs_confirmation').flatMap((r) => r.memoryIds))].sort();

const kindOf = (outcome: Decision['outcome']): 'blocked' | 'would_deny' => (outcome === 'deny' ? 'blocked' : 'would_deny');

/**
 * The confirmations issued after `d` for exactly its action (type, resource, arguments, the
 * records it rested on, its requester), each with whether the gate would accept it now: asked of
 * the gate's own {@link confirmationMismatch}, so "approved" never means a confirmation the gate
 * refuses (one for another resource or other records). Only a deny has confirmations listed.
 */
async function confirmationsFor(mem: Memory, tenant: string, d: Decision, requester: RequesterView) {
  if (d.outcome !== 'deny') return [];
  const asker = requester.id === null ? null : { id: requester.id, kind: requester.kind ?? ('external' as const) };
  const all = (await mem.driver.listConfirmations(tenant, d.action.type, d.argsHash, '0000')).filter((c) => c.createdAt >= d.at);
  const uses = await mem.driver.confirmationUses(
    tenant,
    all.map((c) => c.id),
  );
  const now = new Date().toISOString();
  const dependencyIds = d.dependencies.map((x) => x.memoryId);
  return all
    .map((c) => ({ c, uses: uses.get(c.id) ?? 0 }))
    .map(({ c, uses: n }) => ({
      c,
      n,
      m: confirmationMismatch({ confirmation: c, usesSoFar: n, action: d.action, argsHash: d.argsHash, untrustedMemoryIds: approvedMemoryIds(d), dependencyIds, requester: asker, now }),
    }))
    .filter(({ m }) => m === null || m === 'confirmation_expired' || m === 'confirmation_used_up')
    .map(({ c, n, m }) => ({
      usable: m === null,
      view: { id: c.id, principalId: c.principalId, createdAt: c.createdAt, expiresAt: c.expiresAt, maxUses: c.maxUses, uses: n, usableBy: c.usableBy ?? null },
    }));
}

/** One item of the queue: the decision, who asked, its class, whether it can be approved, and its status (approved: a confirmation the gate would accept for exactly this decision exists; rejected; open). */
async function queueItem(mem: Memory, tenant: string, d: Decision, requesterSide: RequesterSide, rejection: ReviewNoteRow | null) {
  const requester = await requesterView(mem, tenant, d);
  const found = await confirmationsFor(mem, tenant, d, requester);
  const confirmations = found.map((f) => f.view);
  return {
    decision: d,
    requester,
    requesterSide,
    kind: kindOf(d.outcome),
    reviewClass: reviewClassOf(d),
    approvable: approvable(d, requester),
    status: rejection ? ('rejected' as const) : found.some((f) => f.usable) ? ('approved' as const) : ('open' as const),
    confirmations,
    rejection,
  };
}

/** The dashboard's review queue, its rejections, and the metrics over time. */
export const reviewRoutes: readonly AnyRoute[] = [
  route({
    method: 'GET',
    path: '/v1/review',
    operationId: 'reviewQueue',
    tag: 'review',
    summary: 'The review queue, in lanes: denied (deny) and observe-mode would_deny decisions, paged by cursor, with their review class and status',
    description:
      "Lanes, in order: decisions requested by the application, agents and people (`requesterSide: internal`) before those of external, tool or unregistered principals (`external`), so a flood of external or tool requests never hides an agent's; within a side the high tier first, then low, then read_only; within a tier blocked before would_deny; newest first within a lane. `lanes` counts every lane; `nextCursor` (null at the end) continues the list. Each item names its `requester` (the principal whose token asked; id null: the application or the admin token). status: `approved` when a scoped confirmation issued after the decision exists that the gate would accept for exactly this decision now (same action type, resource and arguments, bound to the records the decision rested on, usable by its requester, unexpired, with uses left; `confirmations` also lists the used-up and expired ones); `rejected` when someone recorded a rejection (POST /v1/review/{id}/reject); `open` otherwise. Approving is POST /v1/review/{id}/approve with a user token. For the admin, user and system principals (people): agent, tool and external principals get FORBIDDEN (403).",
    auth: 'any',
    query: queries.ReviewQueue,
    responses: { 200: 'ReviewQueue' },
    handler: async ({ identity, query, services }) => {
      const tenant = tenantFor(identity, query.tenant);
      assertReadsEverything(identity, 'the review queue');
      const driver = services.mem.driver;
      const page = await reviewQueuePage(services.mem, { tenant, limit: query.limit ?? 100, requesters: query.requesters, cursor: query.cursor });
      const notes = new Map<string, ReviewNoteRow>();
      for (const n of await driver.listReviewNotes(tenant)) if (!notes.has(n.decisionId)) notes.set(n.decisionId, n);
      const items = [];
      for (const { lane, decision } of page.decisions) items.push(await queueItem(services.mem, tenant, decision, lane.requesters, notes.get(decision.id) ?? null));
      const counts = await driver.countQueuedDecisions(tenant);
      const lanes = REVIEW_LANES.map((l) => ({
        requesters: l.requesters,
        tier: l.tier,
        kind: kindOf(l.outcome),
        count: counts.find((c) => c.requesters === l.requesters && c.tier === l.tier && c.outcome === l.outcome)?.count ?? 0,
      }));
      return ok({ lanes, items, nextCursor: page.nextCursor });
    },
  }),
  route({
    method: 'POST',
    path: '/v1/review/:id/approve',
    operationId: 'approveReview',
    tag: 'review',
    summary: "Approve a blocked decision once: a user's scoped confirmation for exactly its action, bound to its requester and to the records its denial named",
    description:
      "Only a user principal's token (CONFIRMATION_REQUIRES_USER, 403). The confirmation binds the action type, resource and exact arguments, `memoryIds` = the untrusted records the denial named (a later session that read anything else untrusted cannot use it), `usableBy` = the decision's requester (the admin token / application: `[]`), single use, expiring. A decision that is not approvable — allowed, a hard denial, or requested by an external, tool or unregistered principal (none may use a confirmation) — is NOT_APPROVABLE (409).",
    auth: 'principal',
    params: params.Id,
    body: requests.ReviewApprove,
    responses: { 201: 'Confirmation' },
    errors: [404, 409, 429],
    handler: async ({ identity, params: p, body, services }) => {
      const tenant = tenantFor(identity, body.tenant);
      // verified against its audit entry (a forged row is not found)
      const d = await services.mem.getDecision({ tenant, decisionId: p.id });
      // a refused approval is audited: from a tool or external token it costs what a write costs
      if (identity.kind === 'principal') services.writeBudget.admitAttempt(tenant, identity.principal, Buffer.byteLength(JSON.stringify(d.action), 'utf8'));
      const requester = await requesterView(services.mem, tenant, d);
      if (!approvable(d, requester)) {
        const why =
          d.outcome !== 'deny'
            ? `its outcome is ${d.outcome}`
            : !d.reasons.some((r) => r.code === 'needs_confirmation')
              ? 'a confirmation cannot lift its reasons'
              : `it was requested by ${requester.kind ?? 'an unregistered'} principal ${JSON.stringify(requester.id)}, which may never use a confirmation`;
        throw new HttpError(409, 'NOT_APPROVABLE', `decision ${d.id} cannot be approved: ${why}`, { id: d.id, requester: requester.id, requesterKind: requester.kind });
      }
      const { type, args, resource } = d.action;
      return created(
        await services.mem.confirm({
          tenant,
          principal: identity.kind === 'principal' ? identity.principal.id : '',
          action: { type, args: { ...args }, ...(resource !== undefined ? { resource } : {}) },
          memoryIds: approvedMemoryIds(d),
          usableBy: requester.id === null ? [] : [requester.id],
          maxUses: 1,
          ...(body.expiresInSeconds !== undefined ? { expiresInSeconds: body.expiresInSeconds } : {}),
        }),
      );
    },
  }),
  route({
    method: 'POST',
    path: '/v1/review/:id/reject',
    operationId: 'rejectReview',
    tag: 'review',
    summary: 'Reject a decision of the review queue: an append-only review note (who, when, why); it issues nothing and changes no decision',
    description:
      "The admin, user and system principals may reject (FORBIDDEN, 403, for agent, tool and external principals: a rejection is a person's call). The note is stored as given and listed with the queue item; rejecting twice is REVIEW_ALREADY_REJECTED (409).",
    auth: 'any',
    params: params.Id,
    body: requests.ReviewReject,
    responses: { 201: 'ReviewNote' },
    errors: [404, 409],
    handler: async ({ identity, params: p, body, services }) => {
      const tenant = tenantFor(identity, body.tenant);
      if (identity.kind === 'principal' && identity.principal.kind !== 'user' && identity.principal.kind !== 'system') {
        const kind = identity.principal.kind;
        throw new HttpError(403, 'FORBIDDEN', `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} principal cannot reject a queued decision; only the admin, a user or a system principal can`, { kind });
      }
      // verified against its audit entry (a forged row is not found)
      const d = await services.mem.getDecision({ tenant, decisionId: p.id });
      if (d.outcome === 'allow') throw new HttpError(409, 'NOT_IN_REVIEW', 'an allowed decision is not in the review queue', { id: p.id });
      if ((await services.mem.driver.listReviewNotes(tenant)).some((n) => n.decisionId === d.id))
        throw new HttpError(409, 'REVIEW_ALREADY_REJECTED', `decision ${p.id} was already rejected`, { id: p.id });
      const note: ReviewNoteRow = {
        id: `rev_${randomBytes(12).toString('hex')}`,
        tenant,
        decisionId: d.id,
        verdict: 'rejected',
        by: identity.kind === 'principal' ? identity.principal.id : '(admin)',
        note: body.note ?? '',
        at: new Date().toISOString(),
      };
      await services.mem.driver.insertReviewNote(note);
      return created(note);
    },
  }),
  route({
    method: 'GET',
    path: '/v1/metrics/series',
    operationId: 'metricsSeries',
    tag: 'audit',
    summary: 'The seven metrics per risk tier over time: computed for the decisions of each of `buckets` equal time windows (see src/api/metrics.ts)',
    auth: 'any',
    query: queries.MetricsSeries,
    responses: { 200: 'MetricsSeries' },
    errors: [429],
    handler: async ({ identity, query, services }) => {
      assertNotExternal(identity, 'the metrics');
      const tenant = tenantFor(identity, query.tenant);
      return ok(await services.expensive.run(tenant, 'metricsSeries', () => computeMetricsSeries(services.mem, { tenant, buckets: query.buckets, replaySample: query.replaySample })));
    },
  }),
];
