/**
 * memauth's library facade, `Memory`: every public operation with its documentation, each a thin
 * method over its operation module — records.ts (write, derive, get, list, lineage), search.ts
 * and embeddings.ts (search modes, embedding on write, reindex),
 * vouching.ts (corroborate, confirm), authorize.ts (the action gate and its dry run),
 * decisions.ts (stored decisions), admin.ts (principals, deletion, retention, checkpoints),
 * verify.ts and replay.ts (the audit log). The modules share an {@link OpContext} (context.ts)
 * and its {@link Provenance} (provenance.ts). Imports from src/core, src/store, and api/ modules.
 */
import type { Checkpoint } from '../core/audit.js';
import { MemauthError } from '../core/errors.js';
import type { Policy } from '../core/policy.js';
import type { Confirmation, Decision, MemoryRecord, Principal } from '../core/types.js';
import { CachingDriver } from '../store/cache.js';
import type { StorageDriver } from '../store/driver.js';
import { type ReindexProgress, type ReindexResult, type SearchSetup, indexerFor, reindexTenant } from './embeddings.js';
import { type RankedHit, type SearchResult, searchWithInfo } from './search.js';
import * as admin from './admin.js';
import { gate } from './authorize.js';
import { type In, newId } from './context.js';
import type { MemoryOptions, StoreOptions } from './options.js';
import * as decisions from './decisions.js';
import { Provenance } from './provenance.js';
import * as records from './records.js';
import { type SupersedeResult, checkedMaxVersions, supersede } from './supersede.js';
import { type ReplayResult, replayDecision } from './replay.js';
import type { Evaluation } from './requesters.js';
import { parseInput, schemas } from './validation.js';
import { type AuditReport, verifyStore } from './verify.js';
import * as vouching from './vouching.js';
import type { CorroborateResult, LineageGraph, OpTiming, RecordView, WriteResult } from './views.js';

