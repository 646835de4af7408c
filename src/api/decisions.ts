/**
 * Stored decisions of the action gate as the facade returns them (docs/design.md § Audit log): one
 * decision, a tenant's recent ones, or a page of the review queue — only rows that match the
 * `decide` audit entry that recorded them (a row forged outside the API is no decision of the
 * gate). Imports from src/core, src/store's port, and api/ modules below the facade.
 */
import { MemauthError } from '../core/errors.js';
import { decisionMatchesEntry } from '../core/row-match.js';
import { TIERS, type Decision } from '../core/types.js';
import type { QueuedDecisionsQuery, RequesterSide, StorageDriver, StorageReader } from '../store/driver.js';
import type { OpContext } from './context.js';
import { parseInput, schemas } from './validation.js';
import { yielder } from './yielder.js';

/** {@link Memory.getDecision}. @throws `DECISION_NOT_FOUND` */
export async function getDecision(ctx: Pick<OpContext, 'driver'>, input: { tenant: string; decisionId: string }): Promise<Decision> {
  const a = parseInput(schemas.replay, input, 'getDecision');
  const d = await ctx.driver.getDecision(a.tenant, a.decisionId);
  if (!d || (await verifiedDecisions(ctx.driver, a.tenant, [d])).length === 0)
    throw new MemauthError('DECISION_NOT_FOUND', `no decision ${JSON.stringify(a.decisionId)} in tenant ${JSON.stringify(a.tenant)}`, { id: a.decisionId });
  return d;
}

/** At most about this many characters of decision JSON make one page of {@link listDecisions} (8 Mi). */
export const DECISION_PAGE_CHARS = 8 * 1024 * 1024;
/** At most about this many characters of decision JSON are read for the metrics (32 Mi). */
export const METRICS_DECISION_CHARS = 32 * 1024 * 1024;
/** Decisions read per query while a page is filled. */
const CHUNK = 25;

/**
 * {@link Memory.listDecisions}: recent verified decisions, newest first — up to `limit`, but no
 * more once their JSON holds `maxChars` characters (the first is always returned): a page never
 * makes the process read and parse much more than that, however large the stored decisions are.
 */
export async function listDecisions(ctx: Pick<OpContext, 'driver'>, input: { tenant: string; limit?: number; requester?: string }, maxChars = DECISION_PAGE_CHARS): Promise<Decision[]> {
  const a = parseInput(schemas.listDecisions, input, 'listDecisions');
  const keep = a.requester === undefined ? undefined : (d: Decision): boolean => d.requester === a.requester;
  return verifiedDecisions(ctx.driver, a.tenant, await recentDecisions(ctx.driver, a.tenant, a.limit ?? 100, maxChars, keep));
}

/**
 * The tenant's newest decisions as stored (not verified), newest first: up to `limit`, and no
 * more once their JSON holds `maxChars` characters (the first is always returned), read
 * {@link CHUNK} at a time (keyset paging on `at`, `id`) with a pause for other requests between reads.
 * @param driver - where the decisions are read.
 * @param tenant - the tenant.
 * @param limit - at most this many decisions.
 * @param maxChars - stop once the decisions read hold this many characters of JSON (kept or not).
 * @param keep - which decisions the page holds (default: every one); `limit` counts those kept.
 * @returns the decisions, newest first.
 */
export async function recentDecisions(driver: StorageReader, tenant: string, limit: number, maxChars: number, keep?: (d: Decision) => boolean): Promise<Decision[]> {
  const page: Decision[] = [];
  const pause = yielder();
  let chars = 0;
  let after: { at: string; id: string } | undefined;
  while (page.length < limit && chars < maxChars) {
    await pause();
    const asked = keep === undefined ? Math.min(CHUNK, limit - page.length) : CHUNK;
    // keyset paging: a decision recorded meanwhile neither repeats one nor skips one already read
    const chunk = await driver.listDecisions(tenant, asked, after);
    const last = chunk[chunk.length - 1];
    if (last !== undefined) after = { at: last.at, id: last.id };
    for (const d of chunk) {
      if ((page.length > 0 && chars >= maxChars) || page.length >= limit) break;
      chars += JSON.stringify(d).length;
      if (keep === undefined || keep(d)) page.push(d);
    }
    if (chunk.length < asked) break;
  }
  return page;
}

