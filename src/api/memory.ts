import { createPrivateKey, createPublicKey, randomUUID } from 'node:crypto';
import { type AuditEntry, type AuditOp, type Checkpoint, nextEntry } from '../core/audit.js';
import { type Authority, TRUSTED_THRESHOLD, atLeast, minAuthority } from '../core/authority.js';
import { hashCanonical } from '../core/canonical.js';
import { contentHashMatches, contentHashOf, isKeyedHash, newContentKey } from '../core/content-hash.js';
import { derivedTaint, provesNarrowInputs, writeTaint } from '../core/derivation.js';
import { findEchoes } from '../core/echo.js';
import { normalizeDomain } from '../core/domain.js';
import { MemauthError } from '../core/errors.js';
import { type CorroborationView, corroborationViews } from '../core/exposure.js';
import { type FactsBundle, type LineageSets, type RecordFacts, corroborationOf, dependencyFacts, memoryRefId } from '../core/facts.js';
import { type ConfirmationCandidate, type DependencyFacts, decide } from '../core/gate.js';
import { type Policy, argumentTypes, disallowedArguments, modeFor, originAuthority, riskTier, selfSource, sourceAuthority } from '../core/policy.js';
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
} from '../core/types.js';
import { type MatchText, normalizeText, prepareText, significantTokens } from '../core/values.js';
import { valueProvenance } from '../core/provenance.js';
import { type CacheOptions, CachingDriver, cachedCorroborationList, derivedMemo } from '../store/cache.js';
import type { SearchHit, StorageDriver, StorageTx } from '../store/driver.js';
import { PrincipalVerifier } from './principals.js';
import { type AuditReport, verifyStore } from './verify.js';
import { type ReplayResult, replayDecision } from './replay.js';
import { checkSession, joinSession } from './sessions.js';
import { type Evaluation, confirmationPayloadMatches, resolveRequester, usableByChecked } from './requesters.js';
import { parseAuthorize, parseInput, schemas } from './validation.js';
import type { z } from 'zod';

type In<K extends keyof typeof schemas> = z.input<(typeof schemas)[K]>;

/** A record as `get` returns it: the stored record plus what the gate would see of it now. */
export interface RecordView extends MemoryRecord {
  /** lowestAuthority, or lifted by k independent trusted corroborations. */
  readonly actionAuthority: Authority;
  /** every corroboration recorded; its evidence is withheld (null) when it would show a lower principal's text as part of this record. */
  readonly corroborations: readonly CorroborationView[];
  /** ids of deleted records in this record's lineage (docs/design.md: derived records show `deleted_source`). */
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

/**
 * Where the time of one operation went, for the performance suite (`npm run perf`): nanoseconds
 * of wall time on this thread. Waiting for the write lock and for the COMMIT is not included.
 */
export interface OpTiming {
  readonly op: 'write' | 'derive' | 'authorize';
  /**
   * Reported synchronously inside the transaction: `decided` (authorize) the moment the decision
   * and its audit payload are ready — the entry not yet chained, hashed, written or committed;
   * `written` once the record or decision and its audit entry are written, not yet committed.
   * `done` once the transaction has committed.
   */
  readonly phase: 'decided' | 'written' | 'done';
  /** before the transaction: input validation, policy look-ups, argument hashing. */
  readonly beforeNs: number;
  /** inside the transaction body, from its start to this phase (`done`: the whole body). */
  readonly bodyNs: number;
}

/** Options of the {@link Memory} constructor (most callers use `openMemory`). */
export interface MemoryOptions {
  /** the store; its transactions go through a read cache when it supports one (see `cache`). */
  readonly driver: StorageDriver;
  /** the loaded policy every decision and audit entry records. */
  readonly policy: Policy;
  /** clock, for tests of expiry; default `() => new Date()`. */
  readonly clock?: () => Date;
  /** Ed25519 private key (PEM) for signed checkpoints; without one, `checkpoint()` refuses. */
  readonly checkpointKey?: string | null;
  /** called with each new checkpoint so it can be kept outside the database (e.g. a sidecar file). */
  readonly onCheckpoint?: (c: Checkpoint) => void;
  /** externally kept checkpoints, the newest per tenant is used by `verifyAudit`. */
  readonly externalCheckpoints?: () => Checkpoint[];
  /** called after each write, derive and authorize with where its time went (benchmarks); off by default. */
  readonly onTiming?: (t: OpTiming) => void;
  /**
   * Read cache for transactions (`src/store/cache.ts`): on by default when the driver can report
   * changes (SQLite can); `false` turns it off. It is emptied whenever anything but this facade
   * changed the store, so it never serves what the store no longer holds.
   */
  readonly cache?: boolean | CacheOptions;
}

/** A refusal found inside a transaction: logged in the chain (by {@link Memory.refuse}) after it rolled back. */
class Refusal {
  constructor(
    readonly payload: Record<string, unknown>,
    readonly error: MemauthError,
  ) {}
}

/** Lineage summary memoised per record object: writers of the record and its ancestors; their domains once all are known. */
interface LineageMemo {
  readonly principals: ReadonlySet<string>;
  domains?: ReadonlySet<string>;
  /** the record or an ancestor is missing or does not match its audit entry (see {@link LineageSets}). */
  readonly unverified: boolean;
}

/** A record's gate facts but its status, with the corroboration list they were computed from (see `dependencyVerdicts`). */
interface GateVerdict {
  readonly corroborations: object;
  readonly lowestAuthority: Authority;
  readonly actionAuthority: Authority;
  readonly corroborationAttempted: boolean;
  readonly verified: boolean;
}

const EMPTY_BUNDLE: FactsBundle = { records: new Map(), domains: new Map(), corroborations: new Map() };

const noop = (): void => undefined;

const unknownPrincipal = (tenant: string, id: string): MemauthError =>
  new MemauthError('UNKNOWN_PRINCIPAL', `principal ${JSON.stringify(id)} is not registered in tenant ${JSON.stringify(tenant)} (or its row does not match its registration in the audit chain: run memauth audit verify); register it first (memauth principal add)`, { tenant, principal: id });
const newId = (prefix: string): string => `${prefix}_${randomUUID().replace(/-/g, '')}`;

/** SHA-256 of the RFC 8785 canonical JSON of an action's arguments: what a confirmation binds. */
export function argsHashOf(args: Readonly<Record<string, unknown>>): string {
  return hashCanonical(args);
}

/**
 * memauth's library facade: a memory store whose action authority is bound to write-time
 * origin (docs/design.md), over a {@link StorageDriver}. Create it with `openMemory`.
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
  private readonly onTiming: ((t: OpTiming) => void) | undefined;
  /** the driver behind its read cache: every transaction goes through it. */
  private readonly store: StorageDriver;
  /**
   * Memos keyed by the record (or corroboration, confirmation) object the store returned. The
   * cache hands out the same frozen object for as long as the row is known unchanged, and a new
   * one after anything changed behind its back; a driver without a cache returns new objects
   * every time. So a memo never outlives the row it describes:
   * - `verified`: the row matches the audit entry that recorded it (checked once per object);
   * - `texts`: the record's content prepared for value matching;
   * - `lineages`: writers of the record and of all its ancestors (immutable: derivation edges and
   *   origins never change), so a decision does not walk a deep chain;
   * - `facts`: the record's gate facts (needs `verified`).
   */
  private readonly verified = new WeakMap<object, boolean>();
  private readonly texts = new WeakMap<MemoryRecord, MatchText>();
  private readonly lineages = new WeakMap<MemoryRecord, LineageMemo>();
  private readonly facts = new WeakMap<MemoryRecord, RecordFacts>();
  /** see {@link dependencyVerdicts} */
  private readonly gateVerdicts = new WeakMap<MemoryRecord, GateVerdict>();
  /** principal rows checked against their registration entries (memoised per row object). */
  private readonly principals = new PrincipalVerifier();
  private closed = false;

