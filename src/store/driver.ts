/**
 * The storage port (docs/architecture.md): the reads ({@link StorageReader}), the writes inside
 * one tenant's transaction ({@link StorageTx}) and the driver ({@link StorageDriver}) that both
 * the SQLite and PostgreSQL drivers implement. Every method takes a tenant; there is no
 * cross-tenant read or write in the port.
 */
import type { TokenFields } from '../core/identity.js';
import type { AuditEntry, AuditOp, Checkpoint } from '../core/audit.js';
import type { SessionLogEntry } from '../core/session.js';
import type { Confirmation, Corroboration, Decision, DerivationEdge, MemoryRecord, Principal, Tier } from '../core/types.js';
import type { VectorStore } from './vector.js';

/** A search hit: the record and its BM25 score (lower is better in SQLite, normalised to higher-is-better). */
export interface SearchHit {
  readonly record: MemoryRecord;
  readonly score: number;
}

export interface ListRecordsOptions {
  readonly scope?: string | undefined;
  readonly limit: number;
  readonly offset?: number | undefined;
  readonly includeDeleted?: boolean | undefined;
}

/**
 * Reads every driver offers, inside or outside a transaction. Every method takes a tenant:
 * there is no cross-tenant read in the port (docs/design.md § Deletion, retention, privacy).
 */
