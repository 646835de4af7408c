/**
 * The reads both SQL drivers share (the {@link StorageReader} port over the statements of
 * ./statements.ts), and the transaction writes on top of them ({@link SqlTx}). A driver supplies
 * how a statement runs ({@link SqlExecutor}) and what only its engine does ({@link NativeReads}:
 * full-text search, lineage).
 *
 * May import: core, ../driver.js, ../rows.js, ./dialect.js, ./statements.js.
 */
import type { AuditEntry, AuditOp, Checkpoint } from '../../core/audit.js';
import { ADMIN_CHAIN } from '../../core/identity.js';
import type { SessionLogEntry } from '../../core/session.js';
import type { Confirmation, Corroboration, Decision, DerivationEdge, EdgeKind, MemoryRecord, Principal, Tier, Transform } from '../../core/types.js';
import type { ListRecordsOptions, QueuedDecisionCount, QueuedDecisionsQuery, RequesterSide, ReviewNoteRow, SearchHit, StorageReader, SurfaceCounts, SurfaceQuery, TokenRow } from '../driver.js';
import { type Row, byAtThenId, str, toAudit, toCheckpoint, toConfirmation, toCorroboration, toPrincipal, toRecord, toLogEntry, toReviewNote, toToken, withSessionLineage } from '../rows.js';
import { type Dialect, type Stmt, chunks } from './dialect.js';
import * as S from './statements.js';
import { surfaceCounts } from './surfaces.js';

/**
 * Records built from row objects, by row object. A driver's executor hands out the same row
 * object again only for a read it answers from memory (PostgreSQL's group-commit batch,
 * ../postgres/batch-exec.ts: until a statement that could change the row), so the facade gets the
 * same record object back and its memos per record object (verified against the audit entry,
 * prepared text, gate facts) hold for the rest of the batch. Derivation edges never change.
 */
const BUILT = new WeakMap<Row, MemoryRecord>();

/** How a driver runs statements. */
export interface SqlExecutor {
  /** The rows of one statement. */
  all(s: Stmt): Row[] | Promise<Row[]>;
  /** Run statements in order as one step (SQLite: synchronously, nothing of another caller in between). */
  run(stmts: ReadonlyArray<Stmt | null>): void | Promise<void>;
}

/** The reads only the engine knows how to make. */
export interface NativeReads {
  /** Full-text search (see {@link StorageReader.search}); `r` turns record rows into records. */
  search(r: SqlReader, tenant: string, scope: string, query: string, limit: number, now: string): Promise<SearchHit[]>;
  /** Every derivation edge upward from `ids` (see {@link StorageReader.lineage}). */
  lineage(r: SqlReader, tenant: string, ids: readonly string[]): Promise<Map<string, DerivationEdge[]>>;
}

const byId = (a: Row, b: Row): number => (str(a.id) < str(b.id) ? -1 : str(a.id) > str(b.id) ? 1 : 0);

/** {@link StorageReader} over shared statements: the drivers' reads outside transactions, and the base of {@link SqlTx}. */
export class SqlReader implements StorageReader {
  constructor(
    protected readonly exec: SqlExecutor,
    readonly dialect: Dialect,
    protected readonly native: NativeReads,
  ) {}

  /** Overridden by a transaction to refuse use after it ended. */
  protected check(): void {}

  /** The rows of one statement (for the driver's native reads). */
  async rows(s: Stmt): Promise<Row[]> {
    this.check();
    return this.exec.all(s);
  }

  private async one(s: Stmt): Promise<Row | undefined> {
    return (await this.rows(s))[0];
  }