  constructor(opts: MemoryOptions) {
    this.driver = opts.driver;
    this.policy = opts.policy;
    this.clock = opts.clock ?? (() => new Date());
    this.checkpointKey = opts.checkpointKey ?? null;
    this.onCheckpoint = opts.onCheckpoint;
    this.externalCheckpoints = opts.externalCheckpoints;
    this.onTiming = opts.onTiming;
    this.store = opts.cache === false ? opts.driver : CachingDriver.wrap(opts.driver, typeof opts.cache === 'object' ? opts.cache : {});
  }

  private now(): string {
    return this.clock().toISOString();
  }

  private assertOpen(): void {
    if (this.closed) throw new MemauthError('CLOSED', 'this memory is closed; open it again');
  }

  /** A start time for {@link OpTiming}, or 0n when nobody listens. */
  private t0(): bigint {
    return this.onTiming ? process.hrtime.bigint() : 0n;
  }

  /**
   * Run `body` in a driver transaction; when timings are requested, report where the time of
   * operation `op` went (`mark()` notes the decision being ready, for authorize).
   */
  private async transact<T>(tenant: string, op: OpTiming['op'], t0: bigint, body: (tx: StorageTx, mark: (phase: 'decided' | 'written') => void) => Promise<T>): Promise<T> {
    const report = this.onTiming;
    if (!report) return this.store.transaction(tenant, (tx) => body(tx, noop));
    const beforeNs = Number(process.hrtime.bigint() - t0);
    let tb0 = 0n;
    let tb1 = 0n;
    const out = await this.store.transaction(tenant, async (tx) => {
      tb0 = process.hrtime.bigint();
      try {
        return await body(tx, (phase) => report({ op, phase, beforeNs, bodyNs: Number(process.hrtime.bigint() - tb0) }));
      } finally {
        tb1 = process.hrtime.bigint();
      }
    });
    report({ op, phase: 'done', beforeNs, bodyNs: Number(tb1 - tb0) });
    return out;
  }

  private async audit(tx: StorageTx, tenant: string, op: AuditOp, payload: Record<string, unknown>): Promise<AuditEntry> {
    // asked in every transaction (the cache answers): a flag kept here could outlive a rolled back entry
    if (!(await tx.auditHasPolicy(tenant, this.policy.version))) {
      await tx.putPolicyText(this.policy.version, this.policy.text, this.now());
      const head = await tx.auditHead(tenant);
      await tx.appendAudit(nextEntry(tenant, head, 'policy', { policyVersion: this.policy.version, text: this.policy.text, at: this.now() }, this.policy.version));
    }
    const head = await tx.auditHead(tenant);
    const e = nextEntry(tenant, head, op, payload, this.policy.version);
    await tx.appendAudit(e);
    return e;
  }

  /** Log a refused attempt in the tenant's chain, then throw the error. */
  private async refuse(tenant: string, op: AuditOp, payload: Record<string, unknown>, err: MemauthError): Promise<never> {
    try {
      await this.store.transaction(tenant, (tx) => this.audit(tx, tenant, op, { refused: err.code, message: err.message, ...payload, at: this.now() }));
    } catch {
      // the refusal stands even if it could not be logged
    }
    throw err;
  }

  /** Inside a transaction: the principal, or a {@link Refusal} to log once the transaction is over. */
  private async principalIn(tx: StorageTx, tenant: string, id: string): Promise<Principal> {
    const p = await this.principals.get(tx, tenant, id);
    if (!p) throw new Refusal({ principalId: id }, unknownPrincipal(tenant, id));
    return p;
  }

  /** Run `run`; a {@link Refusal} it throws is logged in the tenant's chain (unless `op` is null: nothing is recorded) and its error thrown. */
  private async refusing<T>(tenant: string, op: AuditOp | null, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (e) {
      if (e instanceof Refusal) return op === null ? Promise.reject(e.error) : this.refuse(tenant, op, e.payload, e.error);
      throw e;
    }
  }

  private async principalOrThrow(tx: StorageTx | StorageDriver, tenant: string, id: string, op: AuditOp): Promise<Principal> {
    const p = await this.principals.get(tx, tenant, id);
    if (!p) {
      return this.refuse(tenant, op, { principalId: id }, unknownPrincipal(tenant, id));
    }
    return p;
  }

  // ------------------------------------------------------------------ principals

  /**
   * Register an authenticated writer in a tenant (docs/design.md § Principals and origin).
   *
   * @param input.kind - `system | user | tool | agent | external`; fixes the highest possible ceiling.
   * @param input.maxAuthority - the principal's ceiling; defaults to its kind's ceiling.
   * @param input.domain - its independence domain (administrative domain / upstream provider);
   *   stored in canonical form (`normalizeDomain`, core/domain.ts: NFC, trimmed, lower case; a
   *   host name also through IDNA and without its trailing dot), so spelling variants are one domain.
   * @throws MemauthError `AUTHORITY_EXCEEDS_PRINCIPAL` when maxAuthority is above the kind's ceiling,
   *   `PRINCIPAL_EXISTS`, `TENANT_REQUIRED`, `INVALID_ARGUMENT`.
   */
  async registerPrincipal(input: In<'registerPrincipal'>): Promise<Principal> {
    this.assertOpen();
    const a = parseInput(schemas.registerPrincipal, input, 'registerPrincipal');
    const ceiling = KIND_CEILING[a.kind];
    const maxAuthority = a.maxAuthority ?? ceiling;
    if (!atLeast(ceiling, maxAuthority)) {
      return this.refuse(a.tenant, 'principal', { principalId: a.id, kind: a.kind, claimedAuthority: maxAuthority }, new MemauthError('AUTHORITY_EXCEEDS_PRINCIPAL', `a principal of kind ${a.kind} can hold at most ${ceiling}, not ${maxAuthority}`, { kind: a.kind, ceiling, requested: maxAuthority }));
    }
    return this.store.transaction(a.tenant, async (tx) => {
      if (await tx.getPrincipal(a.tenant, a.id)) throw new MemauthError('PRINCIPAL_EXISTS', `principal ${JSON.stringify(a.id)} already exists in tenant ${JSON.stringify(a.tenant)}`, { tenant: a.tenant, principal: a.id });
      // independence domains are stored in canonical form: "ERP-Vendor " is "erp-vendor", "Ledger.ACME." is "ledger.acme"
      const p: Principal = { tenant: a.tenant, id: a.id, kind: a.kind, maxAuthority, domain: normalizeDomain(a.domain), createdAt: this.now() };
      await tx.insertPrincipal(p);
      await this.audit(tx, a.tenant, 'principal', { principalId: p.id, kind: p.kind, maxAuthority: p.maxAuthority, domain: p.domain, at: p.createdAt });
      return p;
    });
  }

  /**
   * Principals of a tenant whose rows match their registration in the audit chain (rows inserted
   * or altered outside the API are left out; `memauth audit verify` names them). @throws `TENANT_REQUIRED`
   */
  async listPrincipals(input: In<'tenant'>): Promise<Principal[]> {
    this.assertOpen();
    const a = parseInput(schemas.tenant, input, 'listPrincipals');
    return this.principals.list(this.driver, a.tenant);
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
    inputs = await this.untrustForged(tx, base.tenant, inputs);
    const own = writeTaint({ writer: base.principal, origin, sourceAt });
    const taint =
      edges.length === 0 && op === 'write'
        ? own
        : (() => {
            const t = derivedTaint({ writer: base.principal, writerAuthority: base.origin, sourceRef: base.sourceRef, sourceAt, transform, edges, inputs });
            return { ...t, channels: [...new Set([...t.channels, ...own.channels])].sort() };
          })();
    const contentHash = contentHashOf(base.content, await tx.ensureTenantContentKey(base.tenant, newContentKey(), base.writtenAt));
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
    // built from the very values its audit entry was just built from: it matches the entry
    this.verified.set(record, true);
    // what is written in a session is in that session's context from now on
    if (base.session !== undefined) await tx.addSessionReads(base.tenant, base.session, [record.id], base.writtenAt);
    return record;
  }