export interface StorageReader {
  getPolicyText(version: string): Promise<string | null>;
  getPrincipal(tenant: string, id: string): Promise<Principal | null>;
  listPrincipals(tenant: string): Promise<Principal[]>;
  /** The records of `ids` that exist in the tenant, once each, by id. */
  /** The records of `ids` that exist in the tenant, once each, by id (a read cache returns the same order). */
  getRecords(tenant: string, ids: readonly string[]): Promise<MemoryRecord[]>;
  listRecords(tenant: string, opts: ListRecordsOptions): Promise<MemoryRecord[]>;
  /**
   * Optional: every record of the tenant, deleted ones included, with `id > afterId` (all when
   * null), by id, at most `limit` — keyset paging for whole-tenant scans such as audit
   * verification (OFFSET paging re-reads everything before each page). Without it, callers page
   * with {@link listRecords}.
   */
  listRecordsAfter?(tenant: string, afterId: string | null, limit: number): Promise<MemoryRecord[]>;
  /** The ids of every version of the chains `chains` (core/versions.ts; deleted ones included, not the chains' first records themselves), in no particular order. */
  versionIds(tenant: string, chains: readonly string[]): Promise<string[]>;
  /** Full-text search over active, unexpired records of one tenant and scope. */
  search(tenant: string, scope: string, query: string, limit: number, now: string): Promise<SearchHit[]>;
  /** Every derivation edge upward from `ids` (their whole lineage DAG to the roots), keyed by child id. */
  lineage(tenant: string, ids: readonly string[]): Promise<Map<string, DerivationEdge[]>>;
  corroborationsFor(tenant: string, recordIds: readonly string[]): Promise<Corroboration[]>;
  getConfirmation(tenant: string, id: string): Promise<Confirmation | null>;
  /** Every unexpired confirmation for one action type and exact arguments hash (no limit). */
  listConfirmations(tenant: string, actionType: string, argsHash: string, now: string): Promise<Confirmation[]>;
  confirmationUses(tenant: string, ids: readonly string[]): Promise<Map<string, number>>;
  sessionExists(tenant: string, sessionId: string): Promise<boolean>;
  /** The session's owner (a principal id, or null for the application), or null when there is no such session. */
  sessionOwner(tenant: string, sessionId: string): Promise<{ owner: string | null } | null>;
  /** The records read in the session, in the order first read: its log (core/session.ts), or, for a session of an older store not read since, its reads as that store kept them. */
  sessionReads(tenant: string, sessionId: string): Promise<string[]>;
  /** The session log's last entry, or null when it is empty (core/session.ts). */
  sessionLogHead(tenant: string, sessionId: string): Promise<SessionLogEntry | null>;
  /** For each session of `lengths`: the record ids of its log's entries with `ord <= length`, in order — in one batched read. */
  sessionLogPrefixes(tenant: string, lengths: ReadonlyMap<string, number>): Promise<Map<string, string[]>>;
  /** Up to `limit` entries of the tenant's session logs after (`after.sessionId`, `after.ord`) (null: from the first), by session id then ord — for a pass over every log (audit verification). */
  sessionLogAfter(tenant: string, after: { sessionId: string; ord: number } | null, limit: number): Promise<Array<SessionLogEntry & { sessionId: string }>>;
  /** Which of `ids` the session log holds. */
  sessionLogHas(tenant: string, sessionId: string, ids: readonly string[]): Promise<Set<string>>;
  getDecision(tenant: string, id: string): Promise<Decision | null>;
  /** The tenant's decisions, newest first (by `at`, then `id`): the first `limit`, or with `after` the first `limit` after that decision in this order (keyset paging). */
  listDecisions(tenant: string, limit: number, after?: { readonly at: string; readonly id: string }): Promise<Decision[]>;
  /**
   * The session's first allowed decision of action type `actionType`, or allowed with its context
   * waived (oldest by `at`, then id), or null when it has none — the gate's once-per-action-type,
   * one-waiver-per-session rule (docs/design.md § Claims and intent).
   * One indexed look-up: its cost does not grow with the session's decisions.
   */
  allowedInSession(tenant: string, sessionId: string, actionType: string): Promise<Decision | null>;
  auditHead(tenant: string): Promise<{ seq: number; hash: string } | null>;
  /** Entries with `fromSeq <= seq <= toSeq`, in stored order (by seq). */
  auditRange(tenant: string, fromSeq: number, toSeq: number): Promise<AuditEntry[]>;
  /**
   * Optional: the entries at `seqs` (those that exist), by seq, in one batched read — what the
   * facade checks a page of rows against (src/api/provenance.ts). Without it, callers read each
   * seq with {@link auditRange}.
   */
  auditEntriesAt?(tenant: string, seqs: readonly number[]): Promise<AuditEntry[]>;
  auditHasPolicy(tenant: string, policyVersion: string): Promise<boolean>;
  /**
   * The entries of the tenant's chain with one of `ops` whose payload's `field` (a top-level
   * string) equals `value` — or, with `name` null, every entry of those ops — by seq. For the
   * identity ops (`principal`, `token_*`): a few per principal or token, found through an index
   * on (tenant, op), never by reading the whole chain (see core/identity.ts).
   */
  auditEntriesNaming(tenant: string, ops: readonly AuditOp[], name: { readonly field: 'principalId' | 'tokenId'; readonly value: string } | null): Promise<AuditEntry[]>;
  /** The token with this id or this hash, revoked or not. */
  findToken(by: { readonly id: string } | { readonly hash: string }): Promise<TokenRow | null>;
  /** Tokens of one tenant (principal tokens), or with `null` the admin tokens; oldest first. */
  listTokens(tenant: string | null): Promise<TokenRow[]>;
  latestCheckpoint(tenant: string): Promise<Checkpoint | null>;
  /**
   * Every tenant the store holds an audit entry, a principal or a token for, sorted; `(admin)`
   * (core/identity.ts `ADMIN_CHAIN`) when it holds an admin token — so `audit verify` also looks
   * at rows inserted under a tenant that has no chain.
   */
  tenants(): Promise<string[]>;
  /** The tenant's content key (hex; src/core/content-hash.ts), or null when it has none (or it was shredded). */
  tenantContentKey(tenant: string): Promise<string | null>;
}

