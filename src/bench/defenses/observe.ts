/**
 * What the bench's baseline defenses may learn about one decision, read from the real store after a
 * run: value attribution, and each baseline's own view. The only bench module that reads the store
 * for the baselines; it never sees the scenario's labels.
 */
import type { Memory } from '../../api/memory.js';
import type { MemoryRecord, Principal } from '../../core/types.js';
import type { ArgumentType } from '../../core/types.js';
import { actionValues, prepareText, suppliersOf } from '../../core/values.js';
import { argumentTypes } from '../../core/policy.js';
import type { ContentView } from './content.js';
import type { IfcView } from './capability.js';
import type { LineageView } from './lineage.js';
import type { ProposedAction, ValueSupport } from './types.js';

/**
 * Everything the baselines may learn about one decision, pulled from the real store (public API
 * and storage driver) after the scenario ran. Each baseline gets only its own view; none gets the
 * scenario's labels (kind, variant, attacker action) — they are never passed to this module.
 */
export interface Observation {
  readonly values: readonly ValueSupport[];
  readonly content: ContentView;
  readonly lineage: LineageView;
  readonly ifc: IfcView;
  /** ids of the items in the agent's context at decision time */
  readonly context: readonly string[];
}

/** Where and when each record was written, from its write/derive audit entry. */
interface WriteEvent {
  readonly seq: number;
  readonly sessionId: string | null;
}

async function writeEvents(mem: Memory, tenant: string): Promise<Map<string, WriteEvent>> {
  const out = new Map<string, WriteEvent>();
  const head = await mem.driver.auditHead(tenant);
  if (!head) return out;
  for (const e of await mem.driver.auditRange(tenant, 1, head.seq)) {
    if (e.op !== 'write' && e.op !== 'derive') continue;
    const p = e.payload as { recordId?: unknown; sessionId?: unknown; refused?: unknown };
    if (p.refused !== undefined || typeof p.recordId !== 'string') continue;
    out.set(p.recordId, { seq: e.seq, sessionId: typeof p.sessionId === 'string' ? p.sessionId : null });
  }
  return out;
}

/**
 * Value-level attribution: for each leaf value of the action's arguments, the context items whose
 * text supplies it and whether the user's turn does (the matching of core/values.ts, the same
 * memauth's gate uses).
 */
export function attributeValues(
  action: ProposedAction,
  items: ReadonlyArray<{ id: string; text: string }>,
  userTurn: string | null,
  types: Readonly<Record<string, ArgumentType>> = {},
): ValueSupport[] {
  const texts = items.map((x) => prepareText(x.text));
  if (userTurn !== null) texts.push(prepareText(userTurn));
  const values = actionValues(action, types);
  const { byValue } = suppliersOf(values, texts);
  return values.map((v, i) => {
    const hits = byValue[i] as number[];
    return {
      argument: v.argument,
      value: v.value,
      supportIds: hits
        .filter((h) => h < items.length)
        .map((h) => (items[h] as { id: string }).id)
        .sort(),
      userTurn: userTurn !== null && hits.includes(items.length),
    };
  });
}

/**
 * Build the baselines' views of a decision in `session` from the store.
 *
 * - context: records read in the session (search/get), records written in it (the agent's notes,
 *   tool results) and the declared dependencies — active ones with content;
 * - `content`: their texts; per argument, how many active records in the store assert the value;
 * - `lineage`: declared derivation edges (`derivedFrom` of kind `declared`) and the writer class of
 *   each record (external principal = untrusted source; any other = trusted) — not memauth's
 *   session/echo inference, not its source rules;
 * - `capability_ifc`: records written in the session by a tool principal (tool output read in the
 *   session), and records the agent wrote in it after such output (the session context label).
 */
export async function observe(mem: Memory, params: { tenant: string; session: string; action: ProposedAction; userTurn: string | null; declared?: readonly string[] }): Promise<Observation> {
  const { tenant, session, action } = params;
  const all: MemoryRecord[] = [];
  for (let offset = 0; ; offset += 1000) {
    const page = await mem.list({ tenant, includeDeleted: true, limit: 1000, offset });
    all.push(...page);
    if (page.length < 1000) break;
  }
  const byId = new Map(all.map((r) => [r.id, r]));
  const principals = new Map<string, Principal>((await mem.listPrincipals({ tenant })).map((p) => [p.id, p]));
  const events = await writeEvents(mem, tenant);
  const reads = await mem.driver.sessionReads(tenant, session);
  const writtenHere = all.filter((r) => events.get(r.id)?.sessionId === session).map((r) => r.id);
  const contextIds = [...new Set([...reads, ...writtenHere, ...(params.declared ?? [])])].filter((id) => {
    const r = byId.get(id);
    return r !== undefined && r.status === 'active' && r.content !== null;
  });
  const items = contextIds.map((id) => ({ id, text: (byId.get(id) as MemoryRecord).content as string }));
  const types = argumentTypes(mem.policy, action.type);
  const values = attributeValues(action, items, params.userTurn, types);

  // content: texts, and per argument the number of active items in the store asserting the value
  const activeItems = all.filter((r) => r.status === 'active' && r.content !== null).map((r) => ({ id: r.id, text: r.content as string }));
  const storeWide = attributeValues(action, activeItems, null, types);
  const assertingItems = new Map(storeWide.map((v) => [v.argument, v.supportIds.length]));
  const content: ContentView = { texts: new Map(items.map((x) => [x.id, x.text])), assertingItems };

  // lineage: declared edges and the writer class of every record
  const lineage: LineageView = {
    nodes: new Map(
      all.map((r) => [
        r.id,
        {
          parents: r.derivedFrom.filter((e) => e.kind === 'declared').map((e) => e.from),
          writer: principals.get(r.origin.principalId)?.kind === 'external' ? 'untrusted' : 'trusted',
        } as const,
      ]),
    ),
  };

  // capability_ifc: tool output in this session taints; so does what the agent writes after it
  const inSession = writtenHere
    .map((id) => ({ id, seq: (events.get(id) as WriteEvent).seq, kind: principals.get((byId.get(id) as MemoryRecord).origin.principalId)?.kind }))
    .sort((a, b) => a.seq - b.seq);
  const tainted = new Set<string>();
  let firstToolSeq = Number.POSITIVE_INFINITY;
  for (const x of inSession) {
    if (x.kind === 'tool' || x.kind === 'external') {
      tainted.add(x.id);
      firstToolSeq = Math.min(firstToolSeq, x.seq);
    } else if (x.kind === 'agent' && x.seq > firstToolSeq) tainted.add(x.id);
  }
  return { values, content, lineage, ifc: { tainted }, context: contextIds };
}
