/**
 * What the server shows an agent (docs/design.md § What the model sees).
 *
 * Every principal token — and every MCP connection — is treated as an agent's: it is shown text
 * only as part of a record it reads (get, search, recall: read-marked in its session) or when that
 * text cannot lower what it read (core/exposure.ts). The admin token is a person's (the
 * dashboard): it sees everything, with who wrote it, and the dashboard displays it as text.
 *
 * - record views: a corroboration's evidence is withheld by the library (`Memory.get`); the admin
 *   gets it back ({@link viewFor}), still flagged `evidenceWithheld` (withheld from agents);
 * - replays: corroboration evidence as in a record view of the dependency; an origin's
 *   `sourceRef` (text its writer chose) only at or above the corroboration floor;
 * - lineage graphs: no node content (an agent reads a record's text with `get`, which marks the
 *   read); a node's `sourceRef` only at or above the floor.
 */
import type { LineageGraph, Memory, RecordView } from '../api/memory.js';
import type { ReplayResult } from '../api/replay.js';
import type { Authority } from '../core/authority.js';
import { MemauthError } from '../core/errors.js';
import { memoryRefId } from '../core/facts.js';
import type { Decision, MemoryRecord, Principal } from '../core/types.js';
import { type CorroborationView, corroborationViews, mayShowText } from '../core/exposure.js';
import { HttpError } from './errors.js';
import { ownRecordIds } from './external-ids.js';
import type { Identity } from './tokens.js';

/** Principal kinds that stand for an agent or a channel (those an MCP connection may be bound to). */
const AGENT_KINDS: ReadonlySet<string> = new Set(['agent', 'tool', 'external']);

/**
 * Refuse an agent's, tool's or external principal's token on a surface that shows every writer's
 * text unread (the audit export: sources, evidence, action arguments; the review queue: other
 * principals' actions and the reviewers' notes). The admin, user and system principals — people
 * and operators — may read them; they are never to be fed to a model.
 * @param why - what makes it an operator's view (in the refusal's message).
 * @throws HttpError `FORBIDDEN` (403) for an agent, tool or external principal.
 */
export function assertReadsEverything(identity: Identity, what: string, why = "it shows every writer's text without a read of it"): void {
  if (identity.kind !== 'principal' || !AGENT_KINDS.has(identity.principal.kind)) return;
  const kind = identity.principal.kind;
  throw new HttpError(403, 'FORBIDDEN', `${kind === 'agent' || kind === 'external' ? 'an' : 'a'} ${kind} principal cannot read ${what}: ${why}; use the admin, a user or a system token`, { kind });
}

/**
 * May this caller be shown records' text (docs/design.md § What the model sees)? An external
 * principal is a source: it writes memory but never reads the tenant's (403 `FORBIDDEN`; its own
 * writes come back in the write's response). An agent or tool is shown text only as a read marked
 * in a session — one the gate counts as context — so a read without `session` is refused (400
 * `INVALID_ARGUMENT`, field `session`), and the unmarked listing is refused outright (403).
 * The admin, user and system principals — people and operators — read freely.
 * @param session the request's session, or `'unmarked'` for a surface that never marks reads.
 * @throws HttpError `FORBIDDEN` (403), `INVALID_ARGUMENT` (400).
 */
export function assertMayRead(identity: Identity, what: string, session: string | undefined | 'unmarked'): void {
  if (identity.kind !== 'principal' || !AGENT_KINDS.has(identity.principal.kind)) return;
  const { kind, id } = identity.principal;
  assertNotExternalReader(kind, what);
  if (session === 'unmarked') assertReadsEverything(identity, what);
  else if (session === undefined) {
    throw new HttpError(
      400,
      'INVALID_ARGUMENT',
      `${what}: ${kind} ${JSON.stringify(id)} reads only in a session (pass \`session\`): an unmarked read would let the text steer a later decision unseen`,
      {
        field: 'session',
      },
    );
  }
}

/**
 * An external principal never reads the tenant's memory ({@link assertMayRead}); MCP tools bound to
 * one call this directly (their reads are always in the connection's session).
 * @throws HttpError `FORBIDDEN` (403) for kind `external`.
 */
