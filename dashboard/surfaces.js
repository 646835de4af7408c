// The write-surface inventory page (GET /v1/surfaces, and the tiers' modes from GET /v1/policy):
// every principal, policy source rule, the self-statement path and the default source, with its
// kind, domain, owner, default authority, store and deletion, and over a window the records
// written through it and the decisions per risk tier that depended on them — so an operator sees
// which path feeds consequential actions before switching a tier to enforce (docs/policy.md §
// Rolling out). Every string shown (principal ids, domains, rule globs and descriptions) is
// inserted as text through ui.js h().
import { api } from './api.js';
import { errorBox, page } from './layout.js';
import { announce, badge, fmtTime, h, isUntrusted, table, time } from './ui.js';

const TIERS = ['high', 'low', 'read_only'];
const WINDOWS = [
  ['24h', 'last 24 hours'],
  ['7d', 'last 7 days'],
  ['30d', 'last 30 days'],
  ['365d', 'last 365 days'],
];
const TYPE_LABEL = { principal: 'principal', source_rule: 'source rule', self_source: 'self-statement', default_source: 'default source' };

export async function surfacesPage() {
  const out = h('div', { 'aria-live': 'polite' }, h('p', 'Loading…'));
  const since = h('select', { id: 's-since' }, WINDOWS.map(([v, label]) => h('option', { value: v, selected: v === '7d' }, label)));
  page(
    'Write surfaces',
    h('p.lead', 'Every path by which records enter this tenant — each principal, each source rule of the policy, a principal stating something itself, and the default for sources no rule matches — with the authority a write through it gets and the decisions that depended on what it wrote. Read it before switching a tier to enforce: a surface with high-risk uses and a low default authority feeds consequential actions.'),
    h('form.filters', { 'aria-label': 'Choose the window', on: { submit: (e) => e.preventDefault() } }, h('div.field', h('label', { for: 's-since' }, 'Window'), since)),
    out,
  );
  const draw = async () => {
    out.replaceChildren(h('p', 'Counting…'));
    let inv;
    let policy;
    try {
      [inv, policy] = await Promise.all([api.surfaces(since.value), api.policy()]);
    } catch (e) {
      out.replaceChildren(errorBox(e));
      return;
    }
    out.replaceChildren(...inventoryView(inv, policy.document.modes));
    announce(`${inv.surfaces.length} write surfaces shown`);
  };
  since.addEventListener('change', draw);
  await draw();
}

