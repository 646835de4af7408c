/**
 * memauth — long-term memory for LLM agents with origin-bound, non-malleable action authority.
 * The public surface is pinned by test/exports.test.ts.
 */
export { openMemory, type OpenMemoryOptions } from './api/open.js';
export { Memory, type MemoryOptions } from './api/memory.js';
export type { RecordView, WriteResult, CorroborateResult, LineageGraph, OpTiming, EmbeddingOutcome, VersionsView, VersionEntry } from './api/views.js';
export type { SupersedeResult } from './api/supersede.js';
export type { VersionedHit } from './api/versions.js';
export { argsHashOf } from './core/confirmation.js';
export type { AuditReport, TenantAuditReport } from './api/verify.js';
export type { ReplayResult } from './api/replay.js';
export type { Evaluation } from './api/requesters.js';
export type { AuthorizeOptions } from './api/authorize-record.js';
export type { StoreOptions } from './api/options.js';
export type { Requester } from './core/confirmation.js';
export { MemauthError, ERROR_CODES, isMemauthError, type ErrorCode } from './core/errors.js';
export { AUTHORITIES, TRUSTED_THRESHOLD, atLeast, minAuthority, maxAuthority, rank, type Authority } from './core/authority.js';
export { DEFAULT_POLICY, PolicySchema, loadPolicy, riskTier, sourceAuthority, originAuthority, type Policy, type PolicyDocument, type PolicyInput } from './core/policy.js';
export { decide, type GateInput, type GateResult, type DependencyFacts } from './core/gate.js';
export { verifyChain, entryHash, genesisHash, checkpointSignatureValid, type AuditEntry, type AuditOp, type Checkpoint } from './core/audit.js';
export { canonicalJson, hashCanonical } from './core/canonical.js';
export type { CorroborationView } from './core/exposure.js';
export { SqliteDriver, type SqliteOptions, type GroupCommitOptions } from './store/sqlite/driver.js';
export type { CacheOptions } from './store/cache.js';
export type { StorageDriver, StorageTx, StorageReader, SearchHit } from './store/driver.js';
export type { RankedHit, SearchMode, SearchResult } from './api/search.js';
export type { ReindexProgress, ReindexResult } from './api/embeddings.js';
export { type Embedder, embedderId, MAX_DIMENSIONS } from './embed/embedder.js';
export { fromFunction, fromLangChain, type EmbedderIdentity, type LangChainEmbeddingsLike } from './embed/adapters.js';
export { openAiCompatibleEmbedder, type OpenAiCompatibleOptions } from './embed/openai-compatible.js';
export { testEmbedder } from './embed/test-embedder.js';
export * from './core/types.js';
export {
  importMemories,
  parseMcpMemory,
  parseMem0,
  IMPORT_FORMATS,
  IMPORT_TRUST,
  SKIP_REASONS,
  type ImportOptions,
  type ImportReport,
  type ImportFormat,
  type ImportTrust,
  type ImportItem,
  type ImportProblem,
  type SkipReason,
} from './import/index.js';