/** Writes, only inside {@link StorageDriver.transaction}. Append-only except {@link eraseRecord}. */
export interface StorageTx extends StorageReader {
  putPolicyText(version: string, text: string, at: string): Promise<void>;
  insertPrincipal(p: Principal): Promise<void>;
  insertRecord(r: MemoryRecord): Promise<void>;
  /** Erase content and every index entry; keep the row, its hash and its provenance. */
  eraseRecord(tenant: string, id: string, at: string): Promise<void>;
  insertCorroboration(c: Corroboration, auditSeq: number): Promise<void>;
  insertConfirmation(c: Confirmation, auditSeq: number): Promise<void>;
  insertConfirmationUse(tenant: string, confirmationId: string, decisionId: string, at: string): Promise<void>;
  /**
   * Create the session if it does not exist, owned by `owner` (a principal id, or null for the
   * application; default null); an existing session keeps its owner. Returns the session's owner.
   */
  ensureSession(tenant: string, sessionId: string, at: string, owner?: string | null): Promise<string | null>;
  /**
   * Append `entries` (consecutive new ordinals after the log's head, each a record not in the log
   * yet: core/session.ts `extendLog`) to the session's read log. Fails, changing nothing, when an
   * ordinal or record is already in it.
   */
  appendSessionLog(tenant: string, sessionId: string, entries: readonly SessionLogEntry[], at: string): Promise<void>;
  insertDecision(d: Decision): Promise<void>;
  appendAudit(e: AuditEntry): Promise<void>;
  insertCheckpoint(c: Checkpoint): Promise<void>;
  /** Insert a token row (its `token_issue` entry is appended in the same transaction, see src/server/tokens.ts). */
  putToken(t: TokenRow): Promise<void>;
  /**
   * Set `revokedAt` of an unrevoked token (locking its row). Returns false, changing nothing, when
   * the token does not exist or is already revoked.
   */
  markTokenRevoked(id: string, at: string): Promise<boolean>;
  /**
   * The tenant's content key: the stored one (never replaced), else `keyHex` (or what it returns:
   * a fresh key is drawn only when the tenant has none yet) stored now.
   */
  ensureTenantContentKey(tenant: string, keyHex: string | (() => string), at: string): Promise<string>;
}

/**
 * A bearer token of the HTTP API / MCP server. Only the SHA-256 (hex) of the secret is stored.
 * An admin token has `tenant` and `principalId` both null; a principal token names both.
 * Rows are append-only except `revokedAt`, which is set once (rotation = a new row + revoking the old).
 * Writes go through a transaction on the token's chain ({@link StorageTx.putToken},
 * {@link StorageTx.markTokenRevoked}) together with their audit entries (core/identity.ts).
 */
export type TokenRow = TokenFields;

/** A person's verdict on a decision of the review queue (append-only; the dashboard's "reject"). */
export interface ReviewNoteRow {
  readonly id: string;
  readonly tenant: string;
  readonly decisionId: string;
  readonly verdict: 'rejected';
  /** the principal (or `(admin)`) that rejected it. */
  readonly by: string;
  readonly note: string;
  readonly at: string;
}

/** Which side asked for a decision: `internal` = the application, the admin token or a registered principal that is not `external`; `external` = an external or unregistered principal. */
export type RequesterSide = 'internal' | 'external';

/** One page of the review queue ({@link ReviewStore.listQueuedDecisions}). */
export interface QueuedDecisionsQuery {
  readonly outcome: 'deny' | 'would_deny';
  readonly tier: Tier;
  readonly requesters: RequesterSide;
  /** keyset: only decisions strictly before this one in (at, id) order; null from the newest. */
  readonly before: { readonly at: string; readonly id: string } | null;
  readonly limit: number;
}

/** How many decisions of one review-queue lane the tenant holds. */
export interface QueuedDecisionCount {
  readonly outcome: 'deny' | 'would_deny';
  readonly tier: Tier;
  readonly requesters: RequesterSide;
  readonly count: number;
}

/** Review notes and the review queue's reads (src/server/routes/review.ts). Notes are append-only. */
export interface ReviewStore {
  /**
   * The decisions of one lane of the review queue — one outcome, tier and requester side — newest
   * first by (at, id), at most `limit`, strictly before `before` (keyset paging through the index
   * decisions_queue: decisions of other lanes, allowed ones included, are never read past).
   * Rows as stored: the caller checks them against their audit entries.
   */
  listQueuedDecisions(tenant: string, q: QueuedDecisionsQuery): Promise<Decision[]>;
  /** The tenant's deny and would_deny decisions counted per outcome, tier and requester side (lanes with none are absent). */
  countQueuedDecisions(tenant: string): Promise<QueuedDecisionCount[]>;
  insertReviewNote(n: ReviewNoteRow): Promise<void>;
  /** The tenant's review notes, oldest first. */
  listReviewNotes(tenant: string): Promise<ReviewNoteRow[]>;
}

