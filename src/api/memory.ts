import { createPrivateKey, createPublicKey, randomUUID } from 'node:crypto';
import { type AuditEntry, type AuditOp, type Checkpoint, nextEntry } from '../core/audit.js';
import { type Authority, TRUSTED_THRESHOLD, atLeast, minAuthority } from '../core/authority.js';
import { hashCanonical, sha256Hex } from '../core/canonical.js';
import { derivedTaint, provesNarrowInputs, writeTaint } from '../core/derivation.js';
import { MemauthError } from '../core/errors.js';
import { type FactsBundle, type RecordFacts, corroborationOf, dependencyFacts, memoryRefId } from '../core/facts.js';
import { type ConfirmationCandidate, decide } from '../core/gate.js';
import { type Policy, disallowedArguments, modeFor, originAuthority, riskTier, selfSource, sourceAuthority } from '../core/policy.js';
import {
  KIND_CEILING,
  type Action,
  type Confirmation,
  type Corroboration,
  type Decision,
  type Dependency,
  type DependencyWhy,
  type DerivationEdge,
  type MemoryRecord,
  type Principal,
  type ValueProvenance,
  type ValueSuppliers,
} from '../core/types.js';
import { type ArgumentValue, argumentValues, findProduct, normalizeText, prepareText, significantTokens, supplies } from '../core/values.js';
import type { SearchHit, StorageDriver, StorageTx } from '../store/driver.js';
import { type AuditReport, verifyStore } from './verify.js';
import { type ReplayResult, replayDecision } from './replay.js';
import { parseInput, schemas } from './validation.js';
import type { z } from 'zod';

type In<K extends keyof typeof schemas> = z.input<(typeof schemas)[K]>;

/** A record as `get` returns it: the stored record plus what the gate would see of it now. */
export interface RecordView extends MemoryRecord {
  /** lowestAuthority, or lifted by k independent trusted corroborations. */
  readonly actionAuthority: Authority;
  readonly corroborations: readonly Corroboration[];
  /** ids of deleted records in this record's lineage (DESIGN.md: derived records show `deleted_source`). */
  readonly deletedSources: readonly string[];
}

/** Result of {@link Memory.write}. */
export interface WriteResult {
  readonly record: MemoryRecord;
  /** false when the text was recalled memory echoed back: it resolves to the original, adding nothing. */
  readonly created: boolean;
  readonly echoOf: string | null;
}

/** Result of {@link Memory.corroborate}. */
export interface CorroborateResult {
  readonly corroboration: Corroboration;
  /** whether it counts toward the record's action authority now. */
  readonly counted: boolean;
  /** why it does not count, when it does not. */
  readonly rejection: string | null;
  readonly actionAuthority: Authority;
  readonly independentDomains: number;
}

/** A node/edge view of a record's lineage down to its roots (for graphs). */
export interface LineageGraph {
  readonly nodes: ReadonlyArray<{ id: string; authority: Authority; principalId: string; sourceRef: string; status: string; content: string | null }>;
  readonly edges: ReadonlyArray<{ from: string; to: string; transform: string; kind: string }>;
}

export interface MemoryOptions {
  readonly driver: StorageDriver;
  readonly policy: Policy;
  /** clock, for tests of expiry; default `() => new Date()`. */
  readonly clock?: () => Date;
  /** Ed25519 private key (PEM) for signed checkpoints; without one, `checkpoint()` refuses. */
  readonly checkpointKey?: string | null;
  /** called with each new checkpoint so it can be kept outside the database (e.g. a sidecar file). */
  readonly onCheckpoint?: (c: Checkpoint) => void;
  /** externally kept checkpoints, the newest per tenant is used by `verifyAudit`. */
  readonly externalCheckpoints?: () => Checkpoint[];
}

const newId = (prefix: string): string => `${prefix}_${randomUUID().replace(/-/g, '')}`;

/** SHA-256 of the RFC 8785 canonical JSON of an action's arguments: what a confirmation binds. */
export function argsHashOf(args: Readonly<Record<string, unknown>>): string {
  return hashCanonical(args);
}

/**
 * memauth's library facade: a memory store whose action authority is bound to write-time
 * origin (DESIGN.md), over a {@link StorageDriver}. Create it with `openMemory`.
 *
 * Every method takes a `tenant` and fails closed without one (`TENANT_REQUIRED`). Errors are
 * {@link MemauthError} with a string code. All writes append to the tenant's audit chain in
 * the same transaction as the data they describe.
 */
export class Memory {
  readonly policy: Policy;
  readonly driver: StorageDriver;
  private readonly clock: () => Date;
  private readonly checkpointKey: string | null;
  private readonly onCheckpoint: ((c: Checkpoint) => void) | undefined;
  private readonly externalCheckpoints: (() => Checkpoint[]) | undefined;
  private readonly policyLogged = new Set<string>();
  private closed = false;

  constructor(opts: MemoryOptions) {
    this.driver = opts.driver;
    this.policy = opts.policy;
    this.clock = opts.clock ?? (() => new Date());
    this.checkpointKey = opts.checkpointKey ?? null;
    this.onCheckpoint = opts.onCheckpoint;
    this.externalCheckpoints = opts.externalCheckpoints;
  }

  private now(): string {
    return this.clock().toISOString();
  }

  private assertOpen(): void {
    if (this.closed) throw new MemauthError('CLOSED', 'this memory is closed; open it again');
  }

  private async audit(tx: StorageTx, tenant: string, op: AuditOp, payload: Record<string, unknown>): Promise<AuditEntry> {
    const key = `${tenant}\u0000${this.policy.version}`;
    if (!this.policyLogged.has(key)) {
      if (!(await tx.auditHasPolicy(tenant, this.policy.version))) {
        await tx.putPolicyText(this.policy.version, this.policy.text, this.now());
        const head = await tx.auditHead(tenant);
        await tx.appendAudit(nextEntry(tenant, head, 'policy', { policyVersion: this.policy.version, text: this.policy.text, at: this.now() }, this.policy.version));
      }
      this.policyLogged.add(key);
    }
    const head = await tx.auditHead(tenant);
    const e = nextEntry(tenant, head, op, payload, this.policy.version);
    await tx.appendAudit(e);
    return e;
  }

