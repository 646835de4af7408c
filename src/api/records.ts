/**
 * The record operations of the facade (docs/design.md § Principals and origin, § Derivation and
 * taint, § What the model sees): write, derive, get, list and the lineage graph, with the
 * session reads they mark (search: ./search.ts). Each takes the facade's {@link OpContext}; `Memory` in memory.ts holds
 * their documentation. Imports from src/core, src/store's port, and api/ modules below the facade.
 */
import { type Authority, atLeast, minAuthority } from '../core/authority.js';
import { checkClaims, checkDerivedClaims, hashedBody } from '../core/claims.js';
import { contentHashOf, newContentKey } from '../core/content-hash.js';
import { derivedTaint, provesNarrowInputs, writeTaint } from '../core/derivation.js';
import { MemauthError } from '../core/errors.js';
import { corroborationViews } from '../core/exposure.js';
import { corroborationOf } from '../core/facts.js';
import { originAuthority, selfSource } from '../core/policy.js';
import { foldTaint } from '../core/session.js';
import type { Claim, DerivationEdge, MemoryRecord, Principal, SessionRef, Taint, Transform, VersionLink } from '../core/types.js';
import type { StorageDriver, StorageTx } from '../store/driver.js';
import { type In, type OpContext, appendAudit, newId, nowOf, startTiming, transact } from './context.js';
import { type StoreOptions, runBeforeRecord } from './options.js';
import { Refusal, principalIn, refusing } from './refusals.js';
import { type JoinedSession, appendReads, enterSession, joinSession, readInSession } from './sessions.js';
import { parseInput, schemas } from './validation.js';
import { type Judge, chainIdOf, currentFor, loadChains, onlyCurrent, versionsView } from './versions.js';
import type { LineageGraph, RecordView, WriteResult } from './views.js';

/** What a new record is made of, besides its inputs (see {@link insertNew}). */
export interface NewRecord {
  tenant: string;
  scope: string;
  content: string;
  principal: Principal;
  sourceRef: string;
  origin: Authority;
  writtenAt: string;
  expiresAt: string | null;
  reason: string;
  /** the session and the head of its read log before this write (null: nothing read yet). */
  session: JoinedSession | undefined;
  /** the writer's typed claims (checked; empty: none). */
  claims: readonly Claim[];
  /** a version written by supersede: its chain and the version it replaces (core/versions.ts). */
  version?: VersionLink;
}

/**
 * The session context a new record takes (docs/design.md § Derivation and taint): the summary of
 * every record read before it, referred to by the log's prefix — only when one of them is not
 * already a declared or echo input (`covered`: how many of the log's records are); else none.
 */
export function contextOf(base: NewRecord, covered: number, transform: Transform): { summary: Taint; ref: SessionRef } | null {
  const head = base.session?.head ?? null;
  if (head === null || head.ord <= covered) return null;
  return { summary: head.summary, ref: { sessionId: (base.session as JoinedSession).id, length: head.ord, hash: head.hash, transform } };
}

/** `t` with `channels` added too. */
const withChannels = (t: Taint, channels: readonly Taint['channels'][number][]): Taint => ({ ...t, channels: [...new Set([...t.channels, ...channels])].sort() });

/** What one derivation edge's row and index entries take on disk, about (bytes). */
const EDGE_ROW_BYTES = 200;

/** What a new record stores besides its content and claims: its entry's payload, the same metadata on its row, and in a session the log row it appends (bytes). */
function metadataBytes(payload: object, base: NewRecord, taint: Taint): number {
  const logRow = base.session === undefined ? 0 : 200 + Buffer.byteLength(JSON.stringify(foldTaint(base.session.head?.summary ?? null, taint)), 'utf8');
  // each derivation edge is also a row of its own, with its index entries
  const edges = (payload as { derivedFrom?: readonly unknown[] }).derivedFrom?.length ?? 0;
  return 2 * Buffer.byteLength(JSON.stringify(payload), 'utf8') + logRow + EDGE_ROW_BYTES * edges;
}