  /**
   * Rows of `records` as records, with their derivation edges (for the driver's native reads). A
   * row object seen before gives the record built from it then (see {@link BUILT}), without
   * reading its edges again.
   */
  async recordsFromRows(rows: Row[], now?: string): Promise<MemoryRecord[]> {
    const ids = rows.filter((r) => !BUILT.has(r)).map((r) => str(r.id));
    const edges = new Map<string, DerivationEdge[]>(ids.map((id) => [id, []]));
    if (ids.length > 0) {
      for (const chunk of chunks(ids, this.dialect.inListMax)) {
        for (const r of await this.rows(S.derivationsOf(this.dialect, chunk))) {
          edges.get(str(r.record_id))?.push({ from: str(r.from_id), transform: str(r.transform) as Transform, kind: str(r.kind) as EdgeKind });
        }
      }
    }
    return rows.map((r) => {
      const known = BUILT.get(r);
      if (known !== undefined) return known;
      const rec = toRecord(r, edges.get(str(r.id)) ?? [], now);
      // a record that never expires reads the same at any `now`
      if (rec.expiresAt === null) BUILT.set(r, Object.freeze(rec));
      return rec;
    });
  }

  /** The rows of one statement per chunk of `ids`, concatenated. */
  private async chunked(ids: readonly string[], stmt: (chunk: readonly string[]) => Stmt): Promise<{ rows: Row[]; parts: number }> {
    const parts = chunks(ids, this.dialect.inListMax);
    const rows: Row[] = [];
    for (const chunk of parts) rows.push(...(await this.rows(stmt(chunk))));
    return { rows, parts: parts.length };
  }

  async getPolicyText(version: string): Promise<string | null> {
    const r = await this.one(S.policyText(this.dialect, version));
    return r ? str(r.text) : null;
  }

  async getPrincipal(tenant: string, id: string): Promise<Principal | null> {
    const r = await this.one(S.principal(this.dialect, tenant, id));
    return r ? toPrincipal(r) : null;
  }

  async listPrincipals(tenant: string): Promise<Principal[]> {
    return (await this.rows(S.principals(this.dialect, tenant))).map(toPrincipal);
  }

  async getRecords(tenant: string, ids: readonly string[]): Promise<MemoryRecord[]> {
    if (ids.length === 0) return [];
    const { rows, parts } = await this.chunked(ids, (chunk) => S.recordsById(this.dialect, tenant, chunk));
    // by id across chunks, like one statement
    if (parts > 1) rows.sort(byId);
    return this.recordsFromRows(rows);
  }

  async listRecords(tenant: string, opts: ListRecordsOptions): Promise<MemoryRecord[]> {
    return this.recordsFromRows(await this.rows(S.listRecords(this.dialect, tenant, opts)));
  }

  async listRecordsAfter(tenant: string, afterId: string | null, limit: number): Promise<MemoryRecord[]> {
    return this.recordsFromRows(await this.rows(S.recordsAfter(this.dialect, tenant, afterId, limit)));
  }

  search(tenant: string, scope: string, query: string, limit: number, now: string): Promise<SearchHit[]> {
    this.check();
    return this.native.search(this, tenant, scope, query, limit, now);
  }

  lineage(tenant: string, ids: readonly string[]): Promise<Map<string, DerivationEdge[]>> {
    this.check();
    return withSessionLineage(
      (batch) => this.native.lineage(this, tenant, batch),
      (batch) => this.getRecords(tenant, batch),
      (lengths) => this.sessionLogPrefixes(tenant, lengths),
      ids,
    );
  }

  async corroborationsFor(tenant: string, recordIds: readonly string[]): Promise<Corroboration[]> {
    if (recordIds.length === 0) return [];
    const { rows, parts } = await this.chunked(recordIds, (chunk) => S.corroborations(this.dialect, tenant, chunk));
    const out = rows.map(toCorroboration);
    // by time then id across chunks, like one statement
    return parts > 1 ? out.sort(byAtThenId) : out;
  }

  async getConfirmation(tenant: string, id: string): Promise<Confirmation | null> {
    const r = await this.one(S.confirmation(this.dialect, tenant, id));
    return r ? toConfirmation(r) : null;
  }

  async listConfirmations(tenant: string, actionType: string, argsHash: string, now: string): Promise<Confirmation[]> {
    return (await this.rows(S.confirmations(this.dialect, tenant, actionType, argsHash, now))).map(toConfirmation);
  }

