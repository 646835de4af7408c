// DOM helpers. Everything is built with createElement and text nodes: record content,
// sources and reasons are attacker-controlled text and are never parsed as HTML, and every string
// goes through visibleText() (text.js), which shows bidi, invisible and tag characters as marked
// \uXXXX escapes.
import { visibleString, visibleText } from './text.js';

/** h('tag.class', {attr: value, on: {click: fn}}, ...children): strings become text nodes. */
export function h(spec, attrs, ...children) {
  const [tag, ...classes] = spec.split('.');
  const el = document.createElement(tag || 'div');
  if (classes.length) el.className = classes.join(' ');
  if (attrs && (typeof attrs !== 'object' || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs);
    attrs = null;
  }
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'on') for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
    else if (k === 'text') el.replaceChildren(visibleText(String(v)));
    else if (k === 'class') el.className = v;
    else if (k in el && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : visibleString(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : visibleText(String(c)));
  }
}

export const AUTHORITIES = ['system_policy', 'user_confirmed', 'trusted_tool_verified', 'model_inferred', 'external_untrusted'];
const AUTH_LABEL = {
  system_policy: 'system policy',
  user_confirmed: 'user confirmed',
  trusted_tool_verified: 'trusted tool',
  model_inferred: 'model inferred',
  external_untrusted: 'untrusted',
};
/** Colours of the authority lattice (also used by the graph; badges carry the name too). */
export const AUTH_COLOR = {
  system_policy: '#1d4ed8',
  user_confirmed: '#047857',
  trusted_tool_verified: '#0f766e',
  model_inferred: '#b45309',
  external_untrusted: '#b91c1c',
};
const AUTH_MARK = { system_policy: '◆', user_confirmed: '●', trusted_tool_verified: '■', model_inferred: '▲', external_untrusted: '✖' };

/** An authority badge: colour plus a shape plus the name (never colour alone). */
export function badge(authority) {
  const known = AUTHORITIES.includes(authority);
  return h(`span.badge.auth-${known ? authority : 'unknown'}`, { title: authority }, h('span', { 'aria-hidden': 'true' }, known ? AUTH_MARK[authority] : '?'), ' ', known ? AUTH_LABEL[authority] : String(authority));
}

/** The three authorities a record shows, one vocabulary on every page: where it was written (origin), the lowest in its lineage (taint), and what the gate lets it drive now (action). */
export const AUTHORITY_KIND = {
  origin: 'origin',
  taint: 'taint (lowest in lineage)',
  action: 'action authority',
};

/** A labelled authority badge: `origin: ■ trusted tool`. */
export function authorityOf(kind, authority) {
  return h('span.authority', { 'data-kind': kind }, h('span.auth-kind', `${AUTHORITY_KIND[kind]}: `), badge(authority));
}

/** Below trusted_tool_verified: what the gate never lets drive a high-tier action alone. */
export const isUntrusted = (authority) => !['system_policy', 'user_confirmed', 'trusted_tool_verified'].includes(authority);

export function outcomeBadge(outcome) {
  const label = { allow: 'allowed', deny: 'denied', would_deny: 'would deny (observe)' }[outcome] ?? String(outcome);
  const mark = { allow: '✓', deny: '✖', would_deny: '⚠' }[outcome] ?? '?';
  return h(`span.badge.out-${outcome}`, h('span', { 'aria-hidden': 'true' }, mark), ' ', label);
}

export function statusBadge(status) {
  return h(`span.tag.status-${status}`, String(status));
}

export function reasonList(reasons) {
  if (!reasons || reasons.length === 0) return h('span.muted', 'none');
  return h(
    'ul.reasons',
    reasons.map((r) =>
      h('li', h('code', r.code), r.argument ? [' on ', h('code', r.argument)] : null, r.detail ? [' (', r.detail, ')'] : null, r.memoryIds && r.memoryIds.length ? [' — ', r.memoryIds.map((id, i) => [i ? ', ' : '', recordLink(id)])] : null),
    ),
  );
}

export function recordLink(id) {
  return h('a.mono', { href: `#/memory/${encodeURIComponent(id)}` }, id);
}

/**
 * A record's versions (present when its chain has several): a table of every version with its
 * writer, action authority, status and, for a current one, its content — headed by a warning when
 * the current versions compete, so a person sees both sides before deciding; with `id`, a version
 * no longer current is said to be replaced (the gate reports `conflict` for what depends on it).
 */
export function versionsTable(v, id) {
  if (!v) return null;
  const rows = v.history.map((x) =>
    h(`tr${x.current ? '.version-current' : ''}`, h('td', recordLink(x.id)), h('td', x.supersedes ? recordLink(x.supersedes) : '—'), h('td', x.principalId), h('td', badge(x.actionAuthority)), h('td', x.current ? 'current' : statusBadge(x.status === 'active' ? 'superseded' : x.status)), h('td', x.content === null ? h('span.muted', '—') : h('q.excerpt', x.content.length > 240 ? `${x.content.slice(0, 240)}…` : x.content))),
  );
  return h(
    'div.versions',
    { 'data-conflict': v.conflict ? 'true' : 'false' },
    v.conflict ? h('p.conflict', { role: 'note' }, h('strong', '⚠ Competing versions: '), `${v.current.length} current versions disagree; a version below another's authority cannot replace it. The gate reports "conflict" for high actions that depend on them.`) : null,
    id !== undefined && !v.current.includes(id) ? h('p.conflict', { role: 'note' }, h('strong', '⚠ Replaced: '), 'this version is no longer current; the gate reports "conflict" for high actions that depend on it.') : null,
    table(`Versions of this record (${v.history.length})`, ['Version', 'Replaces', 'Written by', 'Action authority', 'Status', 'Content'], rows),
  );
}

export function decisionLink(id) {
  return h('a.mono', { href: `#/decision/${encodeURIComponent(id)}` }, id);
}

export function fmtTime(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return d.toISOString().replace('T', ' ').slice(0, 19) + 'Z';
}

export function time(iso) {
  return h('time', { datetime: iso ?? '' }, fmtTime(iso));
}

/** A table with a caption and column headers (scope="col"). */
export function table(caption, headers, rows, opts = {}) {
  return h(
    `table${opts.className ? '.' + opts.className : ''}`,
    h('caption', caption),
    h('thead', h('tr', headers.map((x) => h('th', { scope: 'col' }, x)))),
    h('tbody', rows.length ? rows : h('tr', h('td', { colspan: String(headers.length), class: 'muted' }, opts.empty ?? 'Nothing to show.'))),
  );
}

/** A definition list from [term, value] pairs. */
export function dl(pairs) {
  return h('dl.kv', pairs.map(([k, v]) => [h('dt', k), h('dd', v)]));
}

/** Announce a message to screen readers (and show it in `into`, when given). */
export function announce(msg, into, kind = 'info') {
  const s = document.getElementById('status');
  if (s) s.textContent = msg;
  if (into) {
    into.replaceChildren(h(`p.msg.msg-${kind}`, msg));
  }
}

export function pretty(v) {
  return h('pre.json', JSON.stringify(v, null, 2));
}