  /** Log a refused attempt in the tenant's chain, then throw the error. */
  private async refuse(tenant: string, op: AuditOp, payload: Record<string, unknown>, err: MemauthError): Promise<never> {
    try {
      await this.driver.transaction(tenant, (tx) => this.audit(tx, tenant, op, { refused: err.code, message: err.message, ...payload, at: this.now() }));
    } catch {
      // the refusal stands even if it could not be logged
    }
    throw err;
  }

  private async principalOrThrow(tx: StorageTx | StorageDriver, tenant: string, id: string, op: AuditOp): Promise<Principal> {
    const p = await tx.getPrincipal(tenant, id);
    if (!p) {
      return this.refuse(tenant, op, { principalId: id }, new MemauthError('UNKNOWN_PRINCIPAL', `principal ${JSON.stringify(id)} is not registered in tenant ${JSON.stringify(tenant)}; register it first (memauth principal add)`, { tenant, principal: id }));
    }
    return p;
  }

  // ------------------------------------------------------------------ principals

  /**
   * Register an authenticated writer in a tenant (DESIGN.md § Principals).
   *
   * @param input.kind - `system | user | tool | agent | external`; fixes the highest possible ceiling.
   * @param input.maxAuthority - the principal's ceiling; defaults to its kind's ceiling.
   * @param input.domain - its independence domain (administrative domain / upstream provider);
   *   stored trimmed and lower-cased, so spelling variants are one domain.
   * @throws MemauthError `AUTHORITY_EXCEEDS_PRINCIPAL` when maxAuthority is above the kind's ceiling,
   *   `PRINCIPAL_EXISTS`, `TENANT_REQUIRED`, `INVALID_ARGUMENT`.
   */
  async registerPrincipal(input: In<'registerPrincipal'>): Promise<Principal> {
    this.assertOpen();
    const a = parseInput(schemas.registerPrincipal, input, 'registerPrincipal');
    const ceiling = KIND_CEILING[a.kind];
    const maxAuthority = a.maxAuthority ?? ceiling;
    if (!atLeast(ceiling, maxAuthority)) {
      return this.refuse(a.tenant, 'principal', { principalId: a.id, kind: a.kind, claimedAuthority: maxAuthority }, new MemauthError('AUTHORITY_EXCEEDS_PRINCIPAL', `a ${a.kind} principal can hold at most ${ceiling}, not ${maxAuthority}`, { kind: a.kind, ceiling, requested: maxAuthority }));
    }
    return this.driver.transaction(a.tenant, async (tx) => {
      if (await tx.getPrincipal(a.tenant, a.id)) throw new MemauthError('PRINCIPAL_EXISTS', `principal ${JSON.stringify(a.id)} already exists in tenant ${JSON.stringify(a.tenant)}`, { tenant: a.tenant, principal: a.id });
      // independence domains compare case- and space-insensitively: "ERP-Vendor " is "erp-vendor"
      const p: Principal = { tenant: a.tenant, id: a.id, kind: a.kind, maxAuthority, domain: a.domain.normalize('NFC').trim().toLowerCase(), createdAt: this.now() };
      await tx.insertPrincipal(p);
      await this.audit(tx, a.tenant, 'principal', { principalId: p.id, kind: p.kind, maxAuthority: p.maxAuthority, domain: p.domain, at: p.createdAt });
      return p;
    });
  }

  /** Principals of a tenant. @throws `TENANT_REQUIRED` */
  async listPrincipals(input: In<'tenant'>): Promise<Principal[]> {
    this.assertOpen();
    const a = parseInput(schemas.tenant, input, 'listPrincipals');
    return this.driver.listPrincipals(a.tenant);
  }

  /** A new session id (sessions are also created on first use of any id). */
  newSessionId(): string {
    return newId('ses');
  }

  // ------------------------------------------------------------------ records

  private async sessionRecords(tx: StorageTx | StorageDriver, tenant: string, session: string | undefined): Promise<MemoryRecord[]> {
    if (session === undefined) return [];
    return tx.getRecords(tenant, await tx.sessionReads(tenant, session));
  }

