// memauth dashboard: a small hash-routed page over the /v1 API. No framework, no build step.
import { ApiError, api, session } from './api.js';
import { lineChart, tierLegend } from './charts.js';
import { lineageFigure } from './graph.js';
import { AUTHORITIES, announce, badge, decisionLink, dl, fmtTime, h, outcomeBadge, pretty, reasonList, recordLink, statusBadge, table, time } from './ui.js';

const main = () => document.getElementById('main');

/** Records fetched per page on the memories page (`?page_size=N` in the address overrides it, 1–2000). */
const PAGE_SIZE = (() => {
  const n = Number(new URLSearchParams(location.search).get('page_size'));
  return Number.isInteger(n) && n >= 1 && n <= 2000 ? n : 500;
})();

function page(title, ...content) {
  document.title = `${title} — memauth`;
  const heading = h('h1', { tabindex: '-1' }, title);
  main().replaceChildren(heading, ...content.filter((c) => c !== null && c !== undefined));
  heading.focus();
  for (const a of document.querySelectorAll('#nav a')) {
    const here = location.hash.startsWith(a.getAttribute('href').replace(/s$/, ''));
    if (here) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

function errorBox(e) {
  const msg = e instanceof ApiError ? e.message : `Error: ${e && e.message ? e.message : String(e)}`;
  return h('p.msg.msg-error', { role: 'alert' }, msg);
}

// ------------------------------------------------------------------ sign in

function renderWho() {
  const who = document.getElementById('who');
  const nav = document.getElementById('nav');
  if (!session.who) {
    who.replaceChildren();
    nav.hidden = true;
    return;
  }
  nav.hidden = false;
  const w = session.who;
  const label = w.admin ? ['admin', ' · tenant ', h('strong', session.tenant ?? '?')] : [h('strong', w.principal.id), ` (${w.principal.kind}) · tenant `, h('strong', w.tenant)];
  who.replaceChildren(
    h('span', 'Signed in as ', label),
    ' ',
    h('button.link', { type: 'button', on: { click: () => { session.clear(); location.hash = '#/'; route(); } } }, 'Sign out'),
  );
}

function signInPage(problem) {
  const token = h('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'off', required: true, spellcheck: 'false', 'aria-describedby': 'token-help' });
  const tenant = h('input', { id: 'tenant', name: 'tenant', type: 'text', autocomplete: 'off', 'aria-describedby': 'tenant-help' });
  const out = h('div', { 'aria-live': 'polite' });
  if (problem) out.append(errorBox(problem));
  const form = h(
    'form.card',
    {
      on: {
        submit: async (ev) => {
          ev.preventDefault();
          out.replaceChildren(h('p', 'Checking the token…'));
          try {
            const who = await api.whoami(token.value.trim());
            if (who.admin && !tenant.value.trim()) {
              out.replaceChildren(h('p.msg.msg-error', { role: 'alert' }, 'This is the admin token: name the tenant to look at.'));
              tenant.focus();
              return;
            }
            session.save(token.value.trim(), who.admin ? tenant.value.trim() : who.tenant);
            session.who = who;
            renderWho();
            location.hash = '#/memories';
            route();
          } catch (e) {
            out.replaceChildren(errorBox(e));
          }
        },
      },
    },
    h('p', h('label', { for: 'token' }, 'Bearer token')),
    token,
    h('p.help', { id: 'token-help' }, 'Paste an admin token or a principal token (mat_…). It is kept in this tab only (sessionStorage) and sent as a bearer header to this server.'),
    h('p', h('label', { for: 'tenant' }, 'Tenant (admin token only)')),
    tenant,
    h('p.help', { id: 'tenant-help' }, 'A principal token fixes its tenant; the admin token must name one.'),
    h('p', h('button', { type: 'submit' }, 'Sign in')),
    out,
  );
  page('Sign in', form);
}

// ------------------------------------------------------------------ memories

async function memoriesPage() {
  const list = h('div', { 'aria-live': 'polite' }, h('p', 'Loading…'));
  const f = {
    q: h('input', { id: 'f-q', type: 'search', name: 'q', placeholder: 'text, id or source' }),
    scope: h('select', { id: 'f-scope', name: 'scope' }),
    authority: h('select', { id: 'f-authority', name: 'authority' }, h('option', { value: '' }, 'any'), AUTHORITIES.map((a) => h('option', { value: a }, a))),
    principal: h('select', { id: 'f-principal', name: 'principal' }),
    status: h('select', { id: 'f-status', name: 'status' }, ['', 'active', 'deleted', 'expired'].map((s) => h('option', { value: s }, s || 'any'))),
    from: h('input', { id: 'f-from', type: 'date', name: 'from' }),
    to: h('input', { id: 'f-to', type: 'date', name: 'to' }),
  };
  const field = (id, label, el) => h('div.field', h('label', { for: id }, label), el);
  const form = h(
    'form.filters',
    { role: 'search', 'aria-label': 'Filter memories', on: { submit: (ev) => { ev.preventDefault(); draw(); } } },
    field('f-q', 'Search', f.q),
    field('f-scope', 'Scope', f.scope),
    field('f-authority', 'Authority', f.authority),
    field('f-principal', 'Principal', f.principal),
    field('f-status', 'Status', f.status),
    field('f-from', 'Written from', f.from),
    field('f-to', 'Written to', f.to),
    h('div.field', h('button', { type: 'submit' }, 'Apply')),
  );
  page('Memories', h('p.lead', 'Every record of the tenant, newest first: its authority is where it came from at write time (taint), and never rises except by independent corroboration.'), form, list);
  // newest first, a page at a time; filters apply to what is loaded (the count says so)
  const records = [];
  const seen = new Set();
  let complete = false;
  let loadError = null;
  async function loadPage() {
    try {
      // offset paging over a newest-first list: records written meanwhile shift the list, so a page
      // may repeat ids already shown (skipped here) but never skips one — deleted records stay listed
      const page = (await api.memories({ includeDeleted: 'true', limit: String(PAGE_SIZE), offset: String(records.length) })).records;
      for (const r of page) if (!seen.has(r.id)) { seen.add(r.id); records.push(r); }
      complete = page.length < PAGE_SIZE;
      loadError = null;
    } catch (e) {
      loadError = e;
    }
  }
  await loadPage();
  if (loadError && records.length === 0) {
    list.replaceChildren(errorBox(loadError));
    return;
  }
  const opts = (sel, values) => {
    const keep = sel.value;
    sel.replaceChildren(h('option', { value: '' }, 'any'), [...new Set(values)].sort().map((v) => h('option', { value: v }, v)));
    sel.value = keep;
  };
  const fillOptions = () => {
    opts(f.scope, records.map((r) => r.scope));
    opts(f.principal, records.map((r) => r.origin.principalId));
  };
  fillOptions();
  const more = h('button', { type: 'button', on: { click: async () => {
    more.disabled = true;
    more.textContent = 'Loading…';
    await loadPage();
    fillOptions();
    draw();
  } } });
  const tenant = session.who.admin ? session.tenant : session.who.tenant;
  function draw() {
    const q = f.q.value.trim().toLowerCase();
    const now = new Date().toISOString();
    const statusOf = (r) => (r.status === 'active' && r.expiresAt && r.expiresAt <= now ? 'expired' : r.status);
    const shown = records.filter(
      (r) =>
        (!q || (r.content ?? '').toLowerCase().includes(q) || r.id.toLowerCase().includes(q) || r.origin.sourceRef.toLowerCase().includes(q)) &&
        (!f.scope.value || r.scope === f.scope.value) &&
        (!f.authority.value || r.taint.lowestAuthority === f.authority.value) &&
        (!f.principal.value || r.origin.principalId === f.principal.value) &&
        (!f.status.value || statusOf(r) === f.status.value) &&
        (!f.from.value || r.createdAt.slice(0, 10) >= f.from.value) &&
        (!f.to.value || r.createdAt.slice(0, 10) <= f.to.value),
    );
    const rows = shown.map((r) =>
      h(
        'tr',
        h('th', { scope: 'row' }, recordLink(r.id)),
        h('td', badge(r.taint.lowestAuthority)),
        h('td.content', r.content === null ? h('span.muted', '(content erased)') : r.content.length > 140 ? r.content.slice(0, 140) + '…' : r.content),
        h('td', tenant),
        h('td', r.scope),
        h('td', r.origin.principalId),
        h('td', statusBadge(statusOf(r))),
        h('td', time(r.createdAt)),
      ),
    );
    more.disabled = false;
    more.textContent = `Load ${PAGE_SIZE} older records`;
    const pager = complete ? null : h('p.pager', more, ' ', h('span.muted', 'Filters and search apply to the records loaded so far.'));
    list.replaceChildren(h('div', h('p.count', `${shown.length} of ${records.length}${complete ? '' : '+'} records`), loadError ? errorBox(loadError) : null), table('Memories', ['Record', 'Authority', 'Content', 'Tenant', 'Scope', 'Principal', 'Status', 'Written'], rows, { empty: 'No record matches these filters.', className: 'records' }), h('div', pager));
    announce(`${shown.length} records shown`);
  }
  for (const el of Object.values(f)) el.addEventListener(el.tagName === 'SELECT' || el.type === 'date' ? 'change' : 'input', draw);
  draw();
}

async function recordPage(id) {
  page(`Record ${id}`, h('p', 'Loading…'));
  let rec;
  let graph;
  try {
    [rec, graph] = await Promise.all([api.memory(id), api.lineage(id)]);
  } catch (e) {
    page(`Record ${id}`, errorBox(e));
    return;
  }
  const corr = rec.corroborations.map((c) => h('tr', h('td', c.principalId), h('td', c.domain), h('td', badge(c.authority)), h('td', h('span.mono', c.evidenceRef ?? '(withheld)'), c.evidenceWithheld ? h('span.muted', ` — written by ${c.principalId}; withheld from agents`) : null), h('td', time(c.at))));
  const derived = rec.derivedFrom.map((e) => h('li', recordLink(e.from), ` (${e.transform}${e.kind ? ', ' + e.kind : ''})`));
  const nodes = graph.nodes.map((n) => ({ id: n.id, authority: n.authority, label: `${n.id.slice(0, 14)}${n.status !== 'active' ? ' (' + n.status + ')' : ''}`, focus: n.id === rec.id }));
  page(
    `Record ${rec.id}`,
    h('p', 'Action authority now: ', badge(rec.actionAuthority), ' · origin taint: ', badge(rec.taint.lowestAuthority), ' · ', statusBadge(rec.status)),
    h('section', { 'aria-labelledby': 'h-content' }, h('h2', { id: 'h-content' }, 'Content'), rec.content === null ? h('p.muted', 'Deleted: the content is erased; its hash and provenance are kept.') : h('pre.content', rec.content)),
    h(
      'section',
      { 'aria-labelledby': 'h-origin' },
      h('h2', { id: 'h-origin' }, 'Origin and taint'),
      dl([
        ['Origin authority', badge(rec.origin.authority)],
        ['Written by', rec.origin.principalId],
        ['Source', h('span.mono', rec.origin.sourceRef)],
        ['Written at', time(rec.origin.writtenAt)],
        ['Scope', rec.scope],
        ['Expires', rec.expiresAt ? time(rec.expiresAt) : 'never'],
        ['Lowest authority in lineage', badge(rec.taint.lowestAuthority)],
        ['Laundering channels seen', rec.taint.channels.length ? rec.taint.channels.join(', ') : 'none'],
        ['Upstream sources', rec.taint.sources.length ? h('ul.plain', rec.taint.sources.map((x) => h('li.mono', x))) : 'none'],
        ['Derived from', derived.length ? h('ul.plain', derived) : 'nothing (a root)'],
        ['Deleted sources', rec.deletedSources.length ? h('ul.plain', rec.deletedSources.map((x) => h('li', recordLink(x)))) : 'none'],
        ['Content hash', h('span.mono', rec.contentHash)],
        ['Policy version / audit seq', `${rec.audit.policyVersion} / ${rec.audit.seq}`],
        ['Write reason', rec.audit.writeReason || '—'],
      ]),
    ),
    h('section', { 'aria-labelledby': 'h-corr' }, h('h2', { id: 'h-corr' }, 'Corroborations'), table('Corroborations recorded (they lift action authority only when k independent trusted domains agree)', ['Principal', 'Domain', 'Authority', 'Evidence', 'At'], corr, { empty: 'No corroboration recorded.' })),
    h('section', { 'aria-labelledby': 'h-graph' }, h('h2', { id: 'h-graph' }, 'Derivation graph'), lineageFigure(`Lineage of ${rec.id} down to its roots`, nodes, graph.edges, { onOpen: (nid) => (location.hash = `#/memory/${encodeURIComponent(nid)}`) })),
  );
}

// ------------------------------------------------------------------ decisions

async function decisionsPage() {
  const out = h('div', { 'aria-live': 'polite' }, h('p', 'Loading…'));
  const outcome = h('select', { id: 'd-outcome' }, ['', 'allow', 'deny', 'would_deny'].map((o) => h('option', { value: o }, o || 'any')));
  const tier = h('select', { id: 'd-tier' }, ['', 'high', 'low', 'read_only'].map((o) => h('option', { value: o }, o || 'any')));
  page('Decisions', h('p.lead', 'The gate’s decisions, newest first: outcome, structured reasons and the records they depended on. Open one to replay it from the audit log.'), h('form.filters', { 'aria-label': 'Filter decisions', on: { submit: (e) => e.preventDefault() } }, h('div.field', h('label', { for: 'd-outcome' }, 'Outcome'), outcome), h('div.field', h('label', { for: 'd-tier' }, 'Risk tier'), tier)), out);
  let ds;
  try {
    ds = (await api.decisions({ limit: 1000 })).decisions;
  } catch (e) {
    out.replaceChildren(errorBox(e));
    return;
  }
  const draw = () => {
    const shown = ds.filter((d) => (!outcome.value || d.outcome === outcome.value) && (!tier.value || d.tier === tier.value));
    const rows = shown.map((d) => h('tr', h('th', { scope: 'row' }, decisionLink(d.id)), h('td', time(d.at)), h('td', h('code', d.action.type)), h('td', d.tier), h('td', d.mode), h('td', outcomeBadge(d.outcome)), h('td', reasonList(d.reasons)), h('td', String(d.dependencies.length))));
    out.replaceChildren(table('Gate decisions', ['Decision', 'At', 'Action', 'Tier', 'Mode', 'Outcome', 'Reasons', 'Deps'], rows, { empty: 'No decision yet.' }));
    announce(`${shown.length} decisions shown`);
  };
  outcome.addEventListener('change', draw);
  tier.addEventListener('change', draw);
  draw();
}

async function decisionPage(id) {
  page(`Decision ${id}`, h('p', 'Replaying from the audit log…'));
  let d;
  let r;
  try {
    [d, r] = await Promise.all([api.decision(id), api.replay(id)]);
  } catch (e) {
    page(`Decision ${id}`, errorBox(e));
    return;
  }
  const depRows = r.dependencies.map((x) => {
    const o = r.origins[x.memoryId];
    return h('tr', h('th', { scope: 'row' }, recordLink(x.memoryId)), h('td', x.why.join(', ')), h('td', o ? badge(o.authority) : '—'), h('td', o ? o.principalId : '—'), h('td.mono', o ? o.sourceRef : '—'), h('td', badge(x.lowestAuthority)), h('td', badge(x.actionAuthority)), h('td', statusBadge(x.status)));
  });
  const ids = new Set([...r.dependencies.map((x) => x.memoryId), ...r.lineage.flatMap((e) => [e.from, e.to])]);
  const depIds = new Set(r.dependencies.map((x) => x.memoryId));
  const nodes = [...ids].map((nid) => ({ id: nid, authority: r.origins[nid]?.authority ?? 'unknown', label: nid.slice(0, 14), focus: depIds.has(nid) }));
  const verdict = r.matches
    ? h('p.msg.msg-ok.replay-result', { role: 'status' }, h('strong', 'matches'), ' — re-evaluated from the log alone: ', outcomeBadge(r.replayed.outcome), ' (recorded: ', outcomeBadge(r.recorded.outcome), ')')
    : h('p.msg.msg-error.replay-result', { role: 'alert' }, h('strong', 'does not match'), ' — replayed ', outcomeBadge(r.replayed.outcome), ', recorded ', outcomeBadge(r.recorded.outcome));
  page(
    `Decision ${d.id}`,
    verdict,
    h(
      'section',
      { 'aria-labelledby': 'h-act' },
      h('h2', { id: 'h-act' }, 'Action and outcome'),
      dl([
        ['Action', h('code', d.action.type)],
        ['Arguments', pretty(d.action.args)],
        ['Resource', d.action.resource ?? '—'],
        ['Risk tier / mode', `${d.tier} / ${d.mode}`],
        ['Outcome (recorded)', outcomeBadge(d.outcome)],
        ['Reasons (recorded)', reasonList(d.reasons)],
        ['Outcome (replayed)', outcomeBadge(r.replayed.outcome)],
        ['Reasons (replayed)', reasonList(r.replayed.reasons)],
        ['Confirmation used', d.confirmationId ?? 'none'],
        ['Policy version', h('span.mono', r.policyVersion)],
        ['Session', d.sessionId ?? '—'],
        ['At / audit seq', [time(d.at), ` / ${d.auditSeq}`]],
      ]),
    ),
    h('section', { 'aria-labelledby': 'h-deps' }, h('h2', { id: 'h-deps' }, 'Dependencies and their origins'), table('Dependencies as rebuilt from the audit log', ['Record', 'Why', 'Origin', 'Written by', 'Source', 'Lowest', 'Action authority', 'Status'], depRows, { empty: 'No dependency.' })),
    h('section', { 'aria-labelledby': 'h-dgraph' }, h('h2', { id: 'h-dgraph' }, 'Derivation graphs of the dependencies'), lineageFigure('Dependencies (outlined) and their lineage down to the roots', nodes, r.lineage, { onOpen: (nid) => (location.hash = `#/memory/${encodeURIComponent(nid)}`) })),
    h('section', { 'aria-labelledby': 'h-pol' }, h('h2', { id: 'h-pol' }, 'Policy of that version'), h('details', h('summary', `Policy ${r.policyVersion}`), h('pre.json', r.policyText))),
  );
}

// ------------------------------------------------------------------ review queue

const CLASS_TITLE = { real_risk: 'Real risk', missing_corroboration: 'Missing corroboration', missing_metadata: 'Missing metadata' };
const CLASS_HELP = {
  real_risk: 'untrusted origin, deleted source or expired record: the action would act on text nobody trusted.',
  missing_corroboration: 'corroboration was tried but is too weak (not k independent trusted domains).',
  missing_metadata: 'a dependency or an argument value has no verifiable provenance (metadata_missing).',
};

async function reviewPage() {
  const out = h('div', { 'aria-live': 'polite' }, h('p', 'Loading…'));
  page('Review queue', h('p.lead', 'Actions the gate blocked that a person can let through once with a scoped confirmation, and observe-mode decisions that would have been denied, by review class.'), out);
  await drawReview(out);
}

async function drawReview(out) {
  let items;
  try {
    items = (await api.review()).items;
  } catch (e) {
    out.replaceChildren(errorBox(e));
    return;
  }
  const w = session.who;
  const canConfirm = !w.admin && w.principal.kind === 'user';
  const why = w.admin ? 'The admin token cannot confirm actions: sign in as a user to approve.' : `This token is ${w.principal.kind} "${w.principal.id}": only a user principal can confirm — sign in as a user to approve.`;
  const blocked = items.filter((i) => i.kind === 'blocked' && i.approvable);
  const otherDenied = items.filter((i) => i.kind === 'blocked' && !i.approvable);
  const wouldDeny = items.filter((i) => i.kind === 'would_deny');
  const card = (it) => reviewCard(it, canConfirm, why, () => drawReview(out));
  const grouped = (list, prefix) =>
    ['real_risk', 'missing_corroboration', 'missing_metadata'].map((c) => {
      const l = list.filter((i) => i.reviewClass === c);
      return h('section.group', { 'aria-labelledby': `${prefix}-${c}` }, h('h3', { id: `${prefix}-${c}` }, `${CLASS_TITLE[c]} (${l.length})`), h('p.help', CLASS_HELP[c]), l.length ? h('ul.cards', l.map(card)) : h('p.muted', 'None.'));
    });
  out.replaceChildren(
    ...(canConfirm ? [] : [h('p.msg.msg-warn', { role: 'note' }, why)]),
    h('section', { 'aria-labelledby': 'h-blocked' }, h('h2', { id: 'h-blocked' }, `Blocked, awaiting a person (${blocked.filter((i) => i.status === 'open').length} open)`), h('p.help', 'Denied with needs_confirmation or missing_corroboration: approving issues a confirmation for exactly this action and these arguments, usable only by the principal that asked and only while its session rests on the same records, single use, expiring.'), blocked.length ? h('ul.cards', blocked.map(card)) : h('p.muted', 'Nothing blocked.')),
    h('section', { 'aria-labelledby': 'h-would' }, h('h2', { id: 'h-would' }, `Observe mode: would have been denied (${wouldDeny.length})`), grouped(wouldDeny, 'wd')),
    h('section', { 'aria-labelledby': 'h-hard' }, h('h2', { id: 'h-hard' }, `Denied, not approvable (${otherDenied.length})`), h('p.help', 'A deleted or expired source, or missing metadata, cannot be lifted by a confirmation: fix the data, then retry. Actions requested by an external principal are never approvable.'), grouped(otherDenied, 'hd')),
  );
}

/** Who asked for a queued decision, as a person reads it. */
function requesterText(r) {
  return r.id === null ? 'the application (admin token or library)' : `${r.kind ?? 'unregistered'} principal "${r.id}"`;
}

function reviewCard(it, canConfirm, why, refresh) {
  const d = it.decision;
  const msg = h('div', { 'aria-live': 'polite' });
  const exp = h('input', { id: `exp-${d.id}`, type: 'number', min: '1', max: '1440', value: '15', required: true });
  const note = h('input', { id: `note-${d.id}`, type: 'text', maxlength: '2000' });
  const approve = h(
    'form.inline',
    {
      'aria-label': `Approve ${d.action.type}`,
      on: {
        submit: async (ev) => {
          ev.preventDefault();
          if (!canConfirm) {
            announce(why, msg, 'warn');
            return;
          }
          try {
            const c = await api.approve(d.id, Number(exp.value) * 60);
            announce(`Approved: confirmation ${c.id} for exactly this ${d.action.type}, for ${requesterText(it.requester)} only, single use, until ${fmtTime(c.expiresAt)}. Retry the action to use it.`, msg, 'ok');
            setTimeout(refresh, 1500);
          } catch (e) {
            msg.replaceChildren(errorBox(e));
          }
        },
      },
    },
    h('label', { for: `exp-${d.id}` }, 'Expires in (minutes)'),
    exp,
    h('button.approve', { type: 'submit', 'aria-disabled': canConfirm ? 'false' : 'true', title: canConfirm ? 'Issue a single-use confirmation for exactly this action and these arguments' : why }, 'Approve once'),
  );
  const reject = h(
    'form.inline',
    {
      'aria-label': `Reject ${d.action.type}`,
      on: {
        submit: async (ev) => {
          ev.preventDefault();
          try {
            await api.reject(d.id, note.value);
            announce(`Rejected decision ${d.id}.`, msg, 'ok');
            setTimeout(refresh, 1500);
          } catch (e) {
            msg.replaceChildren(errorBox(e));
          }
        },
      },
    },
    h('label', { for: `note-${d.id}` }, 'Note'),
    note,
    h('button.reject', { type: 'submit' }, 'Reject'),
  );
  const state =
    it.status === 'rejected'
      ? h('p', statusBadge('rejected'), ` by ${it.rejection.by} at ${fmtTime(it.rejection.at)}`, it.rejection.note ? [': ', h('q', it.rejection.note)] : null)
      : it.status === 'approved'
        ? h('p', statusBadge('approved'), ' ', it.confirmations.map((c) => `${c.id} by ${c.principalId}, used ${c.uses}/${c.maxUses}, expires ${fmtTime(c.expiresAt)}`).join('; '))
        : null;
  return h(
    'li.card.review-item',
    { 'data-decision': d.id, 'data-status': it.status },
    h('p.card-head', h('code', d.action.type), ' ', outcomeBadge(d.outcome), ' ', h('span.tag', d.tier), ' ', h('span.tag', CLASS_TITLE[it.reviewClass]), ' · ', decisionLink(d.id), ' · ', time(d.at)),
    h('p', 'Requested by ', h('strong', requesterText(it.requester)), it.requester.kind === 'external' ? ' — an external principal: never approvable' : null),
    h('p', 'Exact arguments:'),
    pretty(d.action.args),
    d.action.resource ? h('p', 'Resource: ', h('span.mono', d.action.resource)) : null,
    reasonList(d.reasons),
    state,
    it.status === 'open' ? h('div.actions', it.approvable ? approve : null, reject) : null,
    msg,
  );
}

// ------------------------------------------------------------------ metrics

const METRICS = [
  ['originCoverage', 'Origin coverage', 'records whose origin is complete and matches the audit chain'],
  ['taintRetention', 'Taint retention', 'derived records that kept every input’s taint'],
  ['launderingAsr', 'Laundering ASR', 'exposed decisions that proceeded without a confirmation (lower is better for high)'],
  ['legitimateUtility', 'Legitimate utility', 'clean decisions that proceeded'],
  ['corroborationValidity', 'Corroboration validity', 'recorded corroborations that count'],
  ['highRiskDependencyRate', 'High-risk dependency rate', 'dependencies below trusted_tool_verified'],
  ['decisionReplayRate', 'Decision replay rate', 'replays from the log that match'],
];
const TIERS = ['high', 'low', 'read_only'];

async function metricsPage() {
  const out = h('div', { 'aria-live': 'polite' }, h('p', 'Computing (this replays decisions from the audit log)…'));
  const buckets = h('select', { id: 'm-buckets' }, [6, 12, 24].map((n) => h('option', { value: String(n), selected: n === 12 }, String(n))));
  page('Metrics', h('p.lead', 'The seven metrics of docs/design.md per risk tier, over equal time windows from the first decision to now (computed by the server from the store: GET /v1/metrics/series).'), h('form.filters', { on: { submit: (e) => e.preventDefault() } }, h('div.field', h('label', { for: 'm-buckets' }, 'Time windows'), buckets)), out);
  const draw = async () => {
    out.replaceChildren(h('p', 'Computing…'));
    let series;
    try {
      series = await api.metricsSeries(Number(buckets.value));
    } catch (e) {
      out.replaceChildren(errorBox(e));
      return;
    }
    // label each window by its end, as precisely as the window size needs
    const cut = series.bucketMs < 60_000 ? [11, 19] : series.bucketMs < 86_400_000 ? [11, 16] : [5, 10];
    const labels = series.buckets.map((b) => b.to.slice(cut[0], cut[1]));
    const charts = METRICS.map(([key, title, help]) => {
      const ser = TIERS.map((t) => ({ name: t, values: series.buckets.map((b) => b.tiers[t][key].value) }));
      const rows = series.buckets.map((b) => h('tr', h('th', { scope: 'row' }, `${fmtTime(b.from)} – ${fmtTime(b.to)}`), TIERS.map((t) => h('td', ratioText(b.tiers[t][key])))));
      return h('section.chart-card', { 'aria-labelledby': `mh-${key}` }, h('h2', { id: `mh-${key}` }, title), h('p.help', help), lineChart(title, labels, ser), h('details', h('summary', 'Values'), table(`${title} per window`, ['Window', ...TIERS], rows)));
    });
    const totals = TIERS.map((t) => h('tr', h('th', { scope: 'row' }, t), h('td', String(series.buckets.reduce((n, b) => n + b.tiers[t].decisions, 0)))));
    out.replaceChildren(tierLegend(), h('div.charts', charts), table('Decisions per tier in these windows', ['Tier', 'Decisions'], totals));
    announce('Metrics drawn');
  };
  buckets.addEventListener('change', draw);
  await draw();
}

const ratioText = (r) => (r.value === null ? '— (nothing to measure)' : `${(r.value * 100).toFixed(1)}% (${r.numerator}/${r.denominator})`);

// ------------------------------------------------------------------ audit

function auditPage() {
  const result = h('div.audit-result', { 'aria-live': 'polite' });
  const exportMsg = h('div', { 'aria-live': 'polite' });
  const verify = h(
    'button',
    {
      type: 'button',
      id: 'verify',
      on: {
        click: async () => {
          result.replaceChildren(h('p', 'Verifying the hash chain, the signed checkpoint and every row…'));
          try {
            const rep = await api.verify();
            const rows = rep.tenants.map((t) =>
              h('tr', h('th', { scope: 'row' }, t.tenant), h('td', t.chain.ok ? '✓ intact' : `✖ broken at seq ${t.chain.firstBadSeq ?? '?'}`), h('td', String(t.chain.entries)), h('td', t.checkpoint === null ? 'none yet' : t.checkpoint.ok ? `✓ seq ${t.checkpoint.seq}` : `✖ ${t.checkpoint.problem ?? ''}`), h('td', `${t.records.checked} checked, ${t.records.bad.length} bad`), h('td', t.message)),
            );
            result.replaceChildren(h(`p.msg.${rep.ok ? 'msg-ok' : 'msg-error'}.verify-verdict`, { role: rep.ok ? 'status' : 'alert' }, h('strong', rep.ok ? 'Verified: the audit chain is intact.' : 'Verification FAILED.')), table('Verification per tenant', ['Tenant', 'Chain', 'Entries', 'Checkpoint', 'Records', 'Message'], rows));
            announce(rep.ok ? 'Audit chain verified' : 'Audit verification failed');
          } catch (e) {
            result.replaceChildren(errorBox(e));
          }
        },
      },
    },
    'Verify the audit chain',
  );
  const exp = h(
    'button',
    {
      type: 'button',
      id: 'export',
      on: {
        click: async () => {
          try {
            const r = await api.exportAudit();
            const blob = await r.blob();
            const tenant = session.who.admin ? session.tenant : session.who.tenant;
            const a = h('a', { href: URL.createObjectURL(blob), download: `memauth-audit-${tenant}.ndjson` }, `Download memauth-audit-${tenant}.ndjson (${blob.size} bytes)`);
            exportMsg.replaceChildren(h('p.msg.msg-ok', a));
            a.click();
            announce('Audit export ready');
          } catch (e) {
            exportMsg.replaceChildren(errorBox(e));
          }
        },
      },
    },
    'Export the audit log (JSON lines)',
  );
  page(
    'Audit',
    h('p.lead', 'One SHA-256 hash chain per tenant over every write, derivation, corroboration, confirmation, decision, deletion and policy; a signed checkpoint makes truncation detectable.'),
    h('section', { 'aria-labelledby': 'h-verify' }, h('h2', { id: 'h-verify' }, 'Verify'), h('p', verify), result),
    h('section', { 'aria-labelledby': 'h-export' }, h('h2', { id: 'h-export' }, 'Export'), h('p', exp), exportMsg),
  );
}

// ------------------------------------------------------------------ router

async function route() {
  if (!session.token) {
    renderWho();
    signInPage();
    return;
  }
  if (!session.who) {
    try {
      session.who = await api.whoami();
    } catch (e) {
      session.clear();
      renderWho();
      signInPage(e);
      return;
    }
    renderWho();
  }
  const [, name, arg] = location.hash.match(/^#\/([a-z]+)(?:\/(.+))?$/) ?? [];
  const id = arg ? decodeURIComponent(arg) : null;
  try {
    if (name === 'memory' && id) await recordPage(id);
    else if (name === 'decisions') await decisionsPage();
    else if (name === 'decision' && id) await decisionPage(id);
    else if (name === 'review') await reviewPage();
    else if (name === 'metrics') await metricsPage();
    else if (name === 'audit') auditPage();
    else await memoriesPage();
  } catch (e) {
    main().append(errorBox(e));
  }
}

window.addEventListener('hashchange', route);
route();
