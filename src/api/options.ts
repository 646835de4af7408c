/**
 * The options of the {@link Memory} constructor (api/memory.ts; most callers use `openMemory`):
 * the store, the policy, the clock, checkpoints, the embedder, timings and the read cache; and the
 * options of one call that stores something ({@link StoreOptions}). Imports from src/core, src/store and src/embed.
 */
import type { Checkpoint } from '../core/audit.js';
import { MemauthError } from '../core/errors.js';
import type { Policy } from '../core/policy.js';
import type { Embedder } from '../embed/embedder.js';
import type { CacheOptions } from '../store/cache.js';
import type { StorageDriver } from '../store/driver.js';
import type { OpTiming } from './views.js';

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
  /** the embedder for semantic and hybrid search (src/embed/): records are embedded on write; none: search is lexical. */
  readonly embedder?: Embedder | null;
  /** called after each write, derive and authorize with where its time went (benchmarks); off by default. */
  readonly onTiming?: (t: OpTiming) => void;
  /**
   * Read cache for transactions (`src/store/cache.ts`): on by default when the driver can report
   * changes (SQLite can); `false` turns it off. It is emptied whenever anything but this facade
   * changed the store, so it never serves what the store no longer holds.
   */
  readonly cache?: boolean | CacheOptions;
  /**
   * Versions one record's chain may hold, every writer together, from 2 (default
   * 100, `DEFAULT_MAX_VERSIONS_PER_CHAIN` in api/supersede.ts); a `supersede` past it is refused (`VERSION_CHAIN_FULL`):
   * each read of a version judges its whole chain, so a chain without bound would make every
   * read of it slower (docs/design.md § Memory record).
   */
  readonly maxVersionsPerChain?: number;
}

/**
 * Options of one call that stores something ({@link Memory.write}, `derive`, `supersede`,
 * `authorize`): a hook before the store's rows are written.
 */
export interface StoreOptions {
  /**
   * Called once the record or decision is built and before any of it is stored, with the bytes it
   * will store besides a record's content and claims: a decision's row and audit entry (twice its
   * JSON); a record's audit entry and the same metadata on its row (twice the entry's payload —
   * origin, taint, derivation edges, session reference). Throw to refuse: the transaction rolls
   * back and nothing of the call is recorded (the error reaches the caller as thrown). A record
   * written in a session counts the read-log row it appends too. The server takes these bytes from
   * a tool or external principal's write budget here (docs/server.md § What one token can use up),
   * so calls in flight together cannot store more than the budget holds. Synchronous: it runs
   * inside the call's transaction; a hook that returns a promise is refused (`INVALID_ARGUMENT`,
   * nothing recorded) — check a quota that needs I/O before the call.
   */
  readonly beforeRecord?: (bytes: number) => undefined | void;
}

/**
 * Run `options.beforeRecord(bytes())` (see {@link StoreOptions}); `bytes` is computed only when there is a hook
 * (serialising a decision or a record's metadata is not free, and most calls have none).
 * @throws what the hook throws; MemauthError `INVALID_ARGUMENT` (field `beforeRecord`) when it returns a promise (its rejection is then ignored).
 */
export function runBeforeRecord(options: StoreOptions | undefined, bytes: () => number): void {
  const hook = options?.beforeRecord;
  if (hook === undefined) return;
  const r: unknown = hook(bytes());
  if (r === undefined || r === null || typeof (r as { then?: unknown }).then !== 'function') return;
  (r as Promise<unknown>).then(undefined, () => undefined);
  throw new MemauthError('INVALID_ARGUMENT', 'beforeRecord returned a promise: it must decide synchronously (check an asynchronous quota before the call)', { field: 'beforeRecord' });
}