  /**
   * Inputs of a derivation as the taint computation may trust them: a row that does not match the
   * audit entry that recorded it (forged or altered outside the API) carries no authority — it
   * enters as `external_untrusted`, as it does at the gate — so deriving from it, echoing it or
   * reading it in a session can never launder a forged taint into a genuine record.
   */
  private async untrustForged(tx: StorageTx, tenant: string, inputs: Map<string, MemoryRecord>): Promise<Map<string, MemoryRecord>> {
    if (inputs.size === 0) return inputs;
    const verified = await this.verifiedRecords(tx, tenant, [...inputs.values()]);
    if (verified.size === inputs.size) return inputs;
    const out = new Map<string, MemoryRecord>();
    for (const [k, r] of inputs) out.set(k, verified.has(r.id) ? r : { ...r, taint: { ...r.taint, lowestAuthority: 'external_untrusted' } });
    return out;
  }

  /**
   * Records of the session whose text this content repeats (recalled memory echoed back,
   * docs/design.md § Derivation and taint): `exact` only for the same text up to NFC, line endings and
   * trailing white space; `contained` when the content includes a record's text or uses only its
   * significant words (see core/echo.ts).
   */
  private static echoes(content: string, reads: readonly MemoryRecord[]): { exact: MemoryRecord | null; contained: MemoryRecord[] } {
    return findEchoes(content, reads);
  }