export function assertNotExternalReader(kind: string, what: string): void {
  if (kind !== 'external') return;
  throw new HttpError(403, 'FORBIDDEN', `an external principal cannot read ${what}: it is a source that writes memory, not a reader of the tenant's; give a reader an agent principal`, { kind });
}

/**
 * An external principal reads nothing ({@link assertMayRead}), so it may cite — name as a
 * decision's dependency, a derivation's input or a record to delete — only records it wrote
 * itself. A response about another principal's record (which argument values it supplies, its
 * taint sources, its writer) would read it by other means: guessed values in a dry run would
 * learn its words one by one (docs/design.md § What the model sees). Another principal's record
 * and a missing id answer the same (no existence oracle). Any other caller: nothing checked.
 * @param ids - the ids cited, in request order; `field` names where (`dependsOn`, `from`, `id`).
 * @throws HttpError `FORBIDDEN` (403), details `{kind, field, ids}` (the ids it may not cite).
 */
export async function assertCitesOwn(mem: Memory, tenant: string, caller: Pick<Principal, 'id' | 'kind'> | null, ids: readonly string[] | undefined, field: string): Promise<void> {
  if (caller === null || caller.kind !== 'external' || ids === undefined || ids.length === 0) return;
  const own = await ownRecordIds(mem, tenant, caller.id, ids);
  const refused = [...new Set(ids)].filter((id) => !own.has(id));
  if (refused.length === 0) return;
  throw new HttpError(
    403,
    'FORBIDDEN',
    `${field}: an external principal may cite only records it wrote (it reads none of the tenant's memory); not its own or not in the tenant: ${refused.map((id) => JSON.stringify(id)).join(', ')}`,
    { kind: caller.kind, field, ids: refused },
  );
}

/**
 * Did `principal` write record `id` — or is there no such record in the tenant (a tool reads the
 * tenant's memory, so a missing id is left to the operation's own 404)?
 */
async function ownOrMissing(mem: Memory, tenant: string, principal: string, id: string): Promise<boolean> {
  return (await ownRecordIds(mem, tenant, principal, [id])).has(id) || (await mem.driver.getRecords(tenant, [id])).length === 0;
}

/**
 * Check that a tool principal's `memory:` corroboration evidence is a record it wrote. A
 * corroboration's authority is `min(ceiling, the evidence's authority)` (docs/design.md §
 * Corroboration), and nothing checks that a cited record concerns the record vouched for: a tool —
 * a channel, whose own statements the policy does not trust — citing any trusted record of the
 * tenant would cast a trusted vote on anything, and two such tools in different domains would lift
 * an external page to `trusted_tool_verified`. Its own records carry what the policy made of its
 * upstream when it wrote them. Other principals (people, systems, the application) are not checked
 * here; an external principal is refused below the floor anyway.
 * @throws HttpError `FORBIDDEN` (403), details `{kind, field: 'evidence', ids}`.
 */
export async function assertEvidenceOwn(mem: Memory, tenant: string, caller: Pick<Principal, 'id' | 'kind'> | null, evidence: string): Promise<void> {
  const id = memoryRefId(evidence);
  if (caller === null || caller.kind !== 'tool' || id === null || (await ownOrMissing(mem, tenant, caller.id, id))) return;
  const message = `evidence: a tool principal may cite as memory: evidence only records it wrote (another's trusted record says nothing of what it vouches for); not its own: ${JSON.stringify(id)}`;
  throw new HttpError(403, 'FORBIDDEN', message, { kind: caller.kind, field: 'evidence', ids: [id] });
}

/** How many corroborations one tool principal may attach to one record through the server. */
export const CHANNEL_CORROBORATIONS_PER_RECORD = 8;

/**
 * Check that a tool principal has not already attached {@link CHANNEL_CORROBORATIONS_PER_RECORD}
 * corroborations to `recordId`: every read of a record returns and checks all of its
 * corroborations, so one token repeating them would make every reader of the tenant's record pay
 * (a flood of 3,440 made one read return 957 KB). Other principals are not checked here.
 * @throws HttpError `FORBIDDEN` (403), details `{kind, field: 'recordId', limit}`.
 */
