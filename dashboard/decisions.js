// The decisions page (recent decisions) and one decision's page (replayed from the audit log, its dependencies and their lineage).
import { api } from './api.js';
import { lineageFigure, nodeLabel } from './graph.js';
import { errorBox, page } from './layout.js';
import { announce, authorityOf, decisionLink, dl, h, outcomeBadge, pretty, reasonList, recordLink, statusBadge, table, time } from './ui.js';

export async function decisionsPage() {
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
    out.replaceChildren(table('Gate decisions', ['Decision', 'At', 'Action', 'Tier', 'Mode', 'Outcome', 'Reasons', 'Deps'], rows, { empty: 'No decision yet: the gate records one for every POST /v1/decisions (or authorize_action over MCP).' }));
    announce(`${shown.length} decisions shown`);
  };
  outcome.addEventListener('change', draw);
  tier.addEventListener('change', draw);
  draw();
}

export async function decisionPage(id) {
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
    return h('tr', h('th', { scope: 'row' }, recordLink(x.memoryId)), h('td', x.why.join(', ')), h('td', o ? authorityOf('origin', o.authority) : '—'), h('td', o ? o.principalId : '—'), h('td.mono', o ? o.sourceRef : '—'), h('td', authorityOf('taint', x.lowestAuthority)), h('td', authorityOf('action', x.actionAuthority)), h('td', statusBadge(x.status)));
  });
  const ids = new Set([...r.dependencies.map((x) => x.memoryId), ...r.lineage.flatMap((e) => [e.from, e.to])]);
  const depIds = new Set(r.dependencies.map((x) => x.memoryId));
  const nodes = [...ids].map((nid) => ({ id: nid, authority: r.origins[nid]?.authority ?? 'unknown', label: nodeLabel(nid, r.origins[nid] ?? {}, r.lineage), focus: depIds.has(nid) }));
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
        ['Intent', intentText(d)],
        ['Policy version', h('span.mono', r.policyVersion)],
        ['Session', d.sessionId ?? '—'],
        ['At / audit seq', [time(d.at), ` / ${d.auditSeq}`]],
      ]),
    ),
    h('section', { 'aria-labelledby': 'h-deps' }, h('h2', { id: 'h-deps' }, 'Dependencies and their origins'), table('Dependencies as rebuilt from the audit log', ['Record', 'Why', 'Origin', 'Written by', 'Source', 'Taint', 'Action authority', 'Status'], depRows, { empty: 'No dependency.' })),
    h('section', { 'aria-labelledby': 'h-dgraph' }, h('h2', { id: 'h-dgraph' }, 'Derivation graphs of the dependencies'), lineageFigure('Dependencies (outlined) and their lineage down to the roots', nodes, r.lineage, { onOpen: (nid) => (location.hash = `#/memory/${encodeURIComponent(nid)}`) })),
    h('section', { 'aria-labelledby': 'h-pol' }, h('h2', { id: 'h-pol' }, 'Policy of that version'), h('details', h('summary', `Policy ${r.policyVersion}`), h('pre.json', r.policyText))),
  );
}

/** Where a high action's intent came from, and whether the session's context was waived for it (docs/design.md § Claims and intent). */
function intentText(d) {
  if (!d.intent) return '—';
  const from = d.intent.sources.map((x) => (x.source === 'user_turn' ? `the user's turn ("${x.phrase}")` : x.source === 'application' ? 'the application' : `a standing instruction (${(x.recordIds ?? []).join(', ')})`));
  const parts = [from.length ? `requested by ${from.join(', ')}` : 'requested by nobody trusted'];
  if (d.contextWaived) parts.push('context waived: what the session only read did not count');
  if (d.intent.repeatOf) parts.push(`a repeat of ${d.intent.repeatOf}`);
  if (d.intent.notPlain) parts.push(`the turn is no plain request (${d.intent.notPlain.reason}${d.intent.notPlain.word ? `: ${d.intent.notPlain.word}` : ''})`);
  return parts.join('; ');
}
