// The review queue page: the lanes of GET /v1/review (requests of the application, agents and
// and people before those of external principals and tools; high tier first; blocked before would_deny),
// paged by cursor, with a count per lane; identical denials shown once. Cards: review-card.js.
import { api, session } from './api.js';
import { errorBox, page } from './layout.js';
import { reviewCard } from './review-card.js';
import { announce, h, table } from './ui.js';

/** Items fetched per page of the queue. */
const QUEUE_PAGE = 50;

const SIDE_TITLE = {
  internal: 'Requested by the application, agents and people',
  external: 'Requested by external principals and tools (never approvable)',
};

export async function reviewPage() {
  const out = h('div', { 'aria-live': 'polite' }, h('p', 'Loading…'));
  page(
    'Review queue',
    h('p.lead', 'Actions the gate blocked, which a person can let through once with a scoped confirmation, and observe-mode decisions that would have been denied. Requests of your own agents come first; an external principal’s requests are listed apart, so a flood of them never hides one of yours.'),
    out,
  );
  await drawReview(out);
}

/**
 * The key under which identical denials are shown once: same requester, action type, resource,
 * arguments, outcome, reasons (codes and the records each names), the records the decision rested
 * on, and status — a denial on another resource or other records is never hidden under a card.
 */
const sameDenial = (it) => {
  const d = it.decision;
  const reasons = d.reasons.map((r) => JSON.stringify([r.code, r.argument ?? null, [...r.memoryIds].sort()])).sort();
  return JSON.stringify([it.requester.id, d.action.type, d.action.resource ?? null, d.argsHash, d.outcome, reasons, d.dependencies.map((x) => x.memoryId).sort(), it.status]);
};

/** Group items (newest first within the queue's order) into [{head, rest}] by {@link sameDenial}. */
function groupIdentical(items) {
  const groups = new Map();
  for (const it of items) {
    const k = sameDenial(it);
    const g = groups.get(k);
    if (g) g.rest.push(it);
    else groups.set(k, { head: it, rest: [] });
  }
  return [...groups.values()];
}

const CLASS_RANK = { real_risk: 0, missing_corroboration: 1, missing_metadata: 2 };

/** Within one tier and outcome (the queue's order), real risk before the rest; otherwise the order kept. */
function byClass(groups) {
  const lane = (g) => `${g.head.decision.tier}|${g.head.kind}`;
  const firstSeen = new Map();
  groups.forEach((g, i) => firstSeen.has(lane(g)) || firstSeen.set(lane(g), i));
  return groups
    .map((g, i) => ({ g, i }))
    .sort((a, b) => firstSeen.get(lane(a.g)) - firstSeen.get(lane(b.g)) || CLASS_RANK[a.g.head.reviewClass] - CLASS_RANK[b.g.head.reviewClass] || a.i - b.i)
    .map((x) => x.g);
}

async function drawReview(out) {
  const items = [];
  let state;
  const load = async (cursor) => {
    state = await api.review(cursor ? { cursor, limit: QUEUE_PAGE } : { limit: QUEUE_PAGE });
    items.push(...state.items);
  };
  try {
    await load(null);
  } catch (e) {
    out.replaceChildren(errorBox(e));
    return;
  }
  const w = session.who;
  const canConfirm = !w.admin && w.principal.kind === 'user';
  const why = w.admin ? 'The admin token cannot confirm actions: sign in as a user to approve.' : `This token is ${w.principal.kind} "${w.principal.id}": only a user principal can confirm — sign in as a user to approve.`;
  const records = new Map();
  const render = () => {
    const total = state.lanes.reduce((n, l) => n + l.count, 0);
    const laneRows = state.lanes.filter((l) => l.count > 0).map((l) => h('tr', h('th', { scope: 'row' }, l.requesters === 'internal' ? 'own (application, agents, people)' : 'external'), h('td', l.tier), h('td', l.kind === 'blocked' ? 'blocked' : 'would deny (observe)'), h('td', String(l.count))));
    const more = h('button', { type: 'button', id: 'queue-more', on: { click: async () => {
      more.disabled = true;
      more.textContent = 'Loading…';
      try {
        await load(state.nextCursor);
        render();
      } catch (e) {
        out.append(errorBox(e));
      }
    } } }, `Load ${QUEUE_PAGE} more`);
    const sides = ['internal', 'external'].map((side) => {
      const mine = items.filter((i) => i.requesterSide === side);
      const groups = byClass(groupIdentical(mine));
      return h(
        `section.side.side-${side}`,
        { 'aria-labelledby': `h-side-${side}` },
        h('h2', { id: `h-side-${side}` }, `${SIDE_TITLE[side]} (${mine.length} shown of ${state.lanes.filter((l) => l.requesters === side).reduce((n, l) => n + l.count, 0)})`),
        groups.length ? h('ul.cards', groups.map((g) => reviewCard(g, { canConfirm, why, records, refresh: () => drawReview(out) }))) : h('p.muted.empty', side === 'internal' ? 'Nothing here: no request of your application or agents has been denied.' : 'No external principal’s request has been denied.'),
      );
    });
    out.replaceChildren(
      ...(canConfirm ? [] : [h('p.msg.msg-warn', { role: 'note' }, why)]),
      total === 0
        ? h('p.msg.msg-info.empty', 'The queue is empty: no decision has been denied (or would have been, in observe mode) yet.')
        : table('The queue by lane, in review order', ['Requested by', 'Tier', 'Outcome', 'Decisions'], laneRows, { className: 'lanes' }),
      ...(total === 0 ? [] : sides),
      state.nextCursor ? h('p.pager', more, ' ', h('span.muted', `${items.length} of ${total} loaded`)) : null,
    );
    announce(`${items.length} queued decisions shown`);
  };
  render();
}