/** The taint of a new record: its own origin's for a plain write, else derived from its edges and session context (core/derivation.ts). */
function newTaint(
  op: 'write' | 'derive',
  base: NewRecord,
  origin: MemoryRecord['origin'],
  edges: readonly DerivationEdge[],
  inputs: Map<string, MemoryRecord>,
  sourceAt: string,
  transform: DerivationEdge['transform'],
  context: { summary: Taint; ref: SessionRef } | null,
): Taint {
  const own = writeTaint({ writer: base.principal, origin, sourceAt });
  if (edges.length === 0 && context === null && op === 'write') return own;
  const session = context === null ? null : { summary: context.summary, undeclared: true };
  return withChannels(derivedTaint({ writer: base.principal, writerAuthority: base.origin, sourceRef: base.sourceRef, sourceAt, transform, edges, inputs, context: session }), own.channels);
}

/**
 * Inside a transaction: build, audit and insert a new record derived along `edges` from `inputs`
 * and, with `context`, from the session's reads (one reference, see {@link contextOf}).
 */
export async function insertNew(
  ctx: OpContext,
  tx: StorageTx,
  op: 'write' | 'derive',
  base: NewRecord,
  edges: DerivationEdge[],
  inputs: Map<string, MemoryRecord>,
  sourceAt: string,
  transform: DerivationEdge['transform'],
  context: { summary: Taint; ref: SessionRef } | null,
  options: StoreOptions = {},
): Promise<MemoryRecord> {
  const id = newId('mem');
  const origin = { authority: base.origin, principalId: base.principal.id, sourceRef: base.sourceRef, writtenAt: base.writtenAt };
  inputs = await ctx.provenance.untrustForged(tx, base.tenant, inputs);
  const taint = newTaint(op, base, origin, edges, inputs, sourceAt, transform, context);
  const sessionContext = { ...(context === null ? {} : { sessionContext: context.ref }), ...(base.version === undefined ? {} : { version: base.version }) }; // in the entry and on the row alike
  const contentHash = contentHashOf(hashedBody(base.content, base.claims), await tx.ensureTenantContentKey(base.tenant, newContentKey, base.writtenAt));
  const claimed = base.claims.length > 0 ? { claimCount: base.claims.length } : {}; // their count only: the hash covers the values, which delete erases
  const payload = {
    recordId: id,
    scope: base.scope,
    contentHash,
    origin,
    taint,
    derivedFrom: edges,
    ...sessionContext,
    ...claimed,
    expiresAt: base.expiresAt,
    createdAt: base.writtenAt,
    writeReason: base.reason,
    sessionId: base.session?.id ?? null,
    at: base.writtenAt,
  };
  runBeforeRecord(options, () => metadataBytes(payload, base, taint));
  const entry = await appendAudit(ctx, tx, base.tenant, op, payload);
  const record: MemoryRecord = {
    formatVersion: 1,
    id,
    tenant: base.tenant,
    scope: base.scope,
    content: base.content,
    contentHash,
    createdAt: base.writtenAt,
    expiresAt: base.expiresAt,
    origin,
    derivedFrom: edges,
    ...sessionContext,
    ...(base.claims.length > 0 ? { claims: base.claims } : {}),
    taint,
    audit: { policyVersion: ctx.policy.version, writeReason: base.reason, seq: entry.seq },
    status: 'active',
  };
  await tx.insertRecord(record);
  ctx.provenance.markVerified(record);
  // what is written in a session is in that session's context from now on
  if (base.session !== undefined) await appendReads(ctx.provenance, tx, base.tenant, base.session.id, base.session.head, [record.id], base.writtenAt);
  return record;
}

/**
 * {@link Memory.write}: a record whose origin the store decides; recalled text echoed back resolves to the original.
 * @param onWritten - called with the new record once it is inserted, inside the still-open transaction (indexing starts there).
 */