  /**
   * Write a memory. Its origin is decided by the store, never claimed by the caller:
   * `min(principal.maxAuthority, authorityOf(source))` (docs/design.md § Principals and origin).
   *
   * @param input.source - where the text came from (URL, message id, `principal:<id>` for the
   *   writer's own statement — the default). Judged by the policy's source rules.
   * @param input.sourceAt - when the source said it (ISO-8601); default now; not in the future.
   * @param input.authority - an optional claim; it can only lower the origin. Above the
   *   principal's ceiling it is refused with `AUTHORITY_EXCEEDS_PRINCIPAL` and logged.
   * @param input.session - the session the write happens in. Recalled text re-ingested in it —
   *   the same text as a record read there, up to NFC, line endings and trailing white space
   *   (core/echo.ts) — resolves to the original record (`created: false`); any other text is a
   *   new record (deriving from a read record whose text it contains). An `agent` principal's write in a
   *   session derives from every record read in it (context taint).
   * @param input.requester - who the call is made for (the server: the token's principal); a
   *   session belongs to whoever used it first (see core/session.ts). Omitted: the application.
   * @throws `TENANT_REQUIRED`, `SCOPE_REQUIRED`, `UNKNOWN_PRINCIPAL`, `AUTHORITY_EXCEEDS_PRINCIPAL`, `INVALID_ARGUMENT`,
   *   `SESSION_FORBIDDEN` for a session that belongs to another principal.
   */
  async write(input: In<'write'>): Promise<WriteResult> {
    this.assertOpen();
    const t0 = this.t0();
    const a = parseInput(schemas.write, input, 'write');
    const now = this.now();
    if (a.sourceAt !== undefined && new Date(a.sourceAt).toISOString() > now) throw new MemauthError('INVALID_ARGUMENT', 'write: sourceAt is in the future', { field: 'sourceAt' });
    if (a.expiresAt !== undefined && new Date(a.expiresAt).toISOString() <= now) throw new MemauthError('INVALID_ARGUMENT', 'write: expiresAt is not in the future', { field: 'expiresAt' });
    return this.refusing(a.tenant, 'write', () => this.transact(a.tenant, 'write', t0, async (tx, mark) => {
      const p = await this.principalIn(tx, a.tenant, a.principal);
      if (a.authority !== undefined && !atLeast(p.maxAuthority, a.authority)) {
        throw new Refusal({ principalId: p.id, claimedAuthority: a.authority }, new MemauthError('AUTHORITY_EXCEEDS_PRINCIPAL', `principal ${p.id} (${p.kind}) can write at most ${p.maxAuthority}; it claimed ${a.authority}`, { principal: p.id, ceiling: p.maxAuthority, claimed: a.authority }));
      }
      const sourceRef = a.source ?? selfSource(p.id);
      let origin = originAuthority(this.policy, sourceRef, p);
      if (a.authority !== undefined) origin = minAuthority(origin, a.authority);
      if (a.session !== undefined) await joinSession(tx, a.tenant, a.session, a.requester ?? null, now);
      const reads = await this.sessionRecords(tx, a.tenant, a.session);
      const { exact, contained } = Memory.echoes(a.content, reads);
      if (exact) {
        await this.audit(tx, a.tenant, 'write', { refused: 'RECALL_ECHO', echoOf: exact.id, principalId: p.id, sourceRef, contentHash: contentHashOf(a.content, await tx.ensureTenantContentKey(a.tenant, newContentKey(), now)), sessionId: a.session ?? null, at: now });
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
      mark('written');
      return { record, created: true, echoOf: null };
    }));
  }

  /**
   * Derive a new record from others — summarize, extract, merge, dedup, rewrite (an update is a
   * new version), import, embed (docs/design.md § Derivation and taint). Taint is the minimum over
   * every input: the declared `from` plus every record read in the same session, unless
   * `narrowInputs` is proven (verbatim extraction from the declared inputs only). With no inputs
   * at all the result is at most `model_inferred`. Origin, sources and the oldest source date
   * are carried; nothing is reset.
   *
   * @throws `RECORD_NOT_FOUND` for an input not in the tenant, `UNKNOWN_PRINCIPAL`, `TENANT_REQUIRED`, `INVALID_ARGUMENT`,
   *   `SESSION_FORBIDDEN` for a session that belongs to another principal than `requester` (see {@link write}).
   */
  async derive(input: In<'derive'>): Promise<MemoryRecord> {
    this.assertOpen();
    const t0 = this.t0();
    const a = parseInput(schemas.derive, input, 'derive');
    const now = this.now();
    if (a.expiresAt !== undefined && new Date(a.expiresAt).toISOString() <= now) throw new MemauthError('INVALID_ARGUMENT', 'derive: expiresAt is not in the future', { field: 'expiresAt' });
    return this.refusing(a.tenant, 'derive', () => this.transact(a.tenant, 'derive', t0, async (tx, mark) => {
      const p = await this.principalIn(tx, a.tenant, a.principal);
      const sourceRef = a.source ?? selfSource(p.id);
      const origin = originAuthority(this.policy, sourceRef, p);
      const fromIds = [...new Set(a.from)];
      const declared = await tx.getRecords(a.tenant, fromIds);
      const found = new Set(declared.map((r) => r.id));
      const missing = fromIds.filter((id) => !found.has(id));
      if (missing.length > 0) throw new MemauthError('RECORD_NOT_FOUND', `derive: no record ${missing.map((m) => JSON.stringify(m)).join(', ')} in tenant ${JSON.stringify(a.tenant)}`, { ids: missing });
      if (a.session !== undefined) await joinSession(tx, a.tenant, a.session, a.requester ?? null, now);
      const reads = (await this.sessionRecords(tx, a.tenant, a.session)).filter((r) => !fromIds.includes(r.id));
      const narrowed = a.narrowInputs === true && provesNarrowInputs(a.content, declared);
      const edges: DerivationEdge[] = declared.map((r) => ({ from: r.id, transform: a.transform, kind: 'declared' }));
      if (!narrowed) for (const r of reads) edges.push({ from: r.id, transform: a.transform, kind: 'session' });
      const inputs = new Map([...declared, ...reads].map((r) => [r.id, r]));
      const scope = a.scope ?? declared[0]?.scope;
      if (scope === undefined) throw new MemauthError('SCOPE_REQUIRED', 'derive: a scope is required when there are no declared inputs', { field: 'scope' });
      const record = await this.insertNew(
        tx,
        'derive',
        { tenant: a.tenant, scope, content: a.content, principal: p, sourceRef, origin, writtenAt: now, expiresAt: a.expiresAt !== undefined ? new Date(a.expiresAt).toISOString() : null, reason: a.reason ?? a.transform, session: a.session },
        edges,
        inputs,
        now,
        a.transform,
      );
      mark('written');
      return record;
    }));
  }

  private async markRead(tenant: string, session: string | undefined, ids: string[], requester: string | null): Promise<void> {
    if (session === undefined) return;
    const now = this.now();
    await this.store.transaction(tenant, async (tx) => {
      // checked even when nothing is read: a session is used only by its owner
      await joinSession(tx, tenant, session, requester, now);
      if (ids.length > 0) await tx.addSessionReads(tenant, session, ids, now);
    });
  }

  /**
   * Get one record with its current action authority, corroborations and deleted sources.
   * Marks it as read in `session` (it then taints what the session derives and decides).
   * A corroboration's evidence text is in the view only when its authority is at least the
   * policy's corroboration floor and the record's lowest authority; otherwise `evidenceRef` is
   * null and `evidenceWithheld` true (docs/design.md § What the model sees).
   * @throws `RECORD_NOT_FOUND` (also for another tenant's id), `TENANT_REQUIRED`, `SESSION_FORBIDDEN`
   *   for a session that belongs to another principal than `requester` (see {@link write}).
   */
  async get(input: In<'get'>): Promise<RecordView> {
    this.assertOpen();
    const a = parseInput(schemas.get, input, 'get');
    const [rec] = await this.driver.getRecords(a.tenant, [a.id]);
    if (!rec) throw new MemauthError('RECORD_NOT_FOUND', `no record ${JSON.stringify(a.id)} in tenant ${JSON.stringify(a.tenant)}`, { id: a.id, tenant: a.tenant });
    await this.markRead(a.tenant, a.session, rec.status === 'active' ? [rec.id] : [], a.requester ?? null);
    return (await this.views(a.tenant, [rec]))[0] as RecordView;
  }

  /**
   * Views of records. A corroboration's evidence is shown only when it cannot lower the record it
   * is shown with (core/exposure.ts): otherwise `evidenceRef: null, evidenceWithheld: true`
   * (docs/design.md § What the model sees).
   */
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
      const corroborations = corroborationViews(bundle.bundle.corroborations.get(r.id) ?? [], r.taint.lowestAuthority, floor);
      return { ...r, status, actionAuthority, corroborations, deletedSources };
    });
  }

  /**
   * Full-text search (BM25) over active, unexpired records of one tenant and scope. Hits are
   * marked as read in `session`.
   * @returns hits, best first, at most `limit` (default 10).
   * @throws `TENANT_REQUIRED`, `SCOPE_REQUIRED`, `SESSION_FORBIDDEN` (see {@link get}).
   */
  async search(input: In<'search'>): Promise<SearchHit[]> {
    this.assertOpen();
    const a = parseInput(schemas.search, input, 'search');
    const hits = await this.driver.search(a.tenant, a.scope, a.query, a.limit ?? 10, this.now());
    await this.markRead(a.tenant, a.session, hits.map((h) => h.record.id), a.requester ?? null);
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
   * of docs/design.md § Corroboration hold — the result says whether and why not.
   *
   * @throws `RECORD_NOT_FOUND`, `RECORD_DELETED`, `UNKNOWN_PRINCIPAL`, `TENANT_REQUIRED`.
   */
  async corroborate(input: In<'corroborate'>): Promise<CorroborateResult> {
    this.assertOpen();
    const a = parseInput(schemas.corroborate, input, 'corroborate');
    const now = this.now();
    // the principal is read inside the transaction: outside one, a group commit's uncommitted rows are visible
    return this.refusing(a.tenant, 'corroborate', () => this.store.transaction(a.tenant, async (tx) => {
      const p = await this.principalIn(tx, a.tenant, a.principal);
      const [rec] = await tx.getRecords(a.tenant, [a.recordId]);
      if (!rec) throw new MemauthError('RECORD_NOT_FOUND', `no record ${JSON.stringify(a.recordId)} in tenant ${JSON.stringify(a.tenant)}`, { id: a.recordId });
      if (rec.status === 'deleted') throw new MemauthError('RECORD_DELETED', `record ${a.recordId} is deleted and cannot be corroborated`, { id: a.recordId });
      const evId = memoryRefId(a.evidence);
      let evidenceAuthority: Authority;
      if (evId !== null) {
        const [ev] = await tx.getRecords(a.tenant, [evId]);
        if (!ev) throw new MemauthError('RECORD_NOT_FOUND', `evidence record ${JSON.stringify(evId)} is not in tenant ${JSON.stringify(a.tenant)}`, { id: evId });
        // evidence whose row does not match its audit entry (forged outside the API) vouches for nothing
        evidenceAuthority = (await this.verifiedRecords(tx, a.tenant, [ev])).has(ev.id) ? ev.taint.lowestAuthority : 'external_untrusted';
      } else {
        evidenceAuthority = sourceAuthority(this.policy, a.evidence, p);
      }
      const c: Corroboration = { id: newId('cor'), tenant: a.tenant, recordId: rec.id, principalId: p.id, authority: minAuthority(p.maxAuthority, evidenceAuthority), domain: p.domain, evidenceRef: a.evidence, at: now };
      const entry = await this.audit(tx, a.tenant, 'corroborate', { corroborationId: c.id, recordId: c.recordId, principalId: c.principalId, authority: c.authority, domain: c.domain, evidenceRef: c.evidenceRef, at: c.at });
      await tx.insertCorroboration(c, entry.seq);
      const bundle = await this.gateFacts(tx, a.tenant, [rec]);
      const { k, minAuthority: floor } = this.policy.document.corroboration;
      const r = corroborationOf(rec.id, bundle, k, floor, now);
      const rejection = r.rejected.find((x) => x.id === c.id)?.reason ?? null;
      // a forged row has no authority, corroborated or not (as in get() and at the gate)
      const actionAuthority = bundle.records.get(rec.id)?.verified === true ? r.actionAuthority : 'external_untrusted';
      return { corroboration: c, counted: rejection === null && r.counted.some((x) => x.id === c.id), rejection, actionAuthority, independentDomains: r.independentDomains };
    }));
  }

  // ------------------------------------------------------------------ confirmation

  /**
   * A human confirmation scoped to one exact action (docs/design.md § Human confirmation): issued by
   * a `user` principal, bound to `{action type, resource, args hash, memoryIds?}`, single-use by
   * default, expiring (default and maximum TTL from the policy).
   *
   * @param input.action - `{type, args?, resource?}`; give `args` (exact) or `argsHash`.
   * @param input.usableBy - the principals whose requests may use it (never an `external` one);
   *   omitted: the default of core/confirmation.ts `requesterAdmitted`.
   * @throws `CONFIRMATION_REQUIRES_USER` (logged) when the principal is not a user,
   *   `CONFIRMATION_USABLE_BY_EXTERNAL` / `UNKNOWN_PRINCIPAL` for a bad `usableBy`,
   *   `INVALID_ARGUMENT` without args/argsHash or with a TTL above the policy's maximum.
   */
  async confirm(input: In<'confirm'>): Promise<Confirmation> {
    this.assertOpen();
    const a = parseInput(schemas.confirm, input, 'confirm');
    const p = await this.principalOrThrow(this.driver, a.tenant, a.principal, 'confirm');
    if (p.kind !== 'user') {
      return this.refuse(a.tenant, 'confirm', { principalId: p.id, kind: p.kind, actionType: a.action.type }, new MemauthError('CONFIRMATION_REQUIRES_USER', `only a user principal can confirm an action; ${p.id} is of kind ${p.kind}`, { principal: p.id, kind: p.kind }));
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
    let confirmation = c;
    return this.refusing(a.tenant, 'confirm', () => this.store.transaction(a.tenant, async (tx) => {
      // judged again inside the transaction: the read above, outside one, sees a group commit's
      // uncommitted rows (a user row that may yet be rolled back)
      const q = await this.principalIn(tx, a.tenant, a.principal);
      if (q.kind !== 'user') throw new Refusal({ principalId: q.id, kind: q.kind, actionType: a.action.type }, new MemauthError('CONFIRMATION_REQUIRES_USER', `only a user principal can confirm an action; ${q.id} is of kind ${q.kind}`, { principal: q.id, kind: q.kind }));
      if (a.usableBy !== undefined) confirmation = { ...c, usableBy: await usableByChecked(tx, a.tenant, a.usableBy) };
      if (c.memoryIds !== null) {
        const found = new Set((await tx.getRecords(a.tenant, c.memoryIds)).map((r) => r.id));
        const missing = c.memoryIds.filter((m) => !found.has(m));
        if (missing.length > 0) throw new MemauthError('RECORD_NOT_FOUND', `confirm: memoryIds names no record ${missing.map((m) => JSON.stringify(m)).join(', ')} in tenant ${JSON.stringify(a.tenant)}`, { ids: missing });
      }
      const entry = await this.audit(tx, a.tenant, 'confirm', { confirmation, at: c.createdAt });
      await tx.insertConfirmation(confirmation, entry.seq);
      return confirmation;
    }));
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
    for (const f of await this.recordFacts(src, tenant, recs)) records.set(f.id, f);
    const domains = new Map((await this.principals.list(src, tenant)).map((p) => [p.id, p.domain]));
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
      let ok = this.verified.get(r);
      if (ok === undefined) {
        const [e] = await src.auditRange(tenant, r.auditSeq, r.auditSeq);
        ok = e !== undefined && matches(r, e);
        this.verified.set(r, ok);
      }
      if (ok) out.push(r);
    }
    return out;
  }

  /** Ids of records whose row matches their write/derive audit entry (rows forged outside the API do not). */
  private async verifiedRecords(src: StorageTx | StorageDriver, tenant: string, recs: readonly MemoryRecord[]): Promise<Set<string>> {
    const out = new Set<string>();
    let key: string | null | undefined;
    for (const r of recs) {
      let ok = this.verified.get(r);
      if (ok === undefined) {
        const [e] = await src.auditRange(tenant, r.audit.seq, r.audit.seq);
        if (key === undefined && r.content !== null && isKeyedHash(r.contentHash)) key = await src.tenantContentKey(tenant);
        ok = e !== undefined && recordMatchesEntry(r, e, key);
        this.verified.set(r, ok);
      }
      if (ok) out.add(r.id);
    }
    return out;
  }

  /** Gate facts of records: provenance only, `verified` against their audit entries (memoised per object). */
  private async recordFacts(src: StorageTx | StorageDriver, tenant: string, recs: readonly MemoryRecord[]): Promise<RecordFacts[]> {
    const verified = await this.verifiedRecords(src, tenant, recs.filter((r) => !this.facts.has(r)));
    return recs.map((r) => {
      let f = this.facts.get(r);
      if (!f) {
        f = { id: r.id, lowestAuthority: r.taint.lowestAuthority, originPrincipal: r.origin.principalId, status: r.status === 'deleted' ? 'deleted' : 'active', expiresAt: r.expiresAt, derivedFrom: r.derivedFrom, verified: verified.has(r.id) };
        this.facts.set(r, f);
      }
      return f;
    });
  }

  /** A record's content prepared for value matching (memoised per object). */
  private matchText(r: MemoryRecord): MatchText {
    let t = this.texts.get(r);
    if (!t) {
      t = prepareText(r.content ?? '');
      this.texts.set(r, t);
    }
    return t;
  }

  /**
   * Gate facts of the dependency candidates `recs` (without `why`). What corroboration makes of
   * a record — its action authority — is memoised per record object together with the
   * corroboration list the cache holds for it ({@link cachedCorroborationList}): a hit needs
   * the very row object (the cache hands out a new one after an erasure or any change behind its
   * back) and the very list (a new corroboration makes a new list). Only verdicts that depend on
   * nothing else are kept: none of the record's corroborations cites `memory:` evidence (whose
   * status and expiry can change) and every writer in its lineage is registered. Status and
   * expiry are computed now, on every call.
   */
  private dependencyVerdicts(tx: StorageTx, tenant: string, recs: readonly MemoryRecord[], k: number, floor: Authority, now: string): Map<string, DependencyFacts> | Promise<Map<string, DependencyFacts>> {
    const out = new Map<string, DependencyFacts>();
    let missed: MemoryRecord[] | null = null;
    for (const r of recs) {
      const m = this.gateVerdicts.get(r);
      if (m !== undefined && m.corroborations === cachedCorroborationList(tx, tenant, r.id)) {
        const status = r.status === 'deleted' ? 'deleted' : r.expiresAt !== null && r.expiresAt <= now ? 'expired' : 'active';
        out.set(r.id, { memoryId: r.id, why: [], lowestAuthority: m.lowestAuthority, actionAuthority: m.actionAuthority, status, corroborationAttempted: m.corroborationAttempted, verified: m.verified });
      } else (missed ??= []).push(r);
    }
    // all memoised: no promise hop
    if (missed === null) return out;
    return this.missedVerdicts(tx, tenant, missed, out, k, floor, now);
  }

  private async missedVerdicts(tx: StorageTx, tenant: string, missed: readonly MemoryRecord[], out: Map<string, DependencyFacts>, k: number, floor: Authority, now: string): Promise<Map<string, DependencyFacts>> {
    const bundle = await this.gateFacts(tx, tenant, missed);
    const memo = derivedMemo(tx);
    for (const r of missed) {
      const f = dependencyFacts(r.id, [], bundle, k, floor, now);
      out.set(r.id, f);
      const corroborations = cachedCorroborationList(tx, tenant, r.id);
      if (corroborations === undefined) continue;
      if ((bundle.corroborations.get(r.id) ?? []).some((c) => memoryRefId(c.evidenceRef) !== null)) continue;
      const lineage = this.lineages.get(r) ?? (memo?.getDerived(tenant, r.id) as LineageMemo | undefined);
      if (lineage?.domains === undefined) continue;
      this.gateVerdicts.set(r, { corroborations, lowestAuthority: f.lowestAuthority, actionAuthority: f.actionAuthority, corroborationAttempted: f.corroborationAttempted, verified: f.verified });
    }
    return out;
  }

  /**
   * What the gate needs to decide on `recs` (a closed {@link FactsBundle}, see core/facts.ts):
   * their facts, their corroborations that match audit entries, the evidence records those cite
   * with their lineage, and — instead of every ancestor — each record's lineage summary
   * (writers and their domains, see {@link lineageSets}).
   */
  private async gateFacts(tx: StorageTx, tenant: string, recs: readonly MemoryRecord[]): Promise<FactsBundle> {
    const corroborations = new Map<string, Corroboration[]>();
    for (const c of await this.verifiedRows(tx, tenant, await tx.corroborationsFor(tenant, recs.map((r) => r.id)), corroborationMatchesEntry)) {
      const list = corroborations.get(c.recordId) ?? [];
      list.push(c);
      corroborations.set(c.recordId, list);
    }
    const all = new Map<string, MemoryRecord>(recs.map((r) => [r.id, r]));
    // evidence cited as `memory:<id>` is judged against its own lineage and the corroborated
    // record's lineage: for those records the bundle holds both in full (no summary is used)
    const evidenceIds = new Set<string>();
    const fullLineage = new Set<string>();
    for (const [recordId, list] of corroborations) {
      for (const c of list) {
        const ev = memoryRefId(c.evidenceRef);
        if (ev === null) continue;
        evidenceIds.add(ev);
        fullLineage.add(recordId);
      }
    }
    if (evidenceIds.size > 0) {
      const lineage = await tx.lineage(tenant, [...evidenceIds, ...fullLineage]);
      for (const r of await tx.getRecords(tenant, [...lineage.keys()].filter((id) => !all.has(id)))) all.set(r.id, r);
    }
    const records = new Map<string, RecordFacts>();
    for (const f of await this.recordFacts(tx, tenant, [...all.values()])) records.set(f.id, f);
    const lineage = await this.lineageSets(tx, tenant, recs.filter((r) => !fullLineage.has(r.id)));
    const domains = new Map<string, string>();
    if (all.size > lineage.size) {
      for (const r of all.values()) {
        if (domains.has(r.origin.principalId)) continue;
        const p = await this.principals.get(tx, tenant, r.origin.principalId);
        if (p) domains.set(p.id, p.domain);
      }
    }
    return { records, domains, corroborations, lineage };
  }

  /**
   * Lineage summaries of `recs`: the writers of each record and of all its ancestors, with their
   * domains — what corroboration independence is judged against. Derivation edges and origins
   * never change, so a summary is memoised — by (tenant, id) in the read cache (emptied with it),
   * else per record object — and built from the parents' summaries: a record at the end of a
   * long chain costs one walk of the chain, once (ancestors read in batches, one query per
   * generation), then nothing.
   */
  private async lineageSets(tx: StorageTx, tenant: string, recs: readonly MemoryRecord[]): Promise<Map<string, LineageSets>> {
    const memo = derivedMemo(tx);
    const known = (r: MemoryRecord): LineageMemo | undefined => this.lineages.get(r) ?? (memo?.getDerived(tenant, r.id) as LineageMemo | undefined);
    const remember = (r: MemoryRecord, m: LineageMemo): void => {
      this.lineages.set(r, m);
      memo?.setDerived(tenant, r.id, m);
    };
    const pending = recs.filter((r) => known(r) === undefined);
    const oneOff = new Map<MemoryRecord, LineageMemo>();
    if (pending.length > 0) {
      const byId = new Map<string, MemoryRecord>();
      const tried = new Set<string>();
      let frontier: string[] = [];
      const expand = (r: MemoryRecord): void => {
        byId.set(r.id, r);
        tried.add(r.id);
        if (known(r) !== undefined) return;
        for (const e of r.derivedFrom) {
          if (!tried.has(e.from)) {
            tried.add(e.from);
            frontier.push(e.from);
          }
        }
      };
      pending.forEach(expand);
      while (frontier.length > 0) {
        const next = frontier;
        frontier = [];
        for (const r of await tx.getRecords(tenant, next)) expand(r);
      }
      // a writer is known only from a row that matches its audit entry
      const verified = await this.verifiedRecords(tx, tenant, [...byId.values()].filter((r) => known(r) === undefined));
      for (const r of pending) {
        const made: Array<[MemoryRecord, LineageMemo]> = [];
        const m = Memory.summarize(r, byId, known, made, verified);
        for (const [x, xm] of made) remember(x, xm);
        if (m !== null) oneOff.set(r, m);
      }
    }
    const out = new Map<string, LineageSets>();
    for (const r of recs) {
      const m = (known(r) ?? oneOff.get(r)) as LineageMemo;
      if (m.domains === undefined) {
        const domains = new Set<string>();
        let complete = true;
        for (const pid of m.principals) {
          const p = await this.principals.get(tx, tenant, pid);
          if (p) domains.add(p.domain);
          else complete = false;
        }
        if (!complete) {
          // a writer whose principal row is missing or does not match its registration: its
          // domain is unknown, so independence cannot be judged (fail closed); not memoised
          out.set(r.id, { principals: m.principals, domains, unverified: true });
          continue;
        }
        m.domains = domains;
      }
      out.set(r.id, { principals: m.principals, domains: m.domains, unverified: m.unverified });
    }
    return out;
  }

  /**
   * Summarise `root` and its not yet summarised ancestors in `byId` (post-order, no recursion:
   * chains can be deep), appending them to `made` (and seeing them through `known` from then
   * on). A cycle — possible only among rows forged outside the API — is not memoised: its
   * summary is returned for this decision only, and nothing from this walk is kept.
   */
  private static summarize(
    root: MemoryRecord,
    byId: ReadonlyMap<string, MemoryRecord>,
    known: (r: MemoryRecord) => LineageMemo | undefined,
    made: Array<[MemoryRecord, LineageMemo]>,
    verified: ReadonlySet<string>,
  ): LineageMemo | null {
    if (known(root) !== undefined) return null;
    const local = new Map<string, LineageMemo>();
    const have = (r: MemoryRecord): LineageMemo | undefined => local.get(r.id) ?? known(r);
    const stack: Array<{ r: MemoryRecord; next: number }> = [{ r: root, next: 0 }];
    const onPath = new Set<string>([root.id]);
    let cyclic = false;
    while (stack.length > 0) {
      const top = stack[stack.length - 1] as { r: MemoryRecord; next: number };
      const edge = top.r.derivedFrom[top.next];
      if (edge !== undefined) {
        top.next += 1;
        const parent = byId.get(edge.from);
        if (parent === undefined || have(parent) !== undefined) continue;
        if (onPath.has(parent.id)) {
          cyclic = true;
          continue;
        }
        onPath.add(parent.id);
        stack.push({ r: parent, next: 0 });
        continue;
      }
      stack.pop();
      onPath.delete(top.r.id);
      if (have(top.r) !== undefined) continue;
      const principals = new Set<string>([top.r.origin.principalId]);
      // a row that does not match its audit entry, or a parent that is missing: a writer is unknown
      let unverified = !verified.has(top.r.id);
      for (const e of top.r.derivedFrom) {
        const parent = byId.get(e.from);
        const pm = parent !== undefined ? have(parent) : undefined;
        if (pm) {
          for (const x of pm.principals) principals.add(x);
          if (pm.unverified) unverified = true;
        } else unverified = true;
      }
      local.set(top.r.id, { principals, unverified });
    }
    if (!cyclic) {
      for (const [id, m] of local) made.push([byId.get(id) ?? root, m]);
      return local.get(root.id) ?? null;
    }
    const principals = new Set<string>();
    const seen = new Set<string>();
    const todo = [root];
    while (todo.length > 0) {
      const r = todo.pop() as MemoryRecord;
      if (seen.has(r.id)) continue;
      seen.add(r.id);
      const m = known(r);
      if (m) {
        for (const x of m.principals) principals.add(x);
        continue;
      }
      principals.add(r.origin.principalId);
      for (const e of r.derivedFrom) {
        const parent = byId.get(e.from);
        if (parent) todo.push(parent);
      }
    }
    // only rows forged outside the API form a cycle
    return { principals, unverified: true };
  }

  /**
   * The action gate (docs/design.md § Action gate). Decides, records and audits one proposed action.
   *
   * Dependencies: `dependsOn`, plus every record of the session or `dependsOn` whose content
   * supplies an argument value (value-level provenance), plus — unless `context: 'declared'` —
   * every record read in the session. `userTurn` is the user's current turn (its values count as
   * `user_confirmed`). `confirmationId` cites a confirmation; without it, a matching one is looked up.
   *
   * `requester` is the principal asking (the server sets it from the token; omitted: the
   * application): it is recorded on the decision, a confirmation is used only if it admits the
   * requester (core/confirmation.ts), and the session must be the requester's (its first use
   * makes it so). The decision consumes the confirmation it is allowed by; {@link evaluate} is
   * the dry run that consumes and records nothing.
   *
   * @returns the stored {@link Decision}: outcome `allow | deny | would_deny`, structured reasons.
   * @throws `RECORD_NOT_FOUND` for a `dependsOn` id not in the tenant, `UNKNOWN_PRINCIPAL` /
   *   `INVALID_ARGUMENT` for a user turn not by a user principal, `UNKNOWN_PRINCIPAL` for a
   *   requester not registered, `SESSION_FORBIDDEN` for another principal's session, `TENANT_REQUIRED`.
   */
  async authorize(input: In<'authorize'>): Promise<Decision> {
    return this.gate(input, false);
  }

  /**
   * The action gate's dry run (docs/design.md § Action gate): the decision {@link authorize} would
   * make now, from the same input, with nothing recorded — no audit entry, no decision row, no
   * confirmation use (the confirmation it would use is named, not consumed), no session created
   * and no read marked. A session that belongs to someone else is still refused.
   *
   * @returns an {@link Evaluation} (`dryRun: true`, no id).
   * @throws as {@link authorize}.
   */
  async evaluate(input: In<'authorize'>): Promise<Evaluation> {
    return this.gate(input, true);
  }

  private gate(input: In<'authorize'>, dryRun: true): Promise<Evaluation>;
  private gate(input: In<'authorize'>, dryRun: false): Promise<Decision>;
  private async gate(input: In<'authorize'>, dryRun: boolean): Promise<Decision | Evaluation> {
    this.assertOpen();
    const t0 = this.t0();
    const a = parseAuthorize(input);
    const action: Action = a.action.resource !== undefined ? { type: a.action.type, args: a.action.args, resource: a.action.resource } : { type: a.action.type, args: a.action.args };
    const tier = riskTier(this.policy, action);
    const mode = modeFor(this.policy, tier);
    const contextMode = a.context ?? 'session';
    const argsHash = argsHashOf(action.args);
    return this.refusing(a.tenant, dryRun ? null : 'decide', () => this.transact(a.tenant, 'authorize', t0, async (tx, mark): Promise<Decision | Evaluation> => {
      if (a.userTurn !== undefined) {
        const u = await this.principalIn(tx, a.tenant, a.userTurn.principal);
        if (u.kind !== 'user') throw new MemauthError('INVALID_ARGUMENT', `authorize: userTurn.principal ${u.id} is of kind ${u.kind}, not a user`, { field: 'userTurn.principal' });
      }
      const now = this.now();
      const requester = await resolveRequester(tx, a.tenant, a.requester);
      // only read here: a write this early would keep this transaction's reads out of the read cache
      const sessionExists = a.session !== undefined && (await checkSession(tx, a.tenant, a.session, a.requester ?? null));
      const declaredIds = [...new Set(a.dependsOn ?? [])];
      const declared = await tx.getRecords(a.tenant, declaredIds);
      // getRecords returns each record found once: as many as asked means none is missing
      const found = declared.length === declaredIds.length ? null : new Set(declared.map((r) => r.id));
      const missing = found === null ? [] : declaredIds.filter((id) => !found.has(id));
      if (missing.length > 0) throw new MemauthError('RECORD_NOT_FOUND', `authorize: dependsOn names no record ${missing.map((m) => JSON.stringify(m)).join(', ')} in tenant ${JSON.stringify(a.tenant)}`, { ids: missing });
      const reads = a.session === undefined ? [] : await this.sessionRecords(tx, a.tenant, a.session);
      const candidates = new Map<string, MemoryRecord>();
      for (const r of reads) candidates.set(r.id, r);
      for (const r of declared) candidates.set(r.id, r);
      const candidateList = [...candidates.values()];
      const why = new Map<string, Set<DependencyWhy>>();
      const addWhy = (id: string, w: DependencyWhy): void => {
        const s = why.get(id) ?? new Set();
        s.add(w);
        why.set(id, s);
      };
      for (const id of declaredIds) addWhy(id, 'declared');
      if (contextMode === 'session') for (const r of reads) addWhy(r.id, 'context');
      const { k, minAuthority: floor } = this.policy.document.corroboration;
      const verdicts = this.dependencyVerdicts(tx, a.tenant, candidateList, k, floor, now);
      const factsOf = verdicts instanceof Map ? verdicts : await verdicts;
      // every dependency is a candidate; anything else would be unknown to the store (metadata_missing)
      const depFactsOf = (id: string): DependencyFacts => factsOf.get(id) ?? dependencyFacts(id, [], EMPTY_BUNDLE, k, floor, now);
      const usable = candidateList.filter((r) => r.content !== null && r.status === 'active' && (r.expiresAt === null || r.expiresAt > now));
      const userText = a.userTurn !== undefined ? prepareText(a.userTurn.text) : null;
      const values = valueProvenance(action, argumentTypes(this.policy, action.type), usable.map((r) => ({ id: r.id, text: this.matchText(r) })), userText);
      for (const v of values) for (const id of v.recordIds) addWhy(id, 'value');
      const depIds = [...why.keys()].sort();
      const depFacts = depIds.map((id): DependencyFacts => ({ ...depFactsOf(id), why: [...(why.get(id) as Set<DependencyWhy>)].sort() }));
      const confirmations = await this.confirmationCandidates(tx, a.tenant, action.type, argsHash, a.confirmationId ?? null, now);
      const result = decide({ action, argsHash, tier, mode, now, dependencies: depFacts, values, disallowedArguments: disallowedArguments(this.policy, action), argumentTypes: argumentTypes(this.policy, action.type), confirmations, citedConfirmationId: a.confirmationId ?? null, requester, threshold: TRUSTED_THRESHOLD });
      const id = newId('dec');
      const dependencies: Dependency[] = depFacts.map((d) => ({ memoryId: d.memoryId, why: d.why, lowestAuthority: d.lowestAuthority, actionAuthority: d.actionAuthority, status: d.status }));
      if (dryRun) {
        const { outcome, reasons, confirmationId } = result;
        return { dryRun: true, tenant: a.tenant, sessionId: a.session ?? null, requester: a.requester ?? null, at: now, action, argsHash, tier, mode, outcome, reasons, dependencies, values, confirmationId, policyVersion: this.policy.version };
      }
      // keyed like content hashes: a plain SHA-256 of a short turn ("Pay $1,200 to ACCT-1234") can be guessed
      const userTurnHash = a.userTurn !== undefined ? contentHashOf(a.userTurn.text, await tx.ensureTenantContentKey(a.tenant, newContentKey(), now)) : null;
      const payload = {
        decisionId: id,
        sessionId: a.session ?? null,
        requester: a.requester ?? null,
        action,
        argsHash,
        tier,
        mode,
        contextMode,
        userTurn: a.userTurn !== undefined ? { principal: a.userTurn.principal, textHash: userTurnHash } : null,
        dependencies: depFacts.map((d) => ({ memoryId: d.memoryId, why: d.why })),
        values,
        citedConfirmationId: a.confirmationId ?? null,
        confirmationId: result.confirmationId,
        outcome: result.outcome,
        reasons: result.reasons,
        at: now,
      };
      mark('decided');
      // the first use of a session claims it for the requester
      if (a.session !== undefined && !sessionExists) await joinSession(tx, a.tenant, a.session, a.requester ?? null, now);
      const entry = await this.audit(tx, a.tenant, 'decide', payload);
      const decision: Decision = {
        formatVersion: 1,
        id,
        tenant: a.tenant,
        sessionId: a.session ?? null,
        requester: a.requester ?? null,
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
      mark('written');
      return decision;
    }));
  }

  private async confirmationCandidates(tx: StorageTx, tenant: string, actionType: string, argsHash: string, cited: string | null, now: string): Promise<ConfirmationCandidate[]> {
    let list: Confirmation[];
    if (cited !== null) {
      const c = await tx.getConfirmation(tenant, cited);
      list = c ? [c] : [];
    } else {
      list = await tx.listConfirmations(tenant, actionType, argsHash, now);
    }
    if (list.length === 0) return [];
    list = await this.verifiedRows(tx, tenant, list, confirmationMatchesEntry);
    const uses = await tx.confirmationUses(tenant, list.map((c) => c.id));
    return list.map((confirmation) => ({ confirmation, usesSoFar: uses.get(confirmation.id) ?? 0 }));
  }

  /**
   * A stored decision. A decision row that does not match the `decide` audit entry that recorded
   * it (forged or altered outside the API) is no decision of the gate: not found.
   * @throws `DECISION_NOT_FOUND`
   */
  async getDecision(input: { tenant: string; decisionId: string }): Promise<Decision> {
    this.assertOpen();
    const a = parseInput(schemas.replay, input, 'getDecision');
    const d = await this.driver.getDecision(a.tenant, a.decisionId);
    if (!d || (await this.verifiedDecisions(a.tenant, [d])).length === 0) throw new MemauthError('DECISION_NOT_FOUND', `no decision ${JSON.stringify(a.decisionId)} in tenant ${JSON.stringify(a.tenant)}`, { id: a.decisionId });
    return d;
  }

  /**
   * Recent decisions of a tenant, newest first. Rows that do not match their audit entry (forged
   * outside the API) are left out: the review queue offers to confirm what a listed decision asks.
   */
  async listDecisions(input: { tenant: string; limit?: number }): Promise<Decision[]> {
    this.assertOpen();
    const a = parseInput(schemas.listDecisions, input, 'listDecisions');
    return this.verifiedDecisions(a.tenant, await this.driver.listDecisions(a.tenant, a.limit ?? 100));
  }

  /** The decisions whose row matches the `decide` audit entry that recorded it. */
  private async verifiedDecisions(tenant: string, ds: readonly Decision[]): Promise<Decision[]> {
    const out: Decision[] = [];
    for (const d of ds) {
      if (!Number.isSafeInteger(d.auditSeq)) continue;
      const [e] = await this.driver.auditRange(tenant, d.auditSeq, d.auditSeq);
      if (e !== undefined && decisionMatchesEntry(d, e)) out.push(d);
    }
    return out;
  }

  // ------------------------------------------------------------------ deletion

  /**
   * Delete a record (docs/design.md § Deletion, retention, privacy): its content and every index entry are erased; its
   * hash, provenance and the audit chain stay. Records derived from it keep their taint and
   * list it in `deletedSources`; actions citing it are denied with `deleted_source`.
   * Deleting an already deleted record is a no-op returning it.
   * @throws `RECORD_NOT_FOUND`, `UNKNOWN_PRINCIPAL`, `TENANT_REQUIRED`.
   */
  async delete(input: In<'delete'>): Promise<MemoryRecord> {
    this.assertOpen();
    const a = parseInput(schemas.delete, input, 'delete');
    // the principal is read inside the transaction: outside one, a group commit's uncommitted rows are visible
    return this.refusing(a.tenant, 'delete', () => this.store.transaction(a.tenant, async (tx) => {
      if (a.principal !== undefined) await this.principalIn(tx, a.tenant, a.principal);
      const [rec] = await tx.getRecords(a.tenant, [a.id]);
      if (!rec) throw new MemauthError('RECORD_NOT_FOUND', `no record ${JSON.stringify(a.id)} in tenant ${JSON.stringify(a.tenant)}`, { id: a.id });
      if (rec.status === 'deleted') return rec;
      const now = this.now();
      await this.audit(tx, a.tenant, 'delete', { recordId: rec.id, contentHash: rec.contentHash, principalId: a.principal ?? null, reason: a.reason ?? 'delete', at: now });
      await tx.eraseRecord(a.tenant, rec.id, now);
      const [after] = await tx.getRecords(a.tenant, [rec.id]);
      return after as MemoryRecord;
    }));
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
      const c = await this.store.transaction(t, async (tx) => {
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
    await this.store.close();
  }
}

/**
 * Does a record row match the write/derive audit entry that created it? A keyed content hash
 * (src/core/content-hash.ts) is checked against the content with `contentKey`, the tenant's key
 * (without it, a record with content and a keyed hash does not match).
 */
export function recordMatchesEntry(r: MemoryRecord, e: AuditEntry, contentKey?: string | null): boolean {
  if (e.op !== 'write' && e.op !== 'derive') return false;
  const p = e.payload as Record<string, unknown>;
  if (p.refused !== undefined || p.recordId !== r.id || p.contentHash !== r.contentHash || p.scope !== r.scope) return false;
  if ((p.expiresAt ?? null) !== r.expiresAt || p.createdAt !== r.createdAt) return false;
  if (hashCanonical(p.origin) !== hashCanonical(r.origin) || hashCanonical(p.taint) !== hashCanonical(r.taint) || hashCanonical(p.derivedFrom) !== hashCanonical(r.derivedFrom)) return false;
  if (p.writeReason !== r.audit.writeReason || e.policyVersion !== r.audit.policyVersion) return false;
  if (r.content !== null && !contentHashMatches(r.content, r.contentHash, contentKey)) return false;
  return true;
}

/**
 * Does a decision row match the `decide` audit entry that recorded it? Every field the entry holds
 * (the per-dependency authorities are not in it: replay recomputes them from the log).
 */
export function decisionMatchesEntry(d: Decision, e: AuditEntry): boolean {
  const p = e.payload as Record<string, unknown>;
  if (e.op !== 'decide' || p.refused !== undefined || p.decisionId !== d.id || e.seq !== d.auditSeq || e.policyVersion !== d.policyVersion) return false;
  if (p.outcome !== d.outcome || p.at !== d.at || (p.sessionId ?? null) !== d.sessionId || (p.requester ?? null) !== (d.requester ?? null) || p.argsHash !== d.argsHash || p.tier !== d.tier || p.mode !== d.mode || (p.confirmationId ?? null) !== d.confirmationId) return false;
  const deps = d.dependencies.map((x) => ({ memoryId: x.memoryId, why: x.why }));
  return hashCanonical(p.action) === hashCanonical(d.action) && hashCanonical(p.reasons) === hashCanonical(d.reasons) && hashCanonical(p.values) === hashCanonical(d.values) && hashCanonical(p.dependencies) === hashCanonical(deps);
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
  return confirmationPayloadMatches(c, p.confirmation);
}
