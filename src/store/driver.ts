import type { AuditEntry, Checkpoint } from '../core/audit.js';
import type { Confirmation, Corroboration, Decision, DerivationEdge, MemoryRecord, Principal } from '../core/types.js';

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
 * there is no cross-tenant read in the port (DESIGN.md § Deletion, retention, privacy).
 */
export interface StorageReader {
  getPolicyText(version: string): Promise<string | null>;
  getPrincipal(tenant: string, id: string): Promise<Principal | null>;
  listPrincipals(tenant: string): Promise<Principal[]>;
  getRecords(tenant: string, ids: readonly string[]): Promise<MemoryRecord[]>;
  listRecords(tenant: string, opts: ListRecordsOptions): Promise<MemoryRecord[]>;
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
  sessionReads(tenant: string, sessionId: string): Promise<string[]>;
  getDecision(tenant: string, id: string): Promise<Decision | null>;
  listDecisions(tenant: string, limit: number): Promise<Decision[]>;
  auditHead(tenant: string): Promise<{ seq: number; hash: string } | null>;
  /** Entries with `fromSeq <= seq <= toSeq`, in stored order (by seq). */
  auditRange(tenant: string, fromSeq: number, toSeq: number): Promise<AuditEntry[]>;
  auditHasPolicy(tenant: string, policyVersion: string): Promise<boolean>;
  latestCheckpoint(tenant: string): Promise<Checkpoint | null>;
  tenants(): Promise<string[]>;
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
  ensureSession(tenant: string, sessionId: string, at: string): Promise<void>;
  addSessionReads(tenant: string, sessionId: string, recordIds: readonly string[], at: string): Promise<void>;
  insertDecision(d: Decision): Promise<void>;
  appendAudit(e: AuditEntry): Promise<void>;
  insertCheckpoint(c: Checkpoint): Promise<void>;
}

/**
 * The storage port (STYLE.md: port and drivers). SQLite (`src/store/sqlite/`) is the embedded
 * default; PostgreSQL lives under its own path. Every driver passes one conformance suite.
 */
export interface StorageDriver extends StorageReader {
  readonly kind: string;
  /** Run `fn` atomically while holding the tenant's audit-chain lock. Rolls back on throw. */
  transaction<T>(tenant: string, fn: (tx: StorageTx) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
