/**
 * What the facade's operations return to callers (re-exported by src/index.ts): a record as `get`
 * shows it with its versions, the results of `write`, `supersede` and `corroborate`, a lineage graph, and the timing report of
 * the performance suite. Types only. (The dry run's `Evaluation` is in requesters.ts; stored
 * records, decisions and confirmations are core/types.ts.)
 */
import type { Authority } from '../core/authority.js';
import type { CorroborationView } from '../core/exposure.js';
import type { Corroboration, MemoryRecord, RecordStatus } from '../core/types.js';

/** A record as `get` returns it: the stored record plus what the gate would see of it now. */
export interface RecordView extends MemoryRecord {
  /** lowestAuthority, or lifted by k independent trusted corroborations. */
  readonly actionAuthority: Authority;
  /** every corroboration recorded; its evidence is withheld (null) when it would show a lower principal's text as part of this record. */
  readonly corroborations: readonly CorroborationView[];
  /** ids of deleted records in this record's lineage (docs/design.md: derived records show `deleted_source`). */
  readonly deletedSources: readonly string[];
  /** present when the record's chain has more than one version (api/versions.ts). */
  readonly versions?: VersionsView;
}

/** One version as a read shows it in a record's `versions`. */
export interface VersionEntry {
  readonly id: string;
  /** the version it was written to replace (null for the chain's first record). */
  readonly supersedes: string | null;
  readonly principalId: string;
  readonly actionAuthority: Authority;
  readonly status: RecordStatus;
  readonly createdAt: string;
  readonly current: boolean;
  /** the content of a current version (so competing versions are seen side by side); null for the others and once deleted. */
  readonly content: string | null;
}

/**
 * The version history of a record's chain, present on a record that has more than one version
 * (docs/design.md § Memory record): `current` the current versions (highest authority first),
 * `conflict` whether they compete, `history` every version in write order.
 */
export interface VersionsView {
  readonly chain: string;
  readonly current: readonly string[];
  readonly conflict: boolean;
  readonly history: readonly VersionEntry[];
}

/** Result of {@link Memory.write}. */
export interface WriteResult {
  readonly record: MemoryRecord;
  /** false when the text was recalled memory echoed back: it resolves to the original, adding nothing. */
  readonly created: boolean;
  readonly echoOf: string | null;
  /** with an embedder: whether the new record's vector was stored or is pending (the embedder failed; `memauth reindex` embeds it). */
  readonly embedding?: EmbeddingOutcome;
}

/** What indexing a record produced: its vector stored, or pending (with the error that left it so). */
export interface EmbeddingOutcome {
  readonly status: 'stored' | 'pending';
  /** why it is pending: the embedder's error code and message (never the key or the text). */
  readonly error?: { readonly code: string; readonly message: string };
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