  async confirmationUses(tenant: string, ids: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const id of ids) out.set(id, 0);
    if (out.size === 0) return out;
    const { rows } = await this.chunked([...out.keys()], (chunk) => S.confirmationUseCounts(this.dialect, tenant, chunk));
    for (const r of rows) out.set(str(r.confirmation_id), Number(r.n));
    return out;
  }

  async sessionExists(tenant: string, sessionId: string): Promise<boolean> {
    return (await this.one(S.session(this.dialect, tenant, sessionId))) !== undefined;
  }

  async sessionOwner(tenant: string, sessionId: string): Promise<{ owner: string | null } | null> {
    const r = await this.one(S.session(this.dialect, tenant, sessionId));
    return r === undefined ? null : { owner: r.owner === null ? null : str(r.owner) };
  }

  async sessionReads(tenant: string, sessionId: string): Promise<string[]> {
    const log = (await this.sessionLogPrefixes(tenant, new Map([[sessionId, 2_147_483_647]]))).get(sessionId) ?? [];
    if (log.length > 0) return log;
    return (await this.rows(S.sessionReads(this.dialect, tenant, sessionId))).map((r) => str(r.record_id));
  }

  async sessionLogHead(tenant: string, sessionId: string): Promise<SessionLogEntry | null> {
    const r = await this.one(S.sessionLogHead(this.dialect, tenant, sessionId));
    return r === undefined ? null : toLogEntry(r);
  }

  async sessionLogAfter(tenant: string, after: { sessionId: string; ord: number } | null, limit: number): Promise<Array<SessionLogEntry & { sessionId: string }>> {
    const rows = await this.rows(S.sessionLogAfter(this.dialect, tenant, after?.sessionId ?? '', after?.ord ?? 0, limit));
    return rows.map((r) => ({ sessionId: str(r.session_id), ...toLogEntry(r) }));
  }

  async sessionLogPrefixes(tenant: string, lengths: ReadonlyMap<string, number>): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>([...lengths.keys()].map((s) => [s, []]));
    if (lengths.size === 0) return out;
    const longest = Math.max(...lengths.values());
    for (const r of (await this.chunked([...lengths.keys()], (chunk) => S.sessionLogIds(this.dialect, tenant, chunk, longest))).rows) {
      const ids = out.get(str(r.session_id)) as string[];
      if (ids.length < (lengths.get(str(r.session_id)) ?? 0)) ids.push(str(r.record_id));
    }
    return out;
  }

  async versionIds(tenant: string, chains: readonly string[]): Promise<string[]> {
    if (chains.length === 0) return [];
    return (await this.chunked(chains, (chunk) => S.versionIds(this.dialect, tenant, chunk))).rows.map((r) => str(r.id));
  }

  async sessionLogHas(tenant: string, sessionId: string, ids: readonly string[]): Promise<Set<string>> {
    const out = new Set<string>();
    if (ids.length === 0) return out;
    for (const r of (await this.chunked(ids, (chunk) => S.sessionLogHas(this.dialect, tenant, sessionId, chunk))).rows) out.add(str(r.record_id));
    return out;
  }

  async getDecision(tenant: string, id: string): Promise<Decision | null> {
    const r = await this.one(S.decision(this.dialect, tenant, id));
    return r ? (JSON.parse(str(r.body)) as Decision) : null;
  }

  async allowedInSession(tenant: string, sessionId: string, actionType: string): Promise<Decision | null> {
    for (const r of await this.rows(S.allowedInSession(this.dialect, tenant, sessionId, actionType))) {
      const d = JSON.parse(str(r.body)) as Decision;
      if (r.action_type !== null || d.action.type === actionType || d.contextWaived === true) return d;
    }
    return null;
  }

  async listDecisions(tenant: string, limit: number, after?: { readonly at: string; readonly id: string }): Promise<Decision[]> {
    return (await this.rows(S.decisions(this.dialect, tenant, limit, after))).map((r) => JSON.parse(str(r.body)) as Decision);
  }

  async auditHead(tenant: string): Promise<{ seq: number; hash: string } | null> {
    const r = await this.one(S.auditHead(this.dialect, tenant));
    return r ? { seq: Number(r.seq), hash: str(r.hash) } : null;
  }

  async auditRange(tenant: string, fromSeq: number, toSeq: number): Promise<AuditEntry[]> {
    return (await this.rows(S.auditRange(this.dialect, tenant, fromSeq, toSeq))).map(toAudit);
  }

  async auditEntriesAt(tenant: string, seqs: readonly number[]): Promise<AuditEntry[]> {
    if (seqs.length === 0) return [];
    const out: AuditEntry[] = [];
    for (const chunk of chunks([...new Set(seqs)], this.dialect.inListMax)) out.push(...(await this.rows(S.auditAt(this.dialect, tenant, chunk))).map(toAudit));
    return out.sort((a, b) => a.seq - b.seq);
  }

  async auditEntriesNaming(tenant: string, ops: readonly AuditOp[], name: { readonly field: 'principalId' | 'tokenId'; readonly value: string } | null): Promise<AuditEntry[]> {
    const unique = [...new Set(ops)];
    if (unique.length === 0) return [];
    // the payload is JSON text (never jsonb on PostgreSQL: see its schema)
    return (await this.rows(S.auditNaming(this.dialect, tenant, unique, name))).map(toAudit);
  }

  async auditHasPolicy(tenant: string, policyVersion: string): Promise<boolean> {
    return (await this.one(S.auditHasPolicy(this.dialect, tenant, policyVersion))) !== undefined;
  }

  async findToken(by: { readonly id: string } | { readonly hash: string }): Promise<TokenRow | null> {
    const r = await this.one(S.token(this.dialect, by));
    return r ? toToken(r) : null;
  }

  async listTokens(tenant: string | null): Promise<TokenRow[]> {
    return (await this.rows(S.tokens(this.dialect, tenant))).map(toToken);
  }

  async latestCheckpoint(tenant: string): Promise<Checkpoint | null> {
    const r = await this.one(S.latestCheckpoint(this.dialect, tenant));
    return r ? toCheckpoint(r) : null;
  }

  async tenants(): Promise<string[]> {
    return (await this.rows(S.tenants(this.dialect, ADMIN_CHAIN))).map((r) => str(r.tenant));
  }

  async tenantContentKey(tenant: string): Promise<string | null> {
    const r = await this.one(S.tenantContentKey(this.dialect, tenant));
    return r ? str(r.content_key) : null;
  }

  /** One lane of the review queue, newest first (keyset; see {@link ReviewStore.listQueuedDecisions}). */
  async listQueuedDecisions(tenant: string, q: QueuedDecisionsQuery): Promise<Decision[]> {
    return (await this.rows(S.queuedDecisions(this.dialect, tenant, q))).map((r) => JSON.parse(str(r.body)) as Decision);
  }

  /** The review queue's lanes and how many decisions each holds. */
  async countQueuedDecisions(tenant: string): Promise<QueuedDecisionCount[]> {
    return (await this.rows(S.queuedDecisionCounts(this.dialect, tenant))).map((r) => ({
      outcome: str(r.outcome) as QueuedDecisionCount['outcome'],
      tier: str(r.tier) as Tier,
      requesters: str(r.requesters) as RequesterSide,
      count: Number(r.n),
    }));
  }

  /** The tenant's review notes, oldest first (src/server/routes/review.ts). */
  async listReviewNotes(tenant: string): Promise<ReviewNoteRow[]> {
    return (await this.rows(S.reviewNotes(this.dialect, tenant))).map(toReviewNote);
  }

  /** The write-surface inventory's counts over a window (see SurfaceStore.surfaceCounts; ./surfaces.ts). */
  async surfaceCounts(tenant: string, q: SurfaceQuery): Promise<SurfaceCounts> {
    return surfaceCounts(this.dialect, (s) => this.rows(s), tenant, q);
  }
}