export async function assertCorroborationRoom(mem: Memory, tenant: string, caller: Pick<Principal, 'id' | 'kind'> | null, recordId: string): Promise<void> {
  if (caller === null || caller.kind !== 'tool') return;
  const mine = (await mem.driver.corroborationsFor(tenant, [recordId])).filter((c) => c.principalId === caller.id).length;
  if (mine < CHANNEL_CORROBORATIONS_PER_RECORD) return;
  const message = `recordId: a tool principal may attach at most ${CHANNEL_CORROBORATIONS_PER_RECORD} corroborations to one record, and ${caller.id} has attached ${mine} to ${JSON.stringify(recordId)}`;
  throw new HttpError(403, 'FORBIDDEN', message, { kind: caller.kind, field: 'recordId', limit: CHANNEL_CORROBORATIONS_PER_RECORD });
}

/**
 * Check that a channel (an external or tool principal) supersedes only a record it wrote. A
 * version below a record's action authority competes with it (docs/design.md § Memory record), and
 * the gate then answers `conflict` for high actions that depend on it: a channel that could
 * version the tenant's own records could make every payment of a system-of-record fact ask for
 * confirmation, at its write rate, and show its own text as the fact's rival. A channel's
 * contradiction is a new record instead. Other principals are not checked here.
 * @throws HttpError `FORBIDDEN` (403), details `{kind, field: 'id', ids}`; for an external
 *   principal the same answer whether the record exists or not.
 */
export async function assertSupersedesOwn(mem: Memory, tenant: string, caller: Pick<Principal, 'id' | 'kind'> | null, id: string): Promise<void> {
  if (caller === null || caller.kind !== 'tool') return assertCitesOwn(mem, tenant, caller, [id], 'id');
  if (await ownOrMissing(mem, tenant, caller.id, id)) return;
  throw new HttpError(
    403,
    'FORBIDDEN',
    `id: a tool principal may supersede only records it wrote (a version of another's record would compete with it at the gate): write a new record instead; not its own: ${JSON.stringify(id)}`,
    {
      kind: caller.kind,
      field: 'id',
      ids: [id],
    },
  );
}

/**
 * {@link assertNotExternalReader} for an HTTP caller: the tenant's aggregates (its principals, the
 * audit chain's length and head, the metrics) are reads of its memory too — to an attacker they
 * say when an agent acted and whether a planted record steered it.
 * @throws HttpError `FORBIDDEN` (403) for an external principal's token.
 */
export function assertNotExternal(identity: Identity, what: string): void {
  if (identity.kind === 'principal') assertNotExternalReader(identity.principal.kind, what);
}

/** Is this caller a person (the admin token), who may see every text, labelled? */
export const isPerson = (identity: Identity | null): boolean => identity !== null && identity.kind === 'admin';

/**
 * The principal id an agent-kind caller (an agent, tool or external principal's token) acts as,
 * or null for a person or operator (the admin token, a user or system principal), who may see
 * every decision and hash. An MCP connection is always an agent's: pass its principal id.
 */
export const agentOf = (identity: Identity): string | null => (identity.kind === 'principal' && AGENT_KINDS.has(identity.principal.kind) ? identity.principal.id : null);

/**
 * Decisions are not records (docs/design.md § What the model sees): their action type and
 * arguments are text some principal chose, shown without a read mark. An agent sees only the
 * decisions it requested; a person sees every one.
 * @param agent the agent-kind principal asking ({@link agentOf}), or null for a person.
 */
export const decisionVisible = (agent: string | null, d: Decision): boolean => agent === null || d.requester === agent;

/**
 * Check that the caller may see a stored decision: another principal's decision answers exactly
 * like a missing one (no existence oracle).
 * @throws MemauthError `DECISION_NOT_FOUND` (404) — the message `Memory.getDecision` gives for a missing id.
 */
export function assertDecisionVisible(agent: string | null, tenant: string, d: Decision): Decision {
  if (!decisionVisible(agent, d)) throw new MemauthError('DECISION_NOT_FOUND', `no decision ${JSON.stringify(d.id)} in tenant ${JSON.stringify(tenant)}`, { id: d.id });
  return d;
}

