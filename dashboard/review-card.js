// One card of the review queue: what would happen (the action and its exact arguments), who asked,
// and for each argument the records that supplied it — an excerpt of their content, their source,
// writer and authorities, untrusted ones first and marked — then what approving binds, a second
// step for real-risk items, and rejection. Every string from the API is inserted as text (ui.js h()).
import { api } from './api.js';
import { errorBox } from './layout.js';
import { valueWarnings } from './text.js';
import { announce, authorityOf, decisionLink, fmtTime, h, isUntrusted, outcomeBadge, reasonList, recordLink, statusBadge, time, versionsTable } from './ui.js';

export /** Why a user's turn was not read as a plain request (src/core/request-grammar.ts), in words. */
const NOT_PLAIN = {
  question_or_hidden: 'it asks a question or hides characters',
  script: 'it has letters outside the Latin script',
  negation: 'it negates',
  hedge: 'it hedges, sets a condition or a time',
  numbers: 'it names more than one number',
  currency: 'it names another currency than the action',
  other_action: 'it names the object of another kind of action',
  not_imperative: 'it does not open with a request for this action',
  unknown_word: 'it uses a word no trusted record or argument grounds',
};
const CLASS_TITLE = { real_risk: 'Real risk', missing_corroboration: 'Missing corroboration', missing_metadata: 'Missing metadata' };

/** Characters of a record's content shown in the card. */
const EXCERPT = 240;

/** Who asked for a queued decision, as a person reads it. */
export function requesterText(r) {
  return r.id === null ? 'the application (admin token or library)' : `${r.kind ?? 'unregistered'} principal "${r.id}"`;
}

/** The record views of `ids`, fetched once per page (`records`: id → Promise). */
function recordsOf(records, ids) {
  return Promise.all(ids.map((id) => {
    if (!records.has(id)) records.set(id, api.memory(id).catch((e) => ({ id, error: e })));
    return records.get(id);
  }));
}

/** The record ids that supplied an argument's value: by text, by a typed claim, and those of a computed value's operands. */
const suppliers = (v) => [...new Set([...(v?.recordIds ?? []), ...(v?.claims ?? []).flatMap((c) => c.recordIds), ...(v?.computed?.operands ?? []).flatMap((o) => o.recordIds)])];

/** One record as the person checks it: untrusted mark, what it is, excerpt, source, writer, authorities. */
function recordItem(r) {
  if (r.error) return h('li.src', recordLink(r.id), ' — ', errorBox(r.error));
  const bad = isUntrusted(r.actionAuthority);
  const excerpt = r.content === null ? h('span.muted', '(content erased: the record was deleted)') : h('q.excerpt', r.content.length > EXCERPT ? `${r.content.slice(0, EXCERPT)}…` : r.content);
  return h(
    `li.src${bad ? '.src-untrusted' : ''}`,
    { 'data-record': r.id, 'data-untrusted': bad ? 'true' : 'false' },
    h('p.src-head', bad ? h('strong.untrusted-mark', '✖ Untrusted — '): null, `${r.derivedFrom.length || r.sessionContext ? 'derived record' : 'record'} written by `, h('strong', r.origin.principalId), ' from ', h('span.mono.source', r.origin.sourceRef || '(no source)'), ' · ', recordLink(r.id)),
    h('p', excerpt),
    h('p.auths', authorityOf('origin', r.origin.authority), ' ', authorityOf('taint', r.taint.lowestAuthority), ' ', authorityOf('action', r.actionAuthority)),
    vouchers(r),
    r.versions && (r.versions.conflict || !r.versions.current.includes(r.id)) ? versionsTable(r.versions, r.id) : null,
  );
}

/** A corroboration's evidence: a record it cites as a link, so a person can open it and judge whether it is about the record vouched for. */
const evidenceOf = (ref) => (ref?.startsWith('memory:') ? h('span.mono', 'memory:', recordLink(ref.slice('memory:'.length))) : h('span.mono', ref ?? '(withheld)'));