/** The decisions of one tier that depended on a surface: `3 (allow 1 · deny 2)` with the dependency count, or `—`. */
function tierUse(u) {
  if (u.decisions === 0) return h('span.muted', '—');
  const parts = [['allow', u.allow], ['deny', u.deny], ['would deny', u.would_deny]].filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`);
  return h('span', h('strong', String(u.decisions)), ` (${parts.join(' · ')}; ${u.dependencies} dependenc${u.dependencies === 1 ? 'y' : 'ies'})`);
}

/** A surface's default authority: a badge, or the writer's own ceiling for the self-statement path. */
const defaultAuthority = (s) => (s.defaultAuthority === null ? h('span.muted', 'the writer’s ceiling') : badge(s.defaultAuthority));

/** True when untrusted text through this surface fed a high-tier decision: the paths to look at first. */
const risky = (s) => s.observed.tiers.high.decisions > 0 && (s.defaultAuthority === null || isUntrusted(s.defaultAuthority) || Object.keys(s.observed.authorities).some(isUntrusted));

/** What was written through a surface: the count, per origin authority, the last write and retention. */
function writes(o) {
  if (o.writes === 0) return h('span.muted', 'none');
  const per = Object.entries(o.authorities).map(([a, n]) => h('li', badge(a), ` ${n}`));
  const kept = o.erased + o.expiring === 0 ? null : h('li.muted', `${o.erased} erased, ${o.expiring} with an expiry`);
  return h('div', h('strong', String(o.writes)), ' · last ', time(o.lastWriteAt), h('ul.plain.per-authority', per, kept));
}

function surfaceRow(s, modes) {
  const feedsHigh = s.observed.tiers.high.decisions > 0;
  const mark = risky(s) ? h('span.untrusted-mark', { title: 'untrusted text through this path fed a high-risk decision' }, '✖ ') : null;
  return h(
    `tr.surface${feedsHigh ? '.feeds-high' : ''}${risky(s) ? '.risky' : ''}`,
    { 'data-surface': s.id },
    h('th', { scope: 'row' }, mark, h('span.surface-name', s.name), h('br'), h('span.muted', s.type === 'principal' ? 'principal' : `${TYPE_LABEL[s.type] ?? s.type} · ${s.id}`), s.description ? h('p.help.surface-desc', s.description) : null),
    h('td', s.kind ?? h('span.untrusted-mark', 'unregistered')),
    h('td.mono', s.domain ?? '—'),
    h('td.owner', s.owner),
    h('td', defaultAuthority(s)),
    h('td', writes(s.observed)),
    TIERS.map((t) => h(`td.tier-${t}`, { 'data-mode': modes[t] }, tierUse(s.observed.tiers[t]))),
    h('td', h('span.mono', s.store), h('details.deletion', h('summary', 'how deleted'), s.deletion)),
  );
}

/** The tiers, their mode and how many surfaces fed them in the window. */
function tierTable(inv, modes) {
  const rows = TIERS.map((t) => {
    const fed = inv.surfaces.filter((s) => s.observed.tiers[t].decisions > 0);
    const untrusted = fed.filter((s) => (t === 'high' ? risky(s) : false)).length;
    return h(
      `tr.tier-row.mode-${modes[t]}`,
      { 'data-tier': t },
      h('th', { scope: 'row' }, t),
      h('td', h(`span.badge.mode-badge.mode-${modes[t]}`, modes[t] === 'enforce' ? '■ enforce' : '◌ observe')),
      h('td', String(fed.length)),
      h('td', t === 'high' ? String(untrusted) : h('span.muted', '—')),
    );
  });
  return table('Risk tiers in this policy', ['Tier', 'Mode', 'Surfaces whose records fed its decisions', 'Of them with untrusted writes'], rows, { className: 'tiers' });
}

function inventoryView(inv, modes) {
  const w = inv.window;
  const fedHigh = inv.surfaces.filter(risky);
  const summary =
    fedHigh.length === 0
      ? h('p.msg.msg-info.surface-summary', 'No untrusted path fed a high-risk decision in this window.')
      : h('p.msg.msg-warn.surface-summary', { role: 'note' }, `${fedHigh.length} path${fedHigh.length === 1 ? '' : 's'} with untrusted writes fed high-risk decisions in this window (marked ✖). The high tier is in ${modes.high} mode: `, modes.high === 'enforce' ? 'those decisions are blocked unless corroborated or confirmed.' : 'they are only recorded as would deny; the actions went ahead.');
  const cols = ['Surface', 'Kind', 'Domain', 'Owner', 'Default authority', 'Writes', ...TIERS.map((t) => `${t} uses (${modes[t]})`), 'Store / deletion'];
  return [
    inv.hint ? h('p.msg.msg-warn.hint', { role: 'note' }, inv.hint) : null,
    h('p.help.window', `Window ${fmtTime(w.since)} – ${fmtTime(w.until)}: ${w.recordsRead} records, ${w.decisionsRead} decisions read; policy ${inv.policyVersion}.`, w.complete ? '' : ' The window held more: the newest were counted.'),
    tierTable(inv, modes),
    summary,
    table(`Write surfaces of tenant ${inv.tenant}`, cols, inv.surfaces.map((s) => surfaceRow(s, modes)), { className: 'surfaces' }),
  ].filter(Boolean);
}