/**
 * What an agent sees in place of a deleted record's content hash. The keyed hash of an erased
 * text is an oracle inside the tenant (an agent would write guesses and compare hashes), so it is
 * shown only to people (docs/design.md § Deletion, retention, privacy; § What the model sees).
 */
export const WITHHELD_HASH = 'withheld';

/** A record as the caller may see it: for an agent-kind caller (`agent` true) a deleted record's `contentHash` is {@link WITHHELD_HASH}; people get it whole. */
export function recordFor<R extends MemoryRecord>(agent: boolean, r: R): R {
  return agent && (r.status === 'deleted' || r.content === null) ? { ...r, contentHash: WITHHELD_HASH } : r;
}

const floorOf = (mem: Memory): Authority => mem.policy.document.corroboration.minAuthority;

/**
 * A record view for the caller: as the library made it for an agent; for the admin, with the
 * withheld evidence filled in from the stored rows (only for corroborations the view lists,
 * i.e. rows that match their audit entries).
 */
export async function viewFor(identity: Identity, mem: Memory, tenant: string, view: RecordView): Promise<RecordView> {
  if (!isPerson(identity) || !view.corroborations.some((c) => c.evidenceWithheld)) return view;
  const rows = new Map((await mem.driver.corroborationsFor(tenant, [view.id])).map((c) => [c.id, c.evidenceRef]));
  return { ...view, corroborations: view.corroborations.map((c) => (c.evidenceWithheld ? { ...c, evidenceRef: rows.get(c.id) ?? null } : c)) };
}

/** A lineage graph node as the server returns it: text may be withheld. */
export interface LineageNodeView {
  readonly id: string;
  readonly authority: Authority;
  readonly principalId: string;
  readonly sourceRef: string | null;
  readonly status: string;
  readonly content: string | null;
  /** true when content or sourceRef were withheld from this (agent) caller. */
  readonly withheld: boolean;
}

/** A lineage graph for the caller: the admin sees it whole; an agent gets no node content, and a sourceRef only at or above the floor. */
export function lineageFor(identity: Identity, mem: Memory, g: LineageGraph): { nodes: LineageNodeView[]; edges: LineageGraph['edges'] } {
  if (isPerson(identity)) return { nodes: g.nodes.map((n) => ({ ...n, withheld: false })), edges: g.edges };
  const floor = floorOf(mem);
  const nodes = g.nodes.map((n) => {
    const source = mayShowText(n.authority, floor, floor);
    return { ...n, content: null, sourceRef: source ? n.sourceRef : null, withheld: n.content !== null || !source };
  });
  return { nodes, edges: g.edges };
}

/** A replay as the server returns it: evidence and sources may be withheld. */
export interface ReplayView extends Omit<ReplayResult, 'corroborations' | 'origins'> {
  readonly corroborations: readonly CorroborationView[];
  readonly origins: Readonly<Record<string, { principalId: string; authority: string; sourceRef: string | null }>>;
}

/**
 * A replay for the caller. Each corroboration is flagged as in a record view of the dependency it
 * corroborates; an agent (any principal token, any MCP connection) gets flagged evidence and
 * origin sources below the floor as null; the admin sees the text, still flagged.
 */
export function replayFor(identity: Identity | null, mem: Memory, r: ReplayResult): ReplayView {
  const person = isPerson(identity);
  const floor = floorOf(mem);
  const authorityOf = new Map(r.dependencies.map((d) => [d.memoryId, d.lowestAuthority as Authority]));
  const corroborations = r.corroborations.map((c) => {
    const [v] = corroborationViews([c], authorityOf.get(c.recordId) ?? floor, floor) as [CorroborationView];
    return person ? { ...v, evidenceRef: c.evidenceRef } : v;
  });
  const origins: Record<string, { principalId: string; authority: string; sourceRef: string | null }> = {};
  for (const [id, o] of Object.entries(r.origins)) origins[id] = person || mayShowText(o.authority as Authority, floor, floor) ? o : { ...o, sourceRef: null };
  return { ...r, corroborations, origins };
}