export type { CorroborateResult, LineageGraph, OpTiming, RecordView, WriteResult } from './views.js';
export type { MemoryOptions } from './options.js';

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
  /** what the operation modules run with: the store behind its read cache, the clock, the memos. */
  private readonly ctx: admin.AdminContext;
  /** the embedder and vector index (`indexer` null: lexical only, `reason` says why); for `memauth init`/`serve` output. */
  readonly searchSetup: SearchSetup;
  private closed = false;

  constructor(opts: MemoryOptions) {
    this.driver = opts.driver;
    this.policy = opts.policy;
    this.ctx = {
      driver: opts.driver,
      store: opts.cache === false ? opts.driver : CachingDriver.wrap(opts.driver, typeof opts.cache === 'object' ? opts.cache : {}),
      policy: opts.policy,
      clock: opts.clock ?? (() => new Date()),
      onTiming: opts.onTiming,
      provenance: new Provenance(),
      ...(opts.maxVersionsPerChain !== undefined ? { maxVersionsPerChain: checkedMaxVersions(opts.maxVersionsPerChain) } : {}),
      checkpointKey: opts.checkpointKey ?? null,
      onCheckpoint: opts.onCheckpoint,
      externalCheckpoints: opts.externalCheckpoints,
    };
    this.searchSetup = indexerFor(opts.embedder, opts.driver.vectors, opts.driver.vectorNote);
  }

  private assertOpen(): void {
    if (this.closed) throw new MemauthError('CLOSED', 'this memory is closed; open it again');
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
   * Idempotent: a principal that already exists with the same kind, domain and ceiling is
   * returned as it is (nothing is written); a registered principal is never changed.
   * @returns the principal (see {@link ensurePrincipal} to also learn whether it was created).
   * @throws MemauthError `AUTHORITY_EXCEEDS_PRINCIPAL` when maxAuthority is above the kind's ceiling,
   *   `PRINCIPAL_EXISTS` when the id exists with another kind, domain or ceiling (`details.differs`
   *   names each), `TENANT_REQUIRED`, `INVALID_ARGUMENT`.
   */
  async registerPrincipal(input: In<'registerPrincipal'>): Promise<Principal> {
    return (await this.ensurePrincipal(input)).principal;
  }

  /**
   * {@link registerPrincipal}, also saying whether this call created the principal.
   * @returns `{principal, created}`: `created` false when it already existed unchanged.
   * @throws as {@link registerPrincipal}.
   */
  async ensurePrincipal(input: In<'registerPrincipal'>): Promise<admin.Registration> {
    this.assertOpen();
    return admin.registerPrincipal(this.ctx, input);
  }

  /**
   * Principals of a tenant whose rows match their registration in the audit chain (rows inserted
   * or altered outside the API are left out; `memauth audit verify` names them). @throws `TENANT_REQUIRED`
   */
  async listPrincipals(input: In<'tenant'>): Promise<Principal[]> {
    this.assertOpen();
    return admin.listPrincipals(this.ctx, input);
  }

  /** A new session id (sessions are also created on first use of any id). */
  newSessionId(): string {
    return newId('ses');
  }

  // ------------------------------------------------------------------ records

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
  async write(input: In<'write'>, options?: StoreOptions): Promise<WriteResult> {
    this.assertOpen();
    const ix = this.searchSetup.indexer; // embedded once accepted: a failed embed leaves the record pending, never lost
    return ix === null ? records.write(this.ctx, input, undefined, options) : ix.indexWrite((onWritten) => records.write(this.ctx, input, onWritten, options));
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
  async derive(input: In<'derive'>, options?: StoreOptions): Promise<MemoryRecord> {
    this.assertOpen();
    const r = await records.derive(this.ctx, input, options);
    await this.searchSetup.indexer?.indexRecord(r); // as write: a failed embed leaves it for reindex
    return r;
  }

  /**
   * Write a new version of a record (docs/design.md § Memory record) under the rules of {@link write},
   * in its scope, linked to it (`version`, in its audit entry); the old version stays. It hides the
   * current versions of at most its action authority and competes with higher ones (`conflict`).
   * @param input.id - a current version. @param input.reason - why (the version's write reason).
   * @returns the new version, the chain's current versions (highest authority first), `conflict`.
   * @throws `RECORD_NOT_FOUND` (also another tenant's id), `RECORD_DELETED`, `RECORD_SUPERSEDED`
   *   (details.current), `TOO_MANY_VERSIONS` (a writer below a current version, past half the
   *   chain's room), `VERSION_CHAIN_FULL` (the chain holds `maxVersionsPerChain` versions, default
   *   100: write a new record), `UNKNOWN_PRINCIPAL`, `INVALID_ARGUMENT`, `SESSION_FORBIDDEN`.
   */
  async supersede(input: In<'supersede'>, options?: StoreOptions): Promise<SupersedeResult> {
    this.assertOpen();
    const r = await supersede(this.ctx, input, options);
    await this.searchSetup.indexer?.indexRecord(r.record); // as write: a failed embed leaves it for reindex
    return r;
  }

  /**
   * Get one record with its current action authority, corroborations and deleted sources: the
   * current version of its chain (highest authority first) with `versions` when it has several
   * (`exact: true`: the record asked for). Marks it, and every current version the view shows,
   * as read in `session` (it then taints what the session derives and decides).
   * A corroboration's evidence text is in the view only when its authority is at least the
   * policy's corroboration floor and the record's lowest authority; otherwise `evidenceRef` is
   * null and `evidenceWithheld` true (docs/design.md § What the model sees).
   * @throws `RECORD_NOT_FOUND` (also for another tenant's id), `TENANT_REQUIRED`, `SESSION_FORBIDDEN`
   *   for a session that belongs to another principal than `requester` (see {@link write}).
   */
  async get(input: In<'get'>): Promise<RecordView> {
    this.assertOpen();
    return records.get(this.ctx, input);
  }

  /**
   * Search one tenant's scope (docs/design.md § Search), active unexpired records: `mode` `lexical` (BM25), `semantic` (vectors) or `hybrid` (RRF of both);
   * default hybrid with an embedder, else lexical. Hits are marked read in `session` whatever the mode. Ranking never changes authority.
   * A hit on a version stands for its chain's current versions, all of them when they compete (with `versions`).
   * @returns hits, best first, at most `limit` (default 10) entries, a chain counting once; `score` is BM25, cosine similarity or RRF by mode; `ranks` per list.
   * @throws `TENANT_REQUIRED`, `SCOPE_REQUIRED`, `SESSION_FORBIDDEN` (see {@link get}), `SEMANTIC_SEARCH_UNAVAILABLE`,
   *   `EMBEDDER_UNAVAILABLE`/`EMBEDDER_BAD_RESPONSE` for a mode asked for explicitly (see {@link searchWithInfo}).
   */
  async search(input: In<'search'>): Promise<RankedHit[]> {
    return (await this.searchWithInfo(input)).hits;
  }

  /** {@link search}, also saying which mode ran and why (`mode`, `reason`, `embedder`); the default mode falls back to lexical when the embedder fails. */
  async searchWithInfo(input: In<'search'>): Promise<SearchResult> {
    this.assertOpen();
    return searchWithInfo(this.ctx, this.searchSetup, input);
  }

  /**
   * Embed the tenant's active records that have no vector for their content under the embedder (it changed, or an embed failed). Resumable.
   * @throws `SEMANTIC_SEARCH_UNAVAILABLE` without an embedder or vector index, `EMBEDDER_*` (what was stored stays), `TENANT_REQUIRED`.
   */
  async reindex(input: In<'tenant'>, onProgress?: (p: ReindexProgress) => void): Promise<ReindexResult> {
    this.assertOpen();
    return reindexTenant(this.searchSetup, input, onProgress);
  }

  /** List records (newest first), optionally one scope, deleted ones, versions no longer current (`allVersions`). Does not mark reads. */
  async list(input: In<'list'>): Promise<MemoryRecord[]> {
    this.assertOpen();
    return records.list(this.ctx, input);
  }

  /** The lineage of a record down to its roots, as nodes and edges. @throws `RECORD_NOT_FOUND` */
  async lineageGraph(input: In<'get'>): Promise<LineageGraph> {
    this.assertOpen();
    return records.lineageGraph(this.ctx, input);
  }

  // ------------------------------------------------------------------ corroboration

  /**
   * Record that `principal` corroborates a record with `evidence` (a source ref, or
   * `memory:<id>` naming a record of its own). Counted only when docs/design.md § Corroboration holds.
   * @throws `RECORD_NOT_FOUND`, `RECORD_DELETED`, `UNKNOWN_PRINCIPAL`, `TENANT_REQUIRED`,
   *   `CORROBORATOR_BELOW_FLOOR` (the principal's ceiling is below the floor: logged, not stored).
   */
  async corroborate(input: In<'corroborate'>): Promise<CorroborateResult> {
    this.assertOpen();
    return vouching.corroborate(this.ctx, input);
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
   *   `CONFIRMATION_USABLE_BY_EXTERNAL` / `CONFIRMATION_USABLE_BY_TOOL` / `UNKNOWN_PRINCIPAL` for a bad `usableBy`,
   *   `INVALID_ARGUMENT` without args/argsHash or with a TTL above the policy's maximum.
   */
  async confirm(input: In<'confirm'>): Promise<Confirmation> {
    this.assertOpen();
    return vouching.confirm(this.ctx, input);
  }

  // ------------------------------------------------------------------ gate

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
   * `options.beforeRecord(bytes)`: see {@link StoreOptions} (as on write, derive and supersede).
   * @returns the stored {@link Decision}: outcome `allow | deny | would_deny`, structured reasons.
   * @throws `RECORD_NOT_FOUND` for a `dependsOn` id not in the tenant, `UNKNOWN_PRINCIPAL` /
   *   `INVALID_ARGUMENT` for a user turn not by a user principal, `UNKNOWN_PRINCIPAL` for a
   *   requester not registered, `SESSION_FORBIDDEN` for another principal's session, `TENANT_REQUIRED`;
   *   whatever `options.beforeRecord` throws.
   */
  async authorize(input: In<'authorize'>, options?: StoreOptions): Promise<Decision> {
    this.assertOpen();
    return gate(this.ctx, input, false, options);
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
    this.assertOpen();
    return gate(this.ctx, input, true);
  }

  /**
   * A stored decision. A decision row that does not match the `decide` audit entry that recorded
   * it (forged or altered outside the API) is no decision of the gate: not found.
   * @throws `DECISION_NOT_FOUND`
   */
  async getDecision(input: { tenant: string; decisionId: string }): Promise<Decision> {
    this.assertOpen();
    return decisions.getDecision(this.ctx, input);
  }

  /**
   * Recent decisions of a tenant, newest first (with `requester`: only those that principal
   * requested, `limit` of them). Rows that do not match their audit entry (forged outside the API)
   * are left out: the review queue offers to confirm what a listed decision asks.
   */
  async listDecisions(input: { tenant: string; limit?: number; requester?: string }): Promise<Decision[]> {
    this.assertOpen();
    return decisions.listDecisions(this.ctx, input);
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
    return admin.deleteRecord(this.ctx, input);
  }

  /** Erase the content of every expired record of a tenant (retention). @returns the ids erased. */
  async sweepExpired(input: In<'tenant'>): Promise<string[]> {
    this.assertOpen();
    return admin.sweepExpired(this.ctx, input, (i) => this.delete(i));
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
    return admin.checkpoint(this.ctx, input);
  }

  /**
   * Verify the audit chain of every tenant (or one): hashes, sequence, the newest signed
   * checkpoint (truncation), and that every record row matches its audit entry.
   * @returns a report; `ok` is false with the first bad entry named per tenant.
   */
  async verifyAudit(input: { tenant?: string } = {}): Promise<AuditReport> {
    this.assertOpen();
    const a = parseInput(schemas.verify, input, 'verifyAudit');
    return verifyStore(this.driver, a.tenant, this.ctx.externalCheckpoints?.() ?? [], admin.publicKeyOf(this.ctx.checkpointKey) ?? undefined);
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
    if (this.ctx.checkpointKey !== null) {
      try {
        await this.checkpoint();
      } catch {
        // closing must not fail because a checkpoint could not be written
      }
    }
    this.closed = true;
    await this.ctx.store.close();
  }
}