/** Who vouched for a record and with what evidence: a corroboration counts by the rules, but only a person can judge whether its evidence is about this record. */
function vouchers(r) {
  const list = r.corroborations ?? [];
  if (list.length === 0) return null;
  return h(
    'ul.vouchers',
    { 'aria-label': 'Corroborations' },
    list.map((c) => h('li', 'vouched for by ', h('strong', c.principalId), ` (${c.domain}, ${c.authority}) citing `, evidenceOf(c.evidenceRef), ' · ', h('time', { datetime: c.at }, fmtTime(c.at)))),
  );
}

/**
 * The rows of the arguments table: one per value the gate traced, under the path it traced it at
 * (`payee.account`, `image[0]`, `{resource}`) — so a nested value or the resource shows its own
 * suppliers — then each top-level argument no traced value lies under (a decision recorded
 * before values were traced: every argument, with no supplier).
 */
function valueRows(d) {
  const traced = (d.values ?? []).map((v) => ({ path: v.argument, value: v.value, v }));
  const top = (path) => path.replace(/^\{resource\}$/, '').split(/[.[]/)[0];
  const covered = new Set(traced.map((t) => top(t.path)));
  const untraced = Object.entries(d.action.args).filter(([name]) => !covered.has(name)).map(([name, value]) => ({ path: name, value, v: undefined }));
  return [...traced, ...untraced];
}

/** The arguments table: each traced value, its exact text, and the records (untrusted first) or the user's turn that supplied it. */
function argumentsBlock(d, records) {
  const rows = valueRows(d).map(({ path, value, v }) => {
    const ids = suppliers(v);
    // a turn that only names a value (in a question, beside a negation) did not ask for it
    const turn = v?.userTurn ? (v.userTurnAsserted === false ? 'the user’s turn names it, but does not ask for it (a question, a negation, or no plain request)' : 'the user’s own turn') : null;
    const list = h('ul.sources', ids.length ? h('li.muted', 'Loading the records…') : h('li.muted', turn ?? 'no record supplied it'));
    if (ids.length) void recordsOf(records, ids).then((rs) => list.replaceChildren(...rs.sort((a, b) => Number(!isUntrusted(a.actionAuthority ?? 'external_untrusted')) - Number(!isUntrusted(b.actionAuthority ?? 'external_untrusted'))).map(recordItem), ...(turn ? [h('li', `and ${turn}`)] : [])));
    return h('tr', { 'data-argument': path }, h('th', { scope: 'row' }, h('code', path), warningList(path)), h('td', h('span.mono.value', typeof value === 'string' ? value : JSON.stringify(value)), warningList(value)), h('td', list));
  });
  const argIds = new Set(d.values?.flatMap(suppliers) ?? []);
  const others = d.dependencies.filter((x) => !argIds.has(x.memoryId)).map((x) => x.memoryId);
  const otherList = h('ul.sources', h('li.muted', 'Loading the records…'));
  if (others.length) void recordsOf(records, others).then((rs) => otherList.replaceChildren(...rs.map(recordItem)));
  return [
    h('details.exact-args', { open: true }, h('summary', 'Exact arguments (what approving binds, every field)'), h('pre.mono', JSON.stringify(d.action.args, null, 2))),
    h('table.args', h('caption', 'What the action would do, argument by argument'), h('thead', h('tr', h('th', { scope: 'col' }, 'Argument'), h('th', { scope: 'col' }, 'Exact value'), h('th', { scope: 'col' }, 'Supplied by'))), h('tbody', rows.length ? rows : h('tr', h('td', { colspan: '3', class: 'muted' }, 'No arguments.')))),
    others.length ? h('details.other-deps', h('summary', `${others.length} other record(s) the decision depended on`), otherList) : null,
  ];
}

/** The characters of an argument value a person must check (valueWarnings in text.js), or null when it is plain ASCII. */
function warningList(value) {
  const lines = valueWarnings(value);
  return lines.length ? h('ul.value-warnings', { role: 'note' }, lines.map((l) => h('li', h('strong', '⚠ '), l))) : null;
}

/** Each argument whose value or name has a non-ASCII character, its warnings again: what the second step asks the person to check. */
const argumentWarnings = (d) =>
  Object.entries(d.action.args)
    .filter(([name, v]) => valueWarnings(v).length || valueWarnings(name).length)
    .map(([name, v]) => h('div', h('code', name), ': ', warningList(name), warningList(v)));

/** The records a confirmation approving `d` is bound to (the untrusted records its denial named), as the server binds them. */
const boundRecords = (d) => [...new Set(d.reasons.filter((r) => r.code === 'needs_confirmation').flatMap((r) => r.memoryIds))].sort();

/** Does any argument value (or the resource) lack a trusted supplier? Then approving needs the second step, whatever the class. */
const VALUE_CODES = new Set(['untrusted_origin', 'missing_corroboration', 'metadata_missing']);
export const valueAtRisk = (d) => d.reasons.some((r) => r.argument !== undefined && VALUE_CODES.has(r.code));

/**
 * Does the action rest on a record below its required authority (context or value), corroborated
 * in part or not at all? Then approving needs the second step, whatever the class: a vote short of
 * k (one tool's, citing any trusted record) lifts nothing.
 */
const AUTHORITY_CODES = new Set(['untrusted_origin', 'missing_corroboration']);
export const authorityAtRisk = (d) => d.reasons.some((r) => AUTHORITY_CODES.has(r.code));

/** The records the denial names as corroborated in part (some votes count, fewer than k), as information: it lowers nothing. */
function partlyCorroborated(d) {
  const ids = [...new Set(d.reasons.filter((r) => r.code === 'missing_corroboration').flatMap((r) => r.memoryIds))].sort();
  if (ids.length === 0) return null;
  return h(
    'p.msg.msg-warn.partial-corroboration',
    { role: 'note' },
    h('strong', 'Corroborated in part: '),
    ids.map((id, i) => [i ? ', ' : '', recordLink(id)]),
    ' — at least one corroboration counts, too few to lift it. It is still real risk: a vote only says someone vouched; check below who did and whether the evidence they cite is about that record.',
  );
}

function approveForm(it, ctx, msg) {
  const d = it.decision;
  const exp = h('input', { id: `exp-${d.id}`, type: 'number', min: '1', max: '1440', value: '15', required: true });
  const second = h('div.second-step', { hidden: true });
  const issue = async () => {
    try {
      const c = await api.approve(d.id, Number(exp.value) * 60);
      announce(`Approved: confirmation ${c.id} for exactly this ${d.action.type}, for ${requesterText(it.requester)} only, single use, until ${fmtTime(c.expiresAt)}. Retry the action to use it.`, msg, 'ok');
      setTimeout(ctx.refresh, 1500);
    } catch (e) {
      msg.replaceChildren(errorBox(e));
    }
  };
  const submit = async (ev) => {
    ev.preventDefault();
    if (!ctx.canConfirm) return announce(ctx.why, msg, 'warn');
    // the second step follows the recorded reasons, not only the class label: any value or record below the threshold, voted for or not
    if (it.reviewClass !== 'real_risk' && !valueAtRisk(d) && !authorityAtRisk(d) && !d.intent?.repeatOf) return issue();
    second.hidden = false;
    second.replaceChildren(
      h('p.msg.msg-warn', { role: 'alert' }, h('strong', 'Real risk: '), 'an argument of this action, or a record it rests on, comes from text nobody trusted or corroborated enough (marked ✖ above). Approve only if you checked each value yourself, outside this page.'),
      ...argumentWarnings(d),
      h('button.approve-confirm', { type: 'button', on: { click: issue } }, `Yes, approve this ${d.action.type} once`),
      ' ',
      h('button.link', { type: 'button', on: { click: () => (second.hidden = true) } }, 'Cancel'),
    );
    second.querySelector('button').focus();
  };
  const bound = boundRecords(d);
  return h(
    'div.approve',
    h('p.binding', 'Approving issues one confirmation: exactly ', h('code', d.action.type), ' with these arguments', d.action.resource ? [' on ', h('span.mono', d.action.resource)] : null, ', usable only by ', h('strong', requesterText(it.requester)), bound.length ? [', only while the action rests on ', bound.map((id, i) => [i ? ', ' : '', recordLink(id)])] : null, ', once, expiring.'),
    h('form.inline', { 'aria-label': `Approve ${d.action.type}`, on: { submit } }, h('label', { for: `exp-${d.id}` }, 'Expires in (minutes)'), exp, h('button.approve', { type: 'submit', 'aria-disabled': ctx.canConfirm ? 'false' : 'true', title: ctx.canConfirm ? 'Issue a single-use confirmation for exactly this action and these arguments' : ctx.why }, 'Approve once')),
    second,
  );
}

function rejectForm(d, ctx, msg) {
  const note = h('input', { id: `note-${d.id}`, type: 'text', maxlength: '2000' });
  const submit = async (ev) => {
    ev.preventDefault();
    try {
      await api.reject(d.id, note.value);
      announce(`Rejected decision ${d.id}.`, msg, 'ok');
      setTimeout(ctx.refresh, 1500);
    } catch (e) {
      msg.replaceChildren(errorBox(e));
    }
  };
  return h('form.inline', { 'aria-label': `Reject ${d.action.type}`, on: { submit } }, h('label', { for: `note-${d.id}` }, 'Note'), note, h('button.reject', { type: 'submit' }, 'Reject'));
}

/**
 * The card of a group of identical denials ({head, rest}: the newest and the others).
 * ctx: {canConfirm, why, records (shared record cache), refresh}.
 */
export function reviewCard({ head: it, rest }, ctx) {
  const d = it.decision;
  const msg = h('div', { 'aria-live': 'polite' });
  const state =
    it.status === 'rejected'
      ? h('p', statusBadge('rejected'), ` by ${it.rejection.by} at ${fmtTime(it.rejection.at)}`, it.rejection.note ? [': ', h('q', it.rejection.note)] : null)
      : it.status === 'approved'
        ? h('p', statusBadge('approved'), ' ', it.confirmations.map((c) => `${c.id} by ${c.principalId}, used ${c.uses}/${c.maxUses}, expires ${fmtTime(c.expiresAt)}`).join('; '))
        : null;
  return h(
    `li.card.review-item.class-${it.reviewClass}`,
    { 'data-decision': d.id, 'data-status': it.status, 'data-class': it.reviewClass, 'data-identical': String(rest.length + 1) },
    h('p.card-head', h('code', d.action.type), ' ', outcomeBadge(d.outcome), ' ', h('span.tag', `${d.tier} tier`), ' ', h(`span.tag.class-tag.class-tag-${it.reviewClass}`, CLASS_TITLE[it.reviewClass]), rest.length ? [' ', h('span.tag.identical', `×${rest.length + 1} identical`)] : null, ' · ', decisionLink(d.id), ' · ', time(d.at)),
    h('p', 'Requested by ', h('strong', requesterText(it.requester)), it.requester.kind === 'external' || it.requesterSide === 'external' ? ' — an external principal or tool: never approvable' : null),
    d.intent?.repeatOf ? h('p.msg.msg-warn.repeat', { role: 'note' }, h('strong', 'A repeat: '), `this session already had a ${d.action.type} allowed — `, decisionLink(d.intent.repeatOf), '. Approve only if a second one is wanted.') : null,
    d.intent?.notPlain ? h('p.not-plain', { role: 'note' }, "The user's turn was not read as a plain request for this action: ", NOT_PLAIN[d.intent.notPlain.reason] ?? d.intent.notPlain.reason, d.intent.notPlain.word !== undefined ? [' (', h('q', d.intent.notPlain.word), ')'] : null, '.') : null,
    partlyCorroborated(d),
    argumentsBlock(d, ctx.records),
    h('details.reasons-box', h('summary', 'Why the gate stopped it'), reasonList(d.reasons)),
    rest.length ? h('details', h('summary', `${rest.length} more identical decision(s)`), h('ul', rest.map((r) => h('li', decisionLink(r.decision.id), ' · ', time(r.decision.at))))) : null,
    state,
    it.status === 'open' ? h('div.actions', it.approvable ? approveForm(it, ctx, msg) : null, rejectForm(d, ctx, msg)) : null,
    msg,
  );
}