/** The decisions whose row matches the `decide` audit entry that recorded it. */
async function verifiedDecisions(driver: StorageDriver, tenant: string, ds: readonly Decision[]): Promise<Decision[]> {
  const out: Decision[] = [];
  // one check per decision, yielding between them: a long page must not hold every other request
  const pause = yielder();
  for (const d of ds) {
    await pause();
    if (!Number.isSafeInteger(d.auditSeq)) continue;
    const [e] = await driver.auditRange(tenant, d.auditSeq, d.auditSeq);
    if (e !== undefined && decisionMatchesEntry(d, e)) out.push(d);
  }
  return out;
}

/** One lane of the review queue: who asked (side), the risk tier, and the outcome. */
export type ReviewLane = Pick<QueuedDecisionsQuery, 'requesters' | 'tier' | 'outcome'>;

/**
 * The queue's lanes in the order a person reviews them: requests of the application, agents and
 * people before those of external principals and tool channels (whose flood must not bury them), then
 * the highest tier first, then blocked (deny) before observe mode's would_deny.
 */
export const REVIEW_LANES: readonly ReviewLane[] = (['internal', 'external'] as const).flatMap((requesters) =>
  [...TIERS].reverse().flatMap((tier) => (['deny', 'would_deny'] as const).map((outcome) => ({ requesters, tier, outcome }))),
);

/** Where a queue page resumes: a lane of {@link REVIEW_LANES} and the last decision read in it. */
interface QueueCursor {
  readonly lane: number;
  readonly before: QueuedDecisionsQuery['before'];
}

const encodeCursor = (c: QueueCursor): string => Buffer.from(JSON.stringify([c.lane, c.before?.at ?? null, c.before?.id ?? null])).toString('base64url');

/** @throws `INVALID_ARGUMENT` when `text` is not a cursor this module issued. */
function decodeCursor(text: string): QueueCursor {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    v = null;
  }
  if (Array.isArray(v) && v.length === 3 && Number.isInteger(v[0]) && v[0] >= 0 && v[0] < REVIEW_LANES.length) {
    const [lane, at, id] = v as [number, unknown, unknown];
    if (at === null && id === null) return { lane, before: null };
    if (typeof at === 'string' && typeof id === 'string') return { lane, before: { at, id } };
  }
  throw new MemauthError('INVALID_ARGUMENT', 'review queue: cursor is not one a previous page returned (pass its nextCursor unchanged)', { field: 'cursor' });
}

/** A page of the review queue and where the next one starts (null: the queue ends here). */
export interface ReviewQueuePage {
  readonly decisions: readonly { readonly lane: ReviewLane; readonly decision: Decision }[];
  readonly nextCursor: string | null;
}

/**
 * A page of the review queue: at most `limit` deny and would_deny decisions in the order of
 * {@link REVIEW_LANES}, newest first within a lane, each verified against its audit entry (a
 * forged row is skipped). Lanes are read by keyset from the store, so a flood of other
 * decisions — allowed ones, or an external principal's — costs a page nothing and hides nothing.
 *
 * @param input.requesters only this side's lanes (default: both, internal first).
 * @param input.cursor the `nextCursor` of the previous page (default: the start).
 * @throws `INVALID_ARGUMENT` for a cursor this function did not issue.
 */
export async function reviewQueuePage(
  ctx: Pick<OpContext, 'driver'>,
  input: { tenant: string; limit: number; requesters?: RequesterSide | undefined; cursor?: string | undefined },
): Promise<ReviewQueuePage> {
  const lanes = REVIEW_LANES.map((lane, i) => ({ lane, i })).filter((l) => input.requesters === undefined || l.lane.requesters === input.requesters);
  let pos: QueueCursor = input.cursor === undefined ? { lane: lanes[0]?.i ?? REVIEW_LANES.length, before: null } : decodeCursor(input.cursor);
  const out: { lane: ReviewLane; decision: Decision }[] = [];
  const next = (after: number): number => lanes.find((l) => l.i > after)?.i ?? REVIEW_LANES.length;
  if (!lanes.some((l) => l.i === pos.lane)) pos = { lane: next(pos.lane), before: null };
  while (pos.lane < REVIEW_LANES.length && out.length < input.limit) {
    const lane = REVIEW_LANES[pos.lane] as ReviewLane;
    const want = input.limit - out.length;
    const page = await ctx.driver.listQueuedDecisions(input.tenant, { ...lane, before: pos.before, limit: want });
    for (const decision of await verifiedDecisions(ctx.driver, input.tenant, page)) out.push({ lane, decision });
    const last = page[page.length - 1];
    pos = page.length < want || last === undefined ? { lane: next(pos.lane), before: null } : { lane: pos.lane, before: { at: last.at, id: last.id } };
  }
  return { decisions: out, nextCursor: pos.lane < REVIEW_LANES.length ? encodeCursor(pos) : null };
}