export async function write(ctx: OpContext, input: In<'write'>, onWritten?: (record: MemoryRecord) => void, options?: StoreOptions): Promise<WriteResult> {
  const t0 = startTiming(ctx);
  const a = parseInput(schemas.write, input, 'write');
  const now = nowOf(ctx);
  if (a.sourceAt !== undefined && new Date(a.sourceAt).toISOString() > now) throw new MemauthError('INVALID_ARGUMENT', 'write: sourceAt is in the future', { field: 'sourceAt' });
  if (a.expiresAt !== undefined && new Date(a.expiresAt).toISOString() <= now) throw new MemauthError('INVALID_ARGUMENT', 'write: expiresAt is not in the future', { field: 'expiresAt' });
  return refusing(ctx, a.tenant, 'write', () =>
    transact(ctx, a.tenant, 'write', t0, async (tx, mark) => {
      const p = await principalIn(ctx, tx, a.tenant, a.principal);
      if (a.authority !== undefined && !atLeast(p.maxAuthority, a.authority)) {
        throw new Refusal(
          { principalId: p.id, claimedAuthority: a.authority },
          new MemauthError('AUTHORITY_EXCEEDS_PRINCIPAL', `principal ${p.id} (${p.kind}) can write at most ${p.maxAuthority}; it claimed ${a.authority}`, {
            principal: p.id,
            ceiling: p.maxAuthority,
            claimed: a.authority,
          }),
        );
      }
      const sourceRef = sourceRefOf(a.source, p.id);
      let origin = originAuthority(ctx.policy, sourceRef, p);
      if (a.authority !== undefined) origin = minAuthority(origin, a.authority);
      const session = await enterSession(ctx.provenance, tx, a.tenant, a.session, a.requester ?? null, now);
      const { exact, contained } = await ctx.provenance.echoes.find(tx, a.tenant, a.session, session?.head ?? null, a.content);
      if (exact) {
        await appendAudit(ctx, tx, a.tenant, 'write', {
          refused: 'RECALL_ECHO',
          echoOf: exact.id,
          principalId: p.id,
          sourceRef,
          contentHash: contentHashOf(a.content, await tx.ensureTenantContentKey(a.tenant, newContentKey, now)),
          sessionId: a.session ?? null,
          at: now,
        });
        return { record: exact, created: false, echoOf: exact.id };
      }
      const edges: DerivationEdge[] = contained.map((r) => ({ from: r.id, transform: 'import', kind: 'echo' }));
      const inputs = new Map(contained.map((r) => [r.id, r]));
      const sourceAt = a.sourceAt !== undefined ? new Date(a.sourceAt).toISOString() : now;
      const expiresAt = a.expiresAt !== undefined ? new Date(a.expiresAt).toISOString() : null;
      const claims = checkClaims(a.claims ?? [], 'write');
      const base: NewRecord = { tenant: a.tenant, scope: a.scope, content: a.content, principal: p, sourceRef, origin, writtenAt: now, expiresAt, reason: a.reason ?? 'write', session, claims };
      // an agent's write derives from everything read in its session (the echoes are among them)
      const context = p.kind === 'agent' ? contextOf(base, contained.length, 'rewrite') : null;
      const record = await insertNew(ctx, tx, 'write', base, edges, inputs, sourceAt, 'rewrite', context, options);
      onWritten?.(record);
      mark('written');
      return { record, created: true, echoOf: null };
    }),
  );
}

/** {@link Memory.derive}: a new record whose taint is the minimum over its declared and session inputs. */
export async function derive(ctx: OpContext, input: In<'derive'>, options?: StoreOptions): Promise<MemoryRecord> {
  const t0 = startTiming(ctx);
  const a = parseInput(schemas.derive, input, 'derive');
  const now = nowOf(ctx);
  if (a.expiresAt !== undefined && new Date(a.expiresAt).toISOString() <= now) throw new MemauthError('INVALID_ARGUMENT', 'derive: expiresAt is not in the future', { field: 'expiresAt' });
  return refusing(ctx, a.tenant, 'derive', () =>
    transact(ctx, a.tenant, 'derive', t0, async (tx, mark) => {
      const p = await principalIn(ctx, tx, a.tenant, a.principal);
      const sourceRef = sourceRefOf(a.source, p.id);
      const origin = originAuthority(ctx.policy, sourceRef, p);
      const fromIds = [...new Set(a.from)];
      const declared = await tx.getRecords(a.tenant, fromIds);
      const found = new Set(declared.map((r) => r.id));
      const missing = fromIds.filter((id) => !found.has(id));
      if (missing.length > 0)
        throw new MemauthError('RECORD_NOT_FOUND', `derive: no record ${missing.map((m) => JSON.stringify(m)).join(', ')} in tenant ${JSON.stringify(a.tenant)}`, { ids: missing });
      const session = await enterSession(ctx.provenance, tx, a.tenant, a.session, a.requester ?? null, now);
      const narrowed = a.narrowInputs === true && provesNarrowInputs(a.content, declared);
      const edges: DerivationEdge[] = declared.map((r) => ({ from: r.id, transform: a.transform, kind: 'declared' }));
      const inputs = new Map(declared.map((r) => [r.id, r]));
      // the declared inputs read in the session are no undeclared input
      const covered = session?.head == null || narrowed ? 0 : (await tx.sessionLogHas(a.tenant, session.id, fromIds)).size;
      const scope = a.scope ?? declared[0]?.scope;
      if (scope === undefined) throw new MemauthError('SCOPE_REQUIRED', 'derive: a scope is required when there are no declared inputs', { field: 'scope' });
      const expiresAt = a.expiresAt !== undefined ? new Date(a.expiresAt).toISOString() : null;
      const claims = derivedClaims(a.claims ?? [], declared);
      const base: NewRecord = { tenant: a.tenant, scope, content: a.content, principal: p, sourceRef, origin, writtenAt: now, expiresAt, reason: a.reason ?? a.transform, session, claims };
      const context = narrowed ? null : contextOf(base, covered, a.transform);
      const record = await insertNew(ctx, tx, 'derive', base, edges, inputs, now, a.transform, context, options);
      mark('written');
      return record;
    }),
  );
}