/**
 * The storage port (STYLE.md: port and drivers). SQLite (`src/store/sqlite/`) is the embedded
 * default; PostgreSQL lives under its own path. Every driver passes one conformance suite.
 */
export interface StorageDriver extends StorageReader, ReviewStore, SurfaceStore {
  readonly kind: string;
  /** Run `fn` atomically while holding the tenant's audit-chain lock. Rolls back on throw. */
  transaction<T>(tenant: string, fn: (tx: StorageTx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /**
   * Optional: the store's vector index for semantic search (src/store/vector.ts), null or absent
   * when it has none. A driver that has one erases a record's vectors in `eraseRecord`.
   */
  readonly vectors?: VectorStore | null;
  /** Optional: one line on vector search (backend, or why there is none) for `memauth init`/`serve`. */
  readonly vectorNote?: string;
  /**
   * Optional, for read caches (`src/store/cache.ts`): called inside a transaction; equal values
   * at two points mean nothing changed in between but this connection's own writes, none of them
   * rolled back. A driver without it gets no caching.
   */
  changeToken?(): string;
  /**
   * Optional: a reader that answers the reads of authenticating the bearer token whose SHA-256
   * (hex) is `hash` — its row, its `token_*` entries, its principal's row and registration, and
   * each entry's successor — from one round trip (src/server/tokens.ts). Without it the token is
   * authenticated read by read. Nothing is kept past the returned reader.
   */
  tokenReads?(hash: string): Promise<StorageReader>;
}

/**
 * A write path of the inventory ({@link SurfaceStore}): the index of the policy source rule a
 * record's source matched (first match wins), `self` for `principal:<writer>` that no rule
 * matched, `default` for a source nothing matched (the policy's `defaultSourceAuthority`).
 */
export type SurfacePath = number | 'self' | 'default';

/** What {@link SurfaceStore.surfaceCounts} counts: a time window and the policy's source rules, in order. */
export interface SurfaceQuery {
  /** ISO-8601 bounds: records created and decisions taken in [since, until). */
  readonly since: string;
  readonly until: string;
  /** the policy's source rules in order: a glob (`*` = any run of characters) and, when bound, the principals it applies to. */
  readonly rules: readonly { readonly match: string; readonly principals: readonly string[] | null }[];
  /** the most records (newest first) and decisions (newest first) read in the window. */
  readonly maxRecords: number;
  readonly maxDecisions: number;
}

/** Records written in the window by one principal through one path at one origin authority. */
export interface SurfaceWriteCount {
  readonly principal: string;
  readonly path: SurfacePath;
  readonly authority: string;
  readonly writes: number;
  /** of them, erased since (deleted, or swept after expiry). */
  readonly erased: number;
  /** of them, carrying an `expiresAt` (retention). */
  readonly expiring: number;
  readonly lastAt: string;
}

/**
 * Decisions of the window that depended on a record written by `principal` (or through `path`):
 * per tier and outcome, how many decisions and how many dependencies (a decision counts once per
 * surface however many of its records it cites).
 */
export interface SurfaceDependencyCount {
  readonly principal: string | null;
  readonly path: SurfacePath | null;
  readonly tier: Tier;
  readonly outcome: 'allow' | 'deny' | 'would_deny';
  readonly decisions: number;
  readonly dependencies: number;
}

/** The counts behind the write-surface inventory (src/api/surfaces.ts). */
export interface SurfaceCounts {
  readonly writes: readonly SurfaceWriteCount[];
  readonly byPrincipal: readonly SurfaceDependencyCount[];
  readonly byPath: readonly SurfaceDependencyCount[];
  /** records and decisions read in the window; fewer than the maximum means every one was counted. */
  readonly recordsRead: number;
  readonly decisionsRead: number;
}

/** The write-surface inventory's aggregates, computed by the store with bounded queries (src/store/sql/surfaces.ts). */
export interface SurfaceStore {
  /**
   * Per surface over a window: the records written (newest `maxRecords` of the window at most)
   * and the decisions that depended on them (newest `maxDecisions` at most). Reads are bounded:
   * a window scan over an index, then one GROUP BY with as many groups as principals × rules.
   */
  surfaceCounts(tenant: string, q: SurfaceQuery): Promise<SurfaceCounts>;
}