  private async insertNew(
    tx: StorageTx,
    op: 'write' | 'derive',
    base: { tenant: string; scope: string; content: string; principal: Principal; sourceRef: string; origin: Authority; writtenAt: string; expiresAt: string | null; reason: string; session: string | undefined },
    edges: DerivationEdge[],
    inputs: Map<string, MemoryRecord>,
    sourceAt: string,
    transform: DerivationEdge['transform'],
  ): Promise<MemoryRecord> {
    const id = newId('mem');
    const origin = { authority: base.origin, principalId: base.principal.id, sourceRef: base.sourceRef, writtenAt: base.writtenAt };
    const own = writeTaint({ writer: base.principal, origin, sourceAt });
    const taint =
      edges.length === 0 && op === 'write'
        ? own
        : (() => {
            const t = derivedTaint({ writer: base.principal, writerAuthority: base.origin, sourceRef: base.sourceRef, sourceAt, transform, edges, inputs });
            return { ...t, channels: [...new Set([...t.channels, ...own.channels])].sort() };
          })();
    const contentHash = sha256Hex(base.content);
    const payload = {
      recordId: id,
      scope: base.scope,
      contentHash,
      origin,
      taint,
      derivedFrom: edges,
      expiresAt: base.expiresAt,
      createdAt: base.writtenAt,
      writeReason: base.reason,
      sessionId: base.session ?? null,
      at: base.writtenAt,
    };
    const entry = await this.audit(tx, base.tenant, op, payload);
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
      taint,
      audit: { policyVersion: this.policy.version, writeReason: base.reason, seq: entry.seq },
      status: 'active',
    };
    await tx.insertRecord(record);
    // what is written in a session is in that session's context from now on
    if (base.session !== undefined) await tx.addSessionReads(base.tenant, base.session, [record.id], base.writtenAt);
    return record;
  }

  /**
   * Records of the session whose text this content repeats (recalled memory echoed back,
   * DESIGN.md § Derivation and taint). Punctuation- and case-insensitive: `exact` when the
   * texts are the same words; `contained` when the content includes a record's text (16+
   * characters) or uses only the significant words of one record (4+ of them).
   */
  private static echoes(content: string, reads: readonly MemoryRecord[]): { exact: MemoryRecord | null; contained: MemoryRecord[] } {
    const key = (t: string): string => normalizeText(t).replace(/[^\p{L}\p{N}@]+/gu, ' ').trim();
    const norm = key(content);
    const tokens = significantTokens(content);
    let exact: MemoryRecord | null = null;
    const contained: MemoryRecord[] = [];
    for (const r of reads) {
      if (r.content === null) continue;
      const rn = key(r.content);
      if (rn === norm) {
        exact ??= r;
        continue;
      }
      const rt = significantTokens(r.content);
      if ((rn.length >= 16 && norm.includes(rn)) || (tokens.size >= 4 && [...tokens].every((t) => rt.has(t)))) contained.push(r);
    }
    return { exact, contained };
  }

  /**
   * Write a memory. Its origin is decided by the store, never claimed by the caller:
   * `min(principal.maxAuthority, authorityOf(source))` (DESIGN.md § Principals).
   *
   * @param input.source - where the text came from (URL, message id, `principal:<id>` for the
   *   writer's own statement — the default). Judged by the policy's source rules.
   * @param input.sourceAt - when the source said it (ISO-8601); default now; not in the future.
   * @param input.authority - an optional claim; it can only lower the origin. Above the
   *   principal's ceiling it is refused with `AUTHORITY_EXCEEDS_PRINCIPAL` and logged.
   * @param input.session - the session the write happens in. Recalled text re-ingested in it
   *   resolves to the original record (`created: false`). An `agent` principal's write in a
   *   session derives from every record read in it (context taint).
   * @throws `TENANT_REQUIRED`, `SCOPE_REQUIRED`, `UNKNOWN_PRINCIPAL`, `AUTHORITY_EXCEEDS_PRINCIPAL`, `INVALID_ARGUMENT`.
   */
  async write(input: In<'write'>): Promise<WriteResult> {
    this.assertOpen();
    const a = parseInput(schemas.write, input, 'write');
    const now = this.now();
    if (a.sourceAt !== undefined && new Date(a.sourceAt).toISOString() > now) throw new MemauthError('INVALID_ARGUMENT', 'write: sourceAt is in the future', { field: 'sourceAt' });
    if (a.expiresAt !== undefined && new Date(a.expiresAt).toISOString() <= now) throw new MemauthError('INVALID_ARGUMENT', 'write: expiresAt is not in the future', { field: 'expiresAt' });
    const p = await this.principalOrThrow(this.driver, a.tenant, a.principal, 'write');
    if (a.authority !== undefined && !atLeast(p.maxAuthority, a.authority)) {
      return this.refuse(a.tenant, 'write', { principalId: p.id, claimedAuthority: a.authority }, new MemauthError('AUTHORITY_EXCEEDS_PRINCIPAL', `principal ${p.id} (${p.kind}) can write at most ${p.maxAuthority}; it claimed ${a.authority}`, { principal: p.id, ceiling: p.maxAuthority, claimed: a.authority }));
    }
    const sourceRef = a.source ?? selfSource(p.id);
    let origin = originAuthority(this.policy, sourceRef, p);
    if (a.authority !== undefined) origin = minAuthority(origin, a.authority);
    return this.driver.transaction(a.tenant, async (tx) => {
      if (a.session !== undefined) await tx.ensureSession(a.tenant, a.session, now);
      const reads = await this.sessionRecords(tx, a.tenant, a.session);
      const { exact, contained } = Memory.echoes(a.content, reads);
      if (exact) {
        await this.audit(tx, a.tenant, 'write', { refused: 'RECALL_ECHO', echoOf: exact.id, principalId: p.id, sourceRef, contentHash: sha256Hex(a.content), sessionId: a.session ?? null, at: now });
        return { record: exact, created: false, echoOf: exact.id };
      }
      const edges: DerivationEdge[] = contained.map((r) => ({ from: r.id, transform: 'import', kind: 'echo' }));
      if (p.kind === 'agent') for (const r of reads) if (!edges.some((e) => e.from === r.id)) edges.push({ from: r.id, transform: 'rewrite', kind: 'session' });
      const inputs = new Map(reads.map((r) => [r.id, r]));
      const sourceAt = a.sourceAt !== undefined ? new Date(a.sourceAt).toISOString() : now;
      const expiresAt = a.expiresAt !== undefined ? new Date(a.expiresAt).toISOString() : null;
      const record = await this.insertNew(
        tx,
        'write',
        { tenant: a.tenant, scope: a.scope, content: a.content, principal: p, sourceRef, origin, writtenAt: now, expiresAt, reason: a.reason ?? 'write', session: a.session },
        edges,
        inputs,
        sourceAt,
        'rewrite',
      );
      return { record, created: true, echoOf: null };
    });
  }

  /**
   * Derive a new record from others — summarize, extract, merge, dedup, rewrite (an update is a
   * new version), import, embed (DESIGN.md § Derivation and taint). Taint is the minimum over
   * every input: the declared `from` plus every record read in the same session, unless
   * `narrowInputs` is proven (verbatim extraction from the declared inputs only). With no inputs
   * at all the result is at most `model_inferred`. Origin, sources and the oldest source date
   * are carried; nothing is reset.
   *
   * @throws `RECORD_NOT_FOUND` for an input not in the tenant, `UNKNOWN_PRINCIPAL`, `TENANT_REQUIRED`, `INVALID_ARGUMENT`.
   */
  async derive(input: In<'derive'>): Promise<MemoryRecord> {
    this.assertOpen();
    const a = parseInput(schemas.derive, input, 'derive');
    const now = this.now();
    if (a.expiresAt !== undefined && new Date(a.expiresAt).toISOString() <= now) throw new MemauthError('INVALID_ARGUMENT', 'derive: expiresAt is not in the future', { field: 'expiresAt' });
    const p = await this.principalOrThrow(this.driver, a.tenant, a.principal, 'derive');
    const sourceRef = a.source ?? selfSource(p.id);
    const origin = originAuthority(this.policy, sourceRef, p);
    return this.driver.transaction(a.tenant, async (tx) => {
      const fromIds = [...new Set(a.from)];
      const declared = await tx.getRecords(a.tenant, fromIds);
      const missing = fromIds.filter((id) => !declared.some((r) => r.id === id));
      if (missing.length > 0) throw new MemauthError('RECORD_NOT_FOUND', `derive: no record ${missing.map((m) => JSON.stringify(m)).join(', ')} in tenant ${JSON.stringify(a.tenant)}`, { ids: missing });
      if (a.session !== undefined) await tx.ensureSession(a.tenant, a.session, now);
      const reads = (await this.sessionRecords(tx, a.tenant, a.session)).filter((r) => !fromIds.includes(r.id));
      const narrowed = a.narrowInputs === true && provesNarrowInputs(a.content, declared);
      const edges: DerivationEdge[] = declared.map((r) => ({ from: r.id, transform: a.transform, kind: 'declared' }));
      if (!narrowed) for (const r of reads) edges.push({ from: r.id, transform: a.transform, kind: 'session' });
      const inputs = new Map([...declared, ...reads].map((r) => [r.id, r]));
      const scope = a.scope ?? declared[0]?.scope;
      if (scope === undefined) throw new MemauthError('SCOPE_REQUIRED', 'derive: a scope is required when there are no declared inputs', { field: 'scope' });
      return this.insertNew(
        tx,
        'derive',
        { tenant: a.tenant, scope, content: a.content, principal: p, sourceRef, origin, writtenAt: now, expiresAt: a.expiresAt !== undefined ? new Date(a.expiresAt).toISOString() : null, reason: a.reason ?? a.transform, session: a.session },
        edges,
        inputs,
        now,
        a.transform,
      );
    });
  }

  private async markRead(tenant: string, session: string | undefined, ids: string[]): Promise<void> {
    if (session === undefined || ids.length === 0) return;
    const now = this.now();
    await this.driver.transaction(tenant, async (tx) => {
      await tx.ensureSession(tenant, session, now);
      await tx.addSessionReads(tenant, session, ids, now);
    });
  }

  /**
   * Get one record with its current action authority, corroborations and deleted sources.
   * Marks it as read in `session` (it then taints what the session derives and decides).
   * @throws `RECORD_NOT_FOUND` (also for another tenant's id), `TENANT_REQUIRED`.
   */
  async get(input: In<'get'>): Promise<RecordView> {
    this.assertOpen();
    const a = parseInput(schemas.get, input, 'get');
    const [rec] = await this.driver.getRecords(a.tenant, [a.id]);
    if (!rec) throw new MemauthError('RECORD_NOT_FOUND', `no record ${JSON.stringify(a.id)} in tenant ${JSON.stringify(a.tenant)}`, { id: a.id, tenant: a.tenant });
    if (rec.status === 'active') await this.markRead(a.tenant, a.session, [rec.id]);
    return (await this.views(a.tenant, [rec]))[0] as RecordView;
  }

  private async views(tenant: string, recs: MemoryRecord[]): Promise<RecordView[]> {
    const now = this.now();
    const bundle = await this.factsBundle(this.driver, tenant, recs.map((r) => r.id));
    const { k, minAuthority: floor } = this.policy.document.corroboration;
    return recs.map((r) => {
      const c = corroborationOf(r.id, bundle.bundle, k, floor, now);
      const deletedSources = [...bundle.lineageOf(r.id)].filter((id) => bundle.bundle.records.get(id)?.status === 'deleted');
      const status = r.status === 'active' && r.expiresAt !== null && r.expiresAt <= now ? 'expired' : r.status;
      // a row that does not match its audit entry (forged outside the API) has no authority, as at the gate
      const actionAuthority = bundle.bundle.records.get(r.id)?.verified === true ? c.actionAuthority : 'external_untrusted';
      return { ...r, status, actionAuthority, corroborations: bundle.bundle.corroborations.get(r.id) ?? [], deletedSources };
    });
  }

  /**
   * Full-text search (BM25) over active, unexpired records of one tenant and scope. Hits are
   * marked as read in `session`.
   * @returns hits, best first, at most `limit` (default 10).
   * @throws `TENANT_REQUIRED`, `SCOPE_REQUIRED`.
   */
  async search(input: In<'search'>): Promise<SearchHit[]> {
    this.assertOpen();
    const a = parseInput(schemas.search, input, 'search');
    const hits = await this.driver.search(a.tenant, a.scope, a.query, a.limit ?? 10, this.now());
    await this.markRead(a.tenant, a.session, hits.map((h) => h.record.id));
    return hits;
  }

  /** List records of a tenant (newest first), optionally one scope, optionally including deleted. Does not mark reads. */
  async list(input: In<'list'>): Promise<MemoryRecord[]> {
    this.assertOpen();
    const a = parseInput(schemas.list, input, 'list');
    return this.driver.listRecords(a.tenant, { scope: a.scope, limit: a.limit ?? 100, offset: a.offset, includeDeleted: a.includeDeleted });
  }

  /** The lineage of a record down to its roots, as nodes and edges. @throws `RECORD_NOT_FOUND` */
  async lineageGraph(input: In<'get'>): Promise<LineageGraph> {
    this.assertOpen();
    const a = parseInput(schemas.get, input, 'lineageGraph');
    const lineage = await this.driver.lineage(a.tenant, [a.id]);
    if (!lineage.has(a.id)) throw new MemauthError('RECORD_NOT_FOUND', `no record ${JSON.stringify(a.id)} in tenant ${JSON.stringify(a.tenant)}`, { id: a.id });
    const recs = await this.driver.getRecords(a.tenant, [...lineage.keys()]);
    return {
      nodes: recs.map((r) => ({ id: r.id, authority: r.taint.lowestAuthority, principalId: r.origin.principalId, sourceRef: r.origin.sourceRef, status: r.status, content: r.content })),
      edges: [...lineage.entries()].flatMap(([to, es]) => es.map((e) => ({ from: e.from, to, transform: e.transform, kind: e.kind }))),
    };
  }

  // ------------------------------------------------------------------ corroboration

  /**
   * Record that `principal` corroborates a record with `evidence` (a source ref, or
   * `memory:<id>` naming a record of its own). Recorded always; counted only when the rules
   * of DESIGN.md § Corroboration hold — the result says whether and why not.
   *
   * @throws `RECORD_NOT_FOUND`, `RECORD_DELETED`, `UNKNOWN_PRINCIPAL`, `TENANT_REQUIRED`.
   */
  async corroborate(input: In<'corroborate'>): Promise<CorroborateResult> {
    this.assertOpen();
    const a = parseInput(schemas.corroborate, input, 'corroborate');
    const now = this.now();
    const p = await this.principalOrThrow(this.driver, a.tenant, a.principal, 'corroborate');
    return this.driver.transaction(a.tenant, async (tx) => {
      const [rec] = await tx.getRecords(a.tenant, [a.recordId]);
      if (!rec) throw new MemauthError('RECORD_NOT_FOUND', `no record ${JSON.stringify(a.recordId)} in tenant ${JSON.stringify(a.tenant)}`, { id: a.recordId });
      if (rec.status === 'deleted') throw new MemauthError('RECORD_DELETED', `record ${a.recordId} is deleted and cannot be corroborated`, { id: a.recordId });
      const evId = memoryRefId(a.evidence);
      let evidenceAuthority: Authority;
      if (evId !== null) {
        const [ev] = await tx.getRecords(a.tenant, [evId]);
        if (!ev) throw new MemauthError('RECORD_NOT_FOUND', `evidence record ${JSON.stringify(evId)} is not in tenant ${JSON.stringify(a.tenant)}`, { id: evId });
        evidenceAuthority = ev.taint.lowestAuthority;
      } else {
        evidenceAuthority = sourceAuthority(this.policy, a.evidence, p);
      }
      const c: Corroboration = { id: newId('cor'), tenant: a.tenant, recordId: rec.id, principalId: p.id, authority: minAuthority(p.maxAuthority, evidenceAuthority), domain: p.domain, evidenceRef: a.evidence, at: now };
      const entry = await this.audit(tx, a.tenant, 'corroborate', { corroborationId: c.id, recordId: c.recordId, principalId: c.principalId, authority: c.authority, domain: c.domain, evidenceRef: c.evidenceRef, at: c.at });
      await tx.insertCorroboration(c, entry.seq);
      const { bundle } = await this.factsBundle(tx, a.tenant, [rec.id]);
      const { k, minAuthority: floor } = this.policy.document.corroboration;
      const r = corroborationOf(rec.id, bundle, k, floor, now);
      const rejection = r.rejected.find((x) => x.id === c.id)?.reason ?? null;
      return { corroboration: c, counted: rejection === null && r.counted.some((x) => x.id === c.id), rejection, actionAuthority: r.actionAuthority, independentDomains: r.independentDomains };
    });
  }

  // ------------------------------------------------------------------ confirmation

  /**
   * A human confirmation scoped to one exact action (DESIGN.md § Human confirmation): issued by
   * a `user` principal, bound to `{action type, resource, args hash, memoryIds?}`, single-use by
   * default, expiring (default and maximum TTL from the policy).
   *
   * @param input.action - `{type, args?, resource?}`; give `args` (exact) or `argsHash`.
   * @throws `CONFIRMATION_REQUIRES_USER` (logged) when the principal is not a user,
   *   `INVALID_ARGUMENT` without args/argsHash or with a TTL above the policy's maximum.
   */
  async confirm(input: In<'confirm'>): Promise<Confirmation> {
    this.assertOpen();
    const a = parseInput(schemas.confirm, input, 'confirm');
    const p = await this.principalOrThrow(this.driver, a.tenant, a.principal, 'confirm');
    if (p.kind !== 'user') {
      return this.refuse(a.tenant, 'confirm', { principalId: p.id, kind: p.kind, actionType: a.action.type }, new MemauthError('CONFIRMATION_REQUIRES_USER', `only a user principal can confirm an action; ${p.id} is a ${p.kind}`, { principal: p.id, kind: p.kind }));
    }
    if (a.action.args === undefined && a.argsHash === undefined) throw new MemauthError('INVALID_ARGUMENT', 'confirm: give the exact action.args or their argsHash', { field: 'action.args' });
    const argsHash = a.action.args !== undefined ? argsHashOf(a.action.args) : (a.argsHash as string);
    if (a.argsHash !== undefined && a.argsHash !== argsHash) throw new MemauthError('INVALID_ARGUMENT', 'confirm: argsHash does not match action.args', { field: 'argsHash' });
    const { defaultTtlSeconds, maxTtlSeconds } = this.policy.document.confirmation;
    const ttl = a.expiresInSeconds ?? defaultTtlSeconds;
    if (ttl > maxTtlSeconds) throw new MemauthError('INVALID_ARGUMENT', `confirm: expiresInSeconds ${ttl} exceeds the policy maximum ${maxTtlSeconds}`, { field: 'expiresInSeconds' });
    const now = this.clock();
    const c: Confirmation = {
      id: newId('cnf'),
      tenant: a.tenant,
      principalId: p.id,
      actionType: a.action.type,
      resource: a.action.resource ?? null,
      argsHash,
      args: a.action.args ?? null,
      memoryIds: a.memoryIds ?? null,
      expiresAt: new Date(now.getTime() + ttl * 1000).toISOString(),
      maxUses: a.maxUses ?? 1,
      createdAt: now.toISOString(),
    };
    return this.driver.transaction(a.tenant, async (tx) => {
      if (c.memoryIds !== null) {
        const found = new Set((await tx.getRecords(a.tenant, c.memoryIds)).map((r) => r.id));
        const missing = c.memoryIds.filter((m) => !found.has(m));
        if (missing.length > 0) throw new MemauthError('RECORD_NOT_FOUND', `confirm: memoryIds names no record ${missing.map((m) => JSON.stringify(m)).join(', ')} in tenant ${JSON.stringify(a.tenant)}`, { ids: missing });
      }
      const entry = await this.audit(tx, a.tenant, 'confirm', { confirmation: c, at: c.createdAt });
      await tx.insertConfirmation(c, entry.seq);
      return c;
    });
  }

  // ------------------------------------------------------------------ gate

  /** Fetch the closed provenance bundle for `ids` (see {@link FactsBundle}). */
  private async factsBundle(src: StorageTx | StorageDriver, tenant: string, ids: readonly string[]): Promise<{ bundle: FactsBundle; lineageOf: (id: string) => Set<string> }> {
    const lineage = await src.lineage(tenant, ids);
    const corroborations = new Map<string, Corroboration[]>();
    for (const c of await this.verifiedRows(src, tenant, await src.corroborationsFor(tenant, ids), corroborationMatchesEntry)) {
      const list = corroborations.get(c.recordId) ?? [];
      list.push(c);
      corroborations.set(c.recordId, list);
    }
    const evidenceIds = [...corroborations.values()].flat().map((c) => memoryRefId(c.evidenceRef)).filter((x): x is string => x !== null);
    if (evidenceIds.length > 0) for (const [k, v] of await src.lineage(tenant, evidenceIds)) lineage.set(k, v);
    const recs = await src.getRecords(tenant, [...lineage.keys()]);
    const records = new Map<string, RecordFacts>();
    const verified = await this.verifiedRecords(src, tenant, recs);
    for (const r of recs) {
      records.set(r.id, { id: r.id, lowestAuthority: r.taint.lowestAuthority, originPrincipal: r.origin.principalId, status: r.status === 'deleted' ? 'deleted' : 'active', expiresAt: r.expiresAt, derivedFrom: r.derivedFrom, verified: verified.has(r.id) });
    }
    const domains = new Map((await src.listPrincipals(tenant)).map((p) => [p.id, p.domain]));
    const lineageOf = (id: string): Set<string> => {
      const seen = new Set<string>();
      const stack = [...(lineage.get(id) ?? []).map((e) => e.from)];
      while (stack.length) {
        const x = stack.pop() as string;
        if (!seen.has(x)) {
          seen.add(x);
          stack.push(...(lineage.get(x) ?? []).map((e) => e.from));
        }
      }
      return seen;
    };
    return { bundle: { records, domains, corroborations }, lineageOf };
  }

  /** Keep only rows that match the audit entry that recorded them (rows forged outside the API never count). */
  private async verifiedRows<T extends { auditSeq?: number }>(src: StorageTx | StorageDriver, tenant: string, rows: T[], matches: (row: T, e: AuditEntry) => boolean): Promise<T[]> {
    const out: T[] = [];
    for (const r of rows) {
      if (r.auditSeq === undefined) continue;
      const [e] = await src.auditRange(tenant, r.auditSeq, r.auditSeq);
      if (e && matches(r, e)) out.push(r);
    }
    return out;
  }

  /** Ids of records whose row matches their write/derive audit entry (rows forged outside the API do not). */
  private async verifiedRecords(src: StorageTx | StorageDriver, tenant: string, recs: readonly MemoryRecord[]): Promise<Set<string>> {
    const out = new Set<string>();
    for (const r of recs) {
      const [e] = await src.auditRange(tenant, r.audit.seq, r.audit.seq);
      if (e && recordMatchesEntry(r, e)) out.add(r.id);
    }
    return out;
  }

  /**
   * The action gate (DESIGN.md § Action gate). Decides, records and audits one proposed action.
   *
   * Dependencies: `dependsOn`, plus every record of the session or `dependsOn` whose content
   * supplies an argument value (value-level provenance), plus — unless `context: 'declared'` —
   * every record read in the session. `userTurn` is the user's current turn (its values count as
   * `user_confirmed`). `confirmationId` cites a confirmation; without it, a matching one is looked up.
   *
   * @returns the stored {@link Decision}: outcome `allow | deny | would_deny`, structured reasons.
   * @throws `RECORD_NOT_FOUND` for a `dependsOn` id not in the tenant, `UNKNOWN_PRINCIPAL` /
   *   `INVALID_ARGUMENT` for a user turn not by a user principal, `TENANT_REQUIRED`.
   */
  async authorize(input: In<'authorize'>): Promise<Decision> {
    this.assertOpen();
    const a = parseInput(schemas.authorize, input, 'authorize');
    const action: Action = a.action.resource !== undefined ? { type: a.action.type, args: a.action.args, resource: a.action.resource } : { type: a.action.type, args: a.action.args };
    if (a.userTurn !== undefined) {
      const u = await this.principalOrThrow(this.driver, a.tenant, a.userTurn.principal, 'decide');
      if (u.kind !== 'user') throw new MemauthError('INVALID_ARGUMENT', `authorize: userTurn.principal ${u.id} is a ${u.kind}, not a user`, { field: 'userTurn.principal' });
    }
    const tier = riskTier(this.policy, action);
    const mode = modeFor(this.policy, tier);
    const contextMode = a.context ?? 'session';
    const argsHash = argsHashOf(action.args);
    return this.driver.transaction(a.tenant, async (tx) => {
      const now = this.now();
      const declaredIds = [...new Set(a.dependsOn ?? [])];
      const declared = await tx.getRecords(a.tenant, declaredIds);
      const missing = declaredIds.filter((id) => !declared.some((r) => r.id === id));
      if (missing.length > 0) throw new MemauthError('RECORD_NOT_FOUND', `authorize: dependsOn names no record ${missing.map((m) => JSON.stringify(m)).join(', ')} in tenant ${JSON.stringify(a.tenant)}`, { ids: missing });
      const reads = await this.sessionRecords(tx, a.tenant, a.session);
      const candidates = new Map<string, MemoryRecord>([...reads, ...declared].map((r) => [r.id, r]));
      const why = new Map<string, Set<DependencyWhy>>();
      const addWhy = (id: string, w: DependencyWhy): void => {
        const s = why.get(id) ?? new Set();
        s.add(w);
        why.set(id, s);
      };
      for (const id of declaredIds) addWhy(id, 'declared');
      if (contextMode === 'session') for (const r of reads) addWhy(r.id, 'context');
      const { k, minAuthority: floor } = this.policy.document.corroboration;
      const { bundle } = await this.factsBundle(tx, a.tenant, [...candidates.keys()]);
      const usable = [...candidates.values()].filter((r) => r.content !== null && r.status === 'active' && (r.expiresAt === null || r.expiresAt > now));
      const texts = usable.map((r) => ({ id: r.id, t: prepareText(r.content as string) }));
      const userText = a.userTurn !== undefined ? prepareText(a.userTurn.text) : null;
      const suppliersOf = (v: ArgumentValue): ValueSuppliers => {
        const recordIds = texts.filter((x) => supplies(x.t, v)).map((x) => x.id).sort();
        for (const id of recordIds) addWhy(id, 'value');
        return { value: v.value, recordIds, userTurn: userText !== null && supplies(userText, v) };
      };
      const values: ValueProvenance[] = argumentValues(action.args).map((v) => {
        const direct = suppliersOf(v);
        let computed: ValueProvenance['computed'] = null;
        if (!direct.userTurn && v.numeric !== null) {
          const c = userText ? findProduct(v.numeric, userText.numbers) : null;
          if (c) computed = { op: c.op, operands: [{ value: String(c.a), recordIds: [], userTurn: true }, { value: String(c.b), recordIds: [], userTurn: true }] };
        }
        return { argument: v.argument, ...direct, computed };
      });
      const depIds = [...why.keys()].sort();
      const depFacts = depIds.map((id) => dependencyFacts(id, [...(why.get(id) as Set<DependencyWhy>)].sort(), bundle, k, floor, now));
      const confirmations = await this.confirmationCandidates(tx, a.tenant, action.type, argsHash, a.confirmationId ?? null, now);
      const result = decide({ action, argsHash, tier, mode, now, dependencies: depFacts, values, disallowedArguments: disallowedArguments(this.policy, action), confirmations, citedConfirmationId: a.confirmationId ?? null, threshold: TRUSTED_THRESHOLD });
      const id = newId('dec');
      const dependencies: Dependency[] = depFacts.map((d) => ({ memoryId: d.memoryId, why: d.why, lowestAuthority: d.lowestAuthority, actionAuthority: d.actionAuthority, status: d.status }));
      const payload = {
        decisionId: id,
        sessionId: a.session ?? null,
        action,
        argsHash,
        tier,
        mode,
        contextMode,
        userTurn: a.userTurn !== undefined ? { principal: a.userTurn.principal, textHash: sha256Hex(a.userTurn.text) } : null,
        dependencies: depFacts.map((d) => ({ memoryId: d.memoryId, why: d.why })),
        values,
        citedConfirmationId: a.confirmationId ?? null,
        confirmationId: result.confirmationId,
        outcome: result.outcome,
        reasons: result.reasons,
        at: now,
      };
      const entry = await this.audit(tx, a.tenant, 'decide', payload);
      const decision: Decision = {
        formatVersion: 1,
        id,
        tenant: a.tenant,
        sessionId: a.session ?? null,
        at: now,
        action,
        argsHash,
        tier,
        mode,
        outcome: result.outcome,
        reasons: result.reasons,
        dependencies,
        values,
        confirmationId: result.confirmationId,
        policyVersion: this.policy.version,
        auditSeq: entry.seq,
      };
      await tx.insertDecision(decision);
      if (result.confirmationId !== null) await tx.insertConfirmationUse(a.tenant, result.confirmationId, id, now);
      return decision;
    });
  }

  private async confirmationCandidates(tx: StorageTx, tenant: string, actionType: string, argsHash: string, cited: string | null, now: string): Promise<ConfirmationCandidate[]> {
    let list: Confirmation[];
    if (cited !== null) {
      const c = await tx.getConfirmation(tenant, cited);
      list = c ? [c] : [];
    } else {
      list = await tx.listConfirmations(tenant, actionType, argsHash, now);
    }
    list = await this.verifiedRows(tx, tenant, list, confirmationMatchesEntry);
    const uses = await tx.confirmationUses(tenant, list.map((c) => c.id));
    return list.map((confirmation) => ({ confirmation, usesSoFar: uses.get(confirmation.id) ?? 0 }));
  }

  /** A stored decision. @throws `DECISION_NOT_FOUND` */
  async getDecision(input: { tenant: string; decisionId: string }): Promise<Decision> {
    this.assertOpen();
    const a = parseInput(schemas.replay, input, 'getDecision');
    const d = await this.driver.getDecision(a.tenant, a.decisionId);
    if (!d) throw new MemauthError('DECISION_NOT_FOUND', `no decision ${JSON.stringify(a.decisionId)} in tenant ${JSON.stringify(a.tenant)}`, { id: a.decisionId });
    return d;
  }

  /** Recent decisions of a tenant, newest first. */
  async listDecisions(input: { tenant: string; limit?: number }): Promise<Decision[]> {
    this.assertOpen();
    const a = parseInput(schemas.listDecisions, input, 'listDecisions');
    return this.driver.listDecisions(a.tenant, a.limit ?? 100);
  }

  // ------------------------------------------------------------------ deletion

  /**
   * Delete a record (DESIGN.md § Deletion): its content and every index entry are erased; its
   * hash, provenance and the audit chain stay. Records derived from it keep their taint and
   * list it in `deletedSources`; actions citing it are denied with `deleted_source`.
   * Deleting an already deleted record is a no-op returning it.
   * @throws `RECORD_NOT_FOUND`, `UNKNOWN_PRINCIPAL`, `TENANT_REQUIRED`.
   */
  async delete(input: In<'delete'>): Promise<MemoryRecord> {
    this.assertOpen();
    const a = parseInput(schemas.delete, input, 'delete');
    if (a.principal !== undefined) await this.principalOrThrow(this.driver, a.tenant, a.principal, 'delete');
    return this.driver.transaction(a.tenant, async (tx) => {
      const [rec] = await tx.getRecords(a.tenant, [a.id]);
      if (!rec) throw new MemauthError('RECORD_NOT_FOUND', `no record ${JSON.stringify(a.id)} in tenant ${JSON.stringify(a.tenant)}`, { id: a.id });
      if (rec.status === 'deleted') return rec;
      const now = this.now();
      await this.audit(tx, a.tenant, 'delete', { recordId: rec.id, contentHash: rec.contentHash, principalId: a.principal ?? null, reason: a.reason ?? 'delete', at: now });
      await tx.eraseRecord(a.tenant, rec.id, now);
      const [after] = await tx.getRecords(a.tenant, [rec.id]);
      return after as MemoryRecord;
    });
  }

  /** Erase the content of every expired record of a tenant (retention). @returns the ids erased. */
  async sweepExpired(input: In<'tenant'>): Promise<string[]> {
    this.assertOpen();
    const a = parseInput(schemas.tenant, input, 'sweepExpired');
    const now = this.now();
    const out: string[] = [];
    for (let offset = 0; ; offset += 1000) {
      const page = await this.driver.listRecords(a.tenant, { limit: 1000, offset });
      for (const r of page) if (r.expiresAt !== null && r.expiresAt <= now) out.push(r.id);
      if (page.length < 1000) break;
    }
    for (const id of out) await this.delete({ tenant: a.tenant, id, reason: 'retention' });
    return out;
  }

  // ------------------------------------------------------------------ audit

  /**
   * Sign a checkpoint of each tenant's chain head (or one tenant's) with the Ed25519 key, store
   * it, and hand it to `onCheckpoint` to be kept outside the database. Tenants whose head has
   * not moved since their last checkpoint are skipped unless `force`.
   * @throws `INVALID_ARGUMENT` when no checkpoint key is configured.
   */
  async checkpoint(input: { tenant?: string; force?: boolean } = {}): Promise<Checkpoint[]> {
    this.assertOpen();
    const { signCheckpoint } = await import('../core/audit.js');
    if (this.checkpointKey === null) throw new MemauthError('INVALID_ARGUMENT', 'checkpoint: no Ed25519 checkpoint key is configured', {});
    const tenants = input.tenant !== undefined ? [parseInput(schemas.tenant, { tenant: input.tenant }, 'checkpoint').tenant] : await this.driver.tenants();
    const out: Checkpoint[] = [];
    for (const t of tenants) {
      const c = await this.driver.transaction(t, async (tx) => {
        const head = await tx.auditHead(t);
        if (!head) return null;
        const last = await tx.latestCheckpoint(t);
        if (input.force !== true && last !== null && last.seq === head.seq && last.hash === head.hash) return null;
        // never sign a head that contradicts an earlier checkpoint of ours (a truncated or rewritten
        // chain): signing it would make the next verification pass
        const pub = this.publicKey();
        const ours = [...(this.externalCheckpoints?.() ?? []).filter((c) => c.tenant === t), ...(last ? [last] : [])].filter((c) => pub === null || c.publicKey === pub);
        const newest = ours.sort((x, y) => y.seq - x.seq)[0];
        for (const cp of [newest, last].filter((c): c is Checkpoint => c !== undefined && c !== null)) {
          const [e] = cp.seq <= head.seq ? await tx.auditRange(t, cp.seq, cp.seq) : [];
          if (!e || e.hash !== cp.hash) {
            throw new MemauthError('DATABASE_CORRUPT', `checkpoint: tenant ${t}'s audit chain contradicts its signed checkpoint at entry ${cp.seq}; run memauth audit verify`, { tenant: t, seq: cp.seq });
          }
        }
        const cp = signCheckpoint(t, head, this.now(), this.checkpointKey as string);
        await tx.insertCheckpoint(cp);
        return cp;
      });
      if (c) {
        out.push(c);
        this.onCheckpoint?.(c);
      }
    }
    return out;
  }

  /** The checkpoint key's public half (SPKI DER, base64), or null without a key. */
  private publicKey(): string | null {
    if (this.checkpointKey === null) return null;
    try {
      return createPublicKey(createPrivateKey(this.checkpointKey)).export({ type: 'spki', format: 'der' }).toString('base64');
    } catch {
      return null;
    }
  }

  /**
   * Verify the audit chain of every tenant (or one): hashes, sequence, the newest signed
   * checkpoint (truncation), and that every record row matches its audit entry.
   * @returns a report; `ok` is false with the first bad entry named per tenant.
   */
  async verifyAudit(input: { tenant?: string } = {}): Promise<AuditReport> {
    this.assertOpen();
    const a = parseInput(schemas.verify, input, 'verifyAudit');
    return verifyStore(this.driver, a.tenant, this.externalCheckpoints?.() ?? [], this.publicKey() ?? undefined);
  }

  /**
   * Rebuild a decision from the audit log alone — dependencies, their lineage to the roots,
   * origins, corroborations, confirmations, the policy text of its version — and re-evaluate it.
   * @throws `DECISION_NOT_FOUND`, `POLICY_NOT_FOUND`, `TENANT_REQUIRED`.
   */
  async replay(input: In<'replay'>): Promise<ReplayResult> {
    this.assertOpen();
    const a = parseInput(schemas.replay, input, 'replay');
    return replayDecision(this.driver, a.tenant, a.decisionId);
  }

  /** Close the store: writes a final checkpoint when a key is configured, then closes the driver. */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.checkpointKey !== null) {
      try {
        await this.checkpoint();
      } catch {
        // closing must not fail because a checkpoint could not be written
      }
    }
    this.closed = true;
    await this.driver.close();
  }
}