/**
 * A derivation's claims, checked ({@link checkClaims}) and each restating a claim of a declared
 * input (core/claims.ts `checkDerivedClaims`).
 * @throws MemauthError `CLAIM_INVALID`, `CLAIM_NOT_IN_INPUTS`.
 */
function derivedClaims(given: readonly Claim[], declared: readonly MemoryRecord[]): Claim[] {
  const claims = checkClaims(given, 'derive');
  checkDerivedClaims(
    claims,
    declared.map((r) => r.claims),
  );
  return claims;
}

/** Mark `ids` read in `session` (joining it first: a session is used only by its owner). */
export async function markRead(ctx: OpContext, tenant: string, session: string | undefined, ids: string[], requester: string | null): Promise<void> {
  if (session === undefined) return;
  const now = nowOf(ctx);
  await ctx.store.transaction(tenant, async (tx) => {
    // checked even when nothing is read: a session is used only by its owner
    await joinSession(tx, tenant, session, requester, now);
    if (ids.length > 0) await readInSession(ctx.provenance, tx, tenant, session, ids, now);
  });
}

/**
 * {@link Memory.get}: one record's view — by default the current version of its chain (with the
 * chain's `versions`; `exact` for the record asked for) — marked read in the session when active,
 * with every current version whose content the view shows.
 */
export async function get(ctx: OpContext, input: In<'get'>): Promise<RecordView> {
  const a = parseInput(schemas.get, input, 'get');
  const [asked] = await ctx.driver.getRecords(a.tenant, [a.id]);
  if (!asked) throw new MemauthError('RECORD_NOT_FOUND', `no record ${JSON.stringify(a.id)} in tenant ${JSON.stringify(a.tenant)}`, { id: a.id, tenant: a.tenant });
  const chains = await loadChains(ctx.driver, a.tenant, [asked], viewJudge(ctx, a.tenant));
  const chain = chains.get(chainIdOf(asked));
  const id = a.exact === true ? asked.id : currentFor(asked, chains);
  const rec = chain?.versions.find((r) => r.id === id) ?? asked;
  const shown = [...new Set([...(rec.status === 'active' ? [rec.id] : []), ...(chain?.state.current ?? [])])];
  await markRead(ctx, a.tenant, a.session, shown, a.requester ?? null);
  const view = (await views(ctx, a.tenant, [rec]))[0] as RecordView;
  return chain === undefined ? view : { ...view, versions: versionsView(chain) };
}

/** Judges records as reads show them (their views now) for the version rule (api/versions.ts). */
export function viewJudge(ctx: OpContext, tenant: string): Judge {
  return async (recs) => {
    const verified = await ctx.provenance.verifiedRecords(ctx.driver, tenant, recs);
    return new Map((await views(ctx, tenant, recs)).map((v) => [v.id, { actionAuthority: v.actionAuthority, status: v.status, verified: verified.has(v.id) }]));
  };
}

