/**
 * The human output of the CLI commands: records, hits, decisions, lineage (tree and DOT), audit
 * reports, principals — tables and lines for a terminal (`--json` prints the objects instead).
 */
import Table from 'cli-table3';
import type { CorroborateResult, LineageGraph, RecordView, WriteResult } from '../api/memory.js';
import type { ReplayResult } from '../api/replay.js';
import type { AuditReport } from '../api/verify.js';
import type { Checkpoint } from '../core/audit.js';
import type { Authority } from '../core/authority.js';
import type { Confirmation, Decision, MemoryRecord, Principal, Reason } from '../core/types.js';
import type { VersionedHit } from '../api/versions.js';

/** Collapse whitespace and cut `s` to `max` characters with an ellipsis. */
export function truncate(s: string | null, max: number): string {
  if (s === null) return '(erased)';
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1))}…`;
}

/** A plain (colourless) table; colour codes would end up in files and pipes. */
export function table(head: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | number>>): string {
  const t = new Table({ head: [...head], style: { head: [], border: [], compact: true } });
  for (const r of rows) t.push(r.map((c) => String(c)));
  return t.toString();
}

/** `key  value` lines, keys padded to one column. */
function fields(rows: ReadonlyArray<readonly [string, string]>): string {
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n');
}

function derivedFromText(r: MemoryRecord): string {
  const edges = r.derivedFrom.map((e) => `${e.from} (${e.transform}, ${e.kind})`);
  // a record written in a session stores one reference to what the session read before it (memauth lineage lists each)
  if (r.sessionContext !== undefined)
    edges.push(`the first ${r.sessionContext.length} records read in session ${JSON.stringify(r.sessionContext.sessionId)} (${r.sessionContext.transform}, session; see lineage)`);
  return edges.length === 0 ? '(none)' : edges.join(', ');
}

function isView(r: MemoryRecord): r is RecordView {
  return 'actionAuthority' in r;
}

/** A record (as written, derived or read) for people: id, scope, origin, taint, lineage, content. */
export function formatRecord(r: MemoryRecord | RecordView): string {
  const rows: Array<[string, string]> = [
    ['id', r.id],
    ['scope', r.scope],
    ['status', r.status],
    ['origin', `${r.origin.authority} (written ${r.origin.writtenAt})`],
    ['principal', r.origin.principalId],
    ['source', r.origin.sourceRef],
    ['taint', `lowest ${r.taint.lowestAuthority}; channels ${r.taint.channels.length > 0 ? r.taint.channels.join(', ') : '(none)'}`],
    ['derivedFrom', derivedFromText(r)],
  ];
  if (isView(r)) {
    rows.push(['action authority', r.actionAuthority]);
    if (r.corroborations.length > 0)
      rows.push(['corroborations', r.corroborations.map((c) => `${c.principalId}@${c.domain} (${c.authority}) ${c.evidenceRef ?? "(evidence withheld: below this record's authority)"}`).join('; ')]);
    if (r.deletedSources.length > 0) rows.push(['deleted sources', r.deletedSources.join(', ')]);
    if (r.versions !== undefined) rows.push(['versions', versionsText(r.versions)]);
  }
  if (r.expiresAt !== null) rows.push(['expires', r.expiresAt]);
  // subject and value JSON-quoted: they are the writer's text
  if (r.claims !== undefined && r.claims.length > 0) rows.push(['claims', r.claims.map((c) => `${JSON.stringify(c.subject)}:${c.field}=${JSON.stringify(c.value)}`).join('; ')]);
  rows.push(['content', r.content === null ? '(erased; hash kept)' : truncate(r.content, 200)]);
  return fields(rows);
}

/** A chain's versions in a line: the current ones with their authority (marked CONFLICT when they compete), and the chain's size. */
function versionsText(v: NonNullable<RecordView['versions']>): string {
  const current = v.history.filter((h) => h.current).map((h) => `${h.id} (${h.actionAuthority}, by ${h.principalId}): ${truncate(h.content, 60)}`);
  return `${v.conflict ? 'CONFLICT: ' : ''}${v.history.length} in chain ${v.chain}; current ${current.join(' | ')}`;
}

/** The result of a write: the record, or which existing record recalled text resolved to. */
export function formatWrite(w: WriteResult): string {
  if (!w.created) return `not written: the text is recalled memory echoed back; it resolves to ${w.echoOf ?? w.record.id} and adds no authority\n${formatRecord(w.record)}`;
  return formatRecord(w.record);
}

/** Principals as a table. */
export function formatPrincipals(ps: readonly Principal[]): string {
  if (ps.length === 0) return 'no principals (add one with: memauth principal add <id> --kind K --domain D)';
  return table(
    ['id', 'kind', 'max authority', 'domain', 'created'],
    ps.map((p) => [p.id, p.kind, p.maxAuthority, p.domain, p.createdAt]),
  );
}

/** A BM25 score: 3 decimals, or exponent notation when tiny (one-document corpora score near 0). */
function score(x: number): string {
  return x !== 0 && Math.abs(x) < 0.001 ? x.toExponential(2) : x.toFixed(3);
}

/** Search hits as a table: id, authority, score, content. */
export function formatHits(hits: readonly VersionedHit[]): string {
  if (hits.length === 0) return 'no matches';
  return table(
    ['id', 'authority', 'score', 'versions', 'content'],
    hits.map((h) => [
      h.record.id,
      h.record.taint.lowestAuthority,
      score(h.score),
      h.versions === undefined ? '' : h.versions.conflict ? 'CONFLICT' : `${h.versions.history.length}`,
      truncate(h.record.content, 60),
    ]),
  );
}

/** Records as a table. */
export function formatRecords(rs: readonly MemoryRecord[]): string {
  if (rs.length === 0) return 'no records';
  return table(
    ['id', 'scope', 'authority', 'principal', 'status', 'created', 'content'],
    rs.map((r) => [r.id, r.scope, r.taint.lowestAuthority, r.origin.principalId, r.status, r.createdAt, truncate(r.content, 40)]),
  );
}

/** A corroboration result: recorded, counted or why not, and the record's action authority now. */
export function formatCorroboration(c: CorroborateResult): string {
  return fields([
    ['corroboration', c.corroboration.id],
    ['record', c.corroboration.recordId],
    ['by', `${c.corroboration.principalId} (domain ${c.corroboration.domain}, ${c.corroboration.authority})`],
    ['evidence', c.corroboration.evidenceRef],
    ['counted', c.counted ? 'yes' : `no (${c.rejection ?? 'not counted'})`],
    ['action authority', `${c.actionAuthority} (${c.independentDomains} independent domain${c.independentDomains === 1 ? '' : 's'})`],
  ]);
}

/** A scoped confirmation. */
export function formatConfirmation(c: Confirmation): string {
  return fields([
    ['confirmation', c.id],
    ['by', c.principalId],
    ['action', c.actionType],
    ['resource', c.resource ?? '(any)'],
    ['args', c.args !== null ? JSON.stringify(c.args) : `(hash ${c.argsHash})`],
    ['argsHash', c.argsHash],
    ['memories', c.memoryIds !== null ? c.memoryIds.join(', ') : '(any)'],
    ['expires', c.expiresAt],
    ['max uses', String(c.maxUses)],
  ]);
}

function reasonLine(r: Reason): string {
  const parts: string[] = [r.code];
  if (r.memoryIds.length > 0) parts.push(`memories ${r.memoryIds.join(', ')}`);
  if (r.argument !== undefined) parts.push(`argument ${r.argument}`);
  if (r.detail !== undefined) parts.push(`detail ${r.detail}`);
  return `  - ${parts.join('; ')}`;
}

/** A gate decision: OUTCOME, tier, mode, structured reasons and dependencies. */
export function formatDecision(d: Decision): string {
  const lines = [`${d.outcome.toUpperCase()}  ${d.action.type}${d.action.resource !== undefined ? ` on ${d.action.resource}` : ''}  (tier ${d.tier}, mode ${d.mode})`];
  lines.push(
    fields([
      ['decision', d.id],
      ['args', JSON.stringify(d.action.args)],
      ['session', d.sessionId ?? '(none)'],
      ['confirmation', d.confirmationId ?? '(none used)'],
      ['policy', d.policyVersion],
    ]),
  );
  if (d.notice !== undefined) lines.push(`notice: ${d.notice}`);
  lines.push(d.reasons.length > 0 ? 'reasons:' : 'reasons: (none)');
  for (const r of d.reasons) lines.push(reasonLine(r));
  if (d.dependencies.length === 0) lines.push('dependencies: (none)');
  else {
    lines.push('dependencies:');
    lines.push(
      table(
        ['memory', 'why', 'lowest authority', 'action authority', 'status'],
        d.dependencies.map((x) => [x.memoryId, x.why.join(','), x.lowestAuthority, x.actionAuthority, x.status]),
      ),
    );
  }
  const supplied = d.values.filter((v) => v.recordIds.length > 0 || v.userTurn);
  if (supplied.length > 0) {
    lines.push('argument values supplied by:');
    for (const v of supplied) lines.push(`  - ${v.argument}=${truncate(v.value, 40)}: ${[...v.recordIds, ...(v.userTurn ? ['user turn'] : [])].join(', ')}`);
  }
  return lines.join('\n');
}

/** Recent decisions as a table. */
export function formatDecisions(ds: readonly Decision[]): string {
  if (ds.length === 0) return 'no decisions';
  return table(
    ['id', 'at', 'action', 'tier', 'mode', 'outcome', 'reasons'],
    ds.map((d) => [d.id, d.at, d.action.type, d.tier, d.mode, d.outcome.toUpperCase(), [...new Set(d.reasons.map((r) => r.code))].join(', ')]),
  );
}

/** A deletion. */
export function formatDeleted(r: MemoryRecord): string {
  return `deleted ${r.id}: content erased, hash kept (${r.contentHash}); records derived from it keep their taint and show deleted_source`;
}

/** One line per tenant: OK/FAIL and the message. */
export function formatAudit(rep: AuditReport): string {
  if (rep.tenants.length === 0) return 'no tenants in this database';
  return rep.tenants
    .map((t) => {
      const prefix = `tenant ${t.tenant}: `;
      const msg = t.message.startsWith(prefix) ? t.message.slice(prefix.length) : t.message;
      return `${t.ok ? 'OK  ' : 'FAIL'}  ${t.tenant}: ${msg}`;
    })
    .join('\n');
}

/** Checkpoints written, one per tenant. */
export function formatCheckpoints(cs: readonly Checkpoint[]): string {
  // the CLI signs a checkpoint whenever it closes the store, so an unmoved head is the usual case
  if (cs.length === 0) return 'nothing to checkpoint: every chain head is already under a signed checkpoint, or there are no audit entries (each memauth command signs one when it closes)';
  return cs.map((c) => `checkpoint ${c.tenant}: seq ${c.seq} head ${c.hash} at ${c.at}`).join('\n');
}

/** `code` or `code(argument)`. */
function reasonCode(r: Reason): string {
  return r.argument !== undefined ? `${r.code}(${r.argument})` : r.code;
}

/** A replay: recorded vs re-evaluated outcome, and what was rebuilt from the log. */
export function formatReplay(r: ReplayResult): string {
  const lines = [
    `${r.matches ? 'MATCH' : 'MISMATCH'}  decision ${r.decisionId} (audit seq ${r.auditSeq})`,
    fields([
      ['action', `${r.action.type} ${JSON.stringify(r.action.args)}`],
      ['recorded', `${r.recorded.outcome}${r.recorded.reasons.length > 0 ? ` [${r.recorded.reasons.map(reasonCode).join(', ')}]` : ''}`],
      ['replayed', `${r.replayed.outcome}${r.replayed.reasons.length > 0 ? ` [${r.replayed.reasons.map(reasonCode).join(', ')}]` : ''}`],
      ['confirmation', `recorded ${r.recorded.confirmationId ?? '(none)'}, replayed ${r.replayed.confirmationId ?? '(none)'}`],
      ['policy', r.policyVersion],
      ['rebuilt', `${r.dependencies.length} dependencies, ${r.lineage.length} lineage edges, ${r.corroborations.length} corroborations, ${r.confirmations.length} confirmations`],
    ]),
  ];
  if (r.dependencies.length > 0) {
    lines.push(
      table(
        ['memory', 'why', 'lowest authority', 'action authority', 'status', 'origin'],
        r.dependencies.map((d) => {
          const o = r.origins[d.memoryId];
          return [d.memoryId, d.why.join(','), d.lowestAuthority, d.actionAuthority, d.status, o ? `${o.principalId} ${o.sourceRef}` : '(unknown)'];
        }),
      ),
    );
  }
  return lines.join('\n');
}

// ------------------------------------------------------------------ lineage

/**
 * The lineage of `rootId` as an indented tree: the record first, then the inputs it was derived
 * from, recursively down to the roots. A node reached twice (a DAG) is expanded once.
 */
export function formatLineageTree(g: LineageGraph, rootId: string): string {
  const nodes = new Map(g.nodes.map((n) => [n.id, n]));
  const inputs = new Map<string, Array<LineageGraph['edges'][number]>>();
  for (const e of g.edges) inputs.set(e.to, [...(inputs.get(e.to) ?? []), e]);
  const label = (id: string): string => {
    const n = nodes.get(id);
    if (!n) return `${id} (not in this tenant)`;
    return `${n.id} [${n.authority}] ${n.principalId} ${n.sourceRef}${n.status !== 'active' ? ` (${n.status})` : ''} ${JSON.stringify(truncate(n.content, 50))}`;
  };
  const lines = [label(rootId)];
  const expanded = new Set<string>([rootId]);
  const walk = (id: string, prefix: string): void => {
    const es = inputs.get(id) ?? [];
    es.forEach((e, i) => {
      const last = i === es.length - 1;
      const seen = expanded.has(e.from);
      lines.push(`${prefix}${last ? '└─' : '├─'} ${e.transform}/${e.kind}: ${label(e.from)}${seen ? ' (see above)' : ''}`);
      if (!seen) {
        expanded.add(e.from);
        walk(e.from, `${prefix}${last ? '   ' : '│  '}`);
      }
    });
  };
  walk(rootId, '');
  return lines.join('\n');
}

/** Fill colour per authority for DOT output: greens are trusted, red is untrusted. */
export const AUTHORITY_COLORS: Readonly<Record<Authority, string>> = {
  system_policy: '#1b7837',
  user_confirmed: '#5aae61',
  trusted_tool_verified: '#a6dba0',
  model_inferred: '#fdb863',
  external_untrusted: '#e66101',
};

const dotString = (s: string): string => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;

/** The lineage as a Graphviz DOT digraph (input → derived), nodes filled by authority, deleted nodes dashed. */
export function formatLineageDot(g: LineageGraph, rootId: string): string {
  const lines = ['digraph lineage {', '  rankdir=BT;', '  node [shape=box, style=filled, fontname="Helvetica"];'];
  for (const n of g.nodes) {
    const label = `${n.id}\n${n.authority}\n${n.principalId}: ${truncate(n.sourceRef, 40)}${n.status !== 'active' ? `\n(${n.status})` : ''}`;
    const style = n.status === 'deleted' ? 'filled,dashed' : 'filled';
    const pen = n.id === rootId ? ', penwidth=3' : '';
    lines.push(`  ${dotString(n.id)} [label=${dotString(label)}, fillcolor=${dotString(AUTHORITY_COLORS[n.authority])}, style=${dotString(style)}${pen}];`);
  }
  for (const e of g.edges) lines.push(`  ${dotString(e.from)} -> ${dotString(e.to)} [label=${dotString(`${e.transform} (${e.kind})`)}${e.kind === 'declared' ? '' : ', style=dashed'}];`);
  lines.push('}');
  return lines.join('\n');
}