/** Does a record row match the write/derive audit entry that created it? */
export function recordMatchesEntry(r: MemoryRecord, e: AuditEntry): boolean {
  if (e.op !== 'write' && e.op !== 'derive') return false;
  const p = e.payload as Record<string, unknown>;
  if (p.refused !== undefined || p.recordId !== r.id || p.contentHash !== r.contentHash || p.scope !== r.scope) return false;
  if ((p.expiresAt ?? null) !== r.expiresAt || p.createdAt !== r.createdAt) return false;
  if (hashCanonical(p.origin) !== hashCanonical(r.origin) || hashCanonical(p.taint) !== hashCanonical(r.taint) || hashCanonical(p.derivedFrom) !== hashCanonical(r.derivedFrom)) return false;
  if (p.writeReason !== r.audit.writeReason || e.policyVersion !== r.audit.policyVersion) return false;
  if (r.content !== null && sha256Hex(r.content) !== r.contentHash) return false;
  return true;
}

/** Does a corroboration row match its `corroborate` audit entry? */
export function corroborationMatchesEntry(c: Corroboration, e: AuditEntry): boolean {
  const p = e.payload as Record<string, unknown>;
  return e.op === 'corroborate' && p.refused === undefined && p.corroborationId === c.id && p.recordId === c.recordId && p.principalId === c.principalId && p.authority === c.authority && p.domain === c.domain && p.evidenceRef === c.evidenceRef && p.at === c.at;
}

/** Does a confirmation row match its `confirm` audit entry? */
export function confirmationMatchesEntry(c: Confirmation, e: AuditEntry): boolean {
  const p = e.payload as { refused?: unknown; confirmation?: unknown };
  if (e.op !== 'confirm' || p.refused !== undefined || typeof p.confirmation !== 'object' || p.confirmation === null) return false;
  const { auditSeq: _seq, ...row } = c;
  return hashCanonical(p.confirmation) === hashCanonical(row);
}