/**
 * Views of records, a page at a time: the facts of all of them are loaded together (a constant
 * number of batched store reads per page, whatever its size). A corroboration's evidence is shown only when it cannot lower the record it
 * is shown with (core/exposure.ts): otherwise `evidenceRef: null, evidenceWithheld: true`
 * (docs/design.md § What the model sees).
 */
export async function views(ctx: OpContext, tenant: string, recs: MemoryRecord[]): Promise<RecordView[]> {
  const now = nowOf(ctx);
  const { k, minAuthority: floor } = ctx.policy.document.corroboration;
  const bundle = await ctx.provenance.factsBundle(
    ctx.driver,
    tenant,
    recs.map((r) => r.id),
    floor,
  );
  return recs.map((r) => {
    const c = corroborationOf(r.id, bundle.bundle, k, floor, now);
    const deletedSources = [...bundle.lineageOf(r.id)].filter((id) => bundle.bundle.records.get(id)?.status === 'deleted');
    const status = r.status === 'active' && r.expiresAt !== null && r.expiresAt <= now ? 'expired' : r.status;
    // a row that does not match its audit entry (forged outside the API) has no authority, as at the gate
    const actionAuthority = bundle.bundle.records.get(r.id)?.verified === true ? c.actionAuthority : 'external_untrusted';
    const corroborations = corroborationViews(bundle.bundle.corroborations.get(r.id) ?? [], r.taint.lowestAuthority, floor);
    return { ...r, status, actionAuthority, corroborations, deletedSources };
  });
}

/** {@link Memory.list}: records of a tenant, newest first; only current versions unless `allVersions`. */
export async function list(ctx: OpContext, input: In<'list'>): Promise<MemoryRecord[]> {
  const a = parseInput(schemas.list, input, 'list');
  const recs = await ctx.driver.listRecords(a.tenant, { scope: a.scope, limit: a.limit ?? 100, offset: a.offset, includeDeleted: a.includeDeleted });
  if (a.allVersions === true) return recs;
  return onlyCurrent(recs, await loadChains(ctx.driver, a.tenant, recs, viewJudge(ctx, a.tenant)));
}

/** {@link Memory.lineageGraph}: a record's lineage down to its roots as nodes and edges. */
export async function lineageGraph(ctx: OpContext, input: In<'get'>): Promise<LineageGraph> {
  const a = parseInput(schemas.get, input, 'lineageGraph');
  const lineage = await ctx.driver.lineage(a.tenant, [a.id]);
  if (!lineage.has(a.id)) throw new MemauthError('RECORD_NOT_FOUND', `no record ${JSON.stringify(a.id)} in tenant ${JSON.stringify(a.tenant)}`, { id: a.id });
  const recs = await ctx.driver.getRecords(a.tenant, [...lineage.keys()]);
  return {
    nodes: recs.map((r) => ({ id: r.id, authority: r.taint.lowestAuthority, principalId: r.origin.principalId, sourceRef: r.origin.sourceRef, status: r.status, content: r.content })),
    edges: [...lineage.entries()].flatMap(([to, es]) => es.map((e) => ({ from: e.from, to, transform: e.transform, kind: e.kind }))),
  };
}

/**
 * The record's source reference: `source` as given, or `principal:<writer>` (the writer speaking
 * for itself). `principal:<id>` names a principal speaking for itself (docs/design.md § Principals
 * and origin), so only that principal may give it: another writer's record would otherwise show
 * as that principal's own statement.
 * @throws Refusal (logged by `refusing`) of `INVALID_ARGUMENT` (field `source`) for `principal:<another id>`.
 */
export function sourceRefOf(source: string | undefined, writer: string): string {
  const self = selfSource(writer);
  if (source === undefined) return self;
  // compared as a person would read it: any case, full-width colon, spaces and invisible characters around
  if (
    source
      .normalize('NFKC')
      .replace(/\p{Cf}/gu, '')
      .trim()
      .toLowerCase()
      .startsWith(selfSource('')) &&
    source !== self
  )
    throw new Refusal(
      { principalId: writer, claimedSource: source },
      new MemauthError(
        'INVALID_ARGUMENT',
        `source ${JSON.stringify(source)} names another principal speaking for itself; only that principal may use it. Name where the text came from (a URL, a system) instead`,
        {
          field: 'source',
        },
      ),
    );
  return source;
}
