// The memories page (every record of the tenant, filtered, paged) and one record's page (content, origin, corroborations, lineage).
import { api, session } from './api.js';
import { lineageFigure, nodeLabel } from './graph.js';
import { errorBox, page } from './layout.js';
import { AUTHORITIES, announce, authorityOf, badge, dl, h, recordLink, statusBadge, table, time, versionsTable } from './ui.js';

/** Records fetched per page on the memories page (`?page_size=N` in the address overrides it, 1–2000). */
const PAGE_SIZE = (() => {
  const n = Number(new URLSearchParams(location.search).get('page_size'));
  return Number.isInteger(n) && n >= 1 && n <= 2000 ? n : 500;
})();

export async function memoriesPage() {
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
        h('td', authorityOf('taint', r.taint.lowestAuthority)),
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
    list.replaceChildren(h('div', h('p.count', `${shown.length} of ${records.length}${complete ? '' : '+'} records`), loadError ? errorBox(loadError) : null), table('Memories', ['Record', 'Taint (lowest authority)', 'Content', 'Tenant', 'Scope', 'Principal', 'Status', 'Written'], rows, { empty: records.length === 0 ? 'No memory yet: records appear here once a principal writes one (POST /v1/memories, or remember over MCP).' : 'No record matches these filters.', className: 'records' }), h('div', pager));
    announce(`${shown.length} records shown`);
  }
  for (const el of Object.values(f)) el.addEventListener(el.tagName === 'SELECT' || el.type === 'date' ? 'change' : 'input', draw);
  draw();
}

export async function recordPage(id) {
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
  // the inputs as the lineage spells them out: the stored edges and, for a record written in a session, one `session` edge per record its session read before it
  const derived = graph.edges.filter((e) => e.to === rec.id).map((e) => h('li', recordLink(e.from), ` (${e.transform}${e.kind ? ', ' + e.kind : ''})`));
  const nodes = graph.nodes.map((n) => ({ id: n.id, authority: n.authority, label: nodeLabel(n.id, n, graph.edges), focus: n.id === rec.id }));
  page(
    `Record ${rec.id}`,
    h('p', authorityOf('action', rec.actionAuthority), ' ', authorityOf('origin', rec.origin.authority), ' ', authorityOf('taint', rec.taint.lowestAuthority), ' ', statusBadge(rec.status)),
    h('section', { 'aria-labelledby': 'h-content' }, h('h2', { id: 'h-content' }, 'Content'), rec.content === null ? h('p.muted', 'Deleted: the content is erased; its hash and provenance are kept.') : h('pre.content', rec.content)),
    rec.versions ? h('section', { 'aria-labelledby': 'h-versions' }, h('h2', { id: 'h-versions' }, 'Versions'), versionsTable(rec.versions, rec.id)) : null,
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
