/**
 * `openMemory`: the library's entry point. Picks the driver from a path (SQLite, the default) or a
 * `postgres://` URL, loads the policy, finds or creates the checkpoint signing key, and returns a
 * {@link Memory} (docs/library.md; docs/design.md § Audit log for checkpoints).
 */
import { appendFileSync, chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { generateKeyPairSync } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import type { Checkpoint } from '../core/audit.js';
import { MemauthError } from '../core/errors.js';
import { DEFAULT_POLICY, type Policy, type PolicySource, loadPolicy } from '../core/policy.js';
import type { StorageDriver } from '../store/driver.js';
import type { Embedder } from '../embed/embedder.js';
import type { CacheOptions } from '../store/cache.js';
import { type GroupCommitOptions, SqliteDriver } from '../store/sqlite/driver.js';
import { Memory } from './memory.js';

/** Options for {@link openMemory}. */
export interface OpenMemoryOptions {
  /** SQLite file path (created if missing), or `:memory:`. Default `memauth.db`. Ignored when `driver` is given. */
  readonly path?: string;
  /** a policy object (a full policy or `{extends: 'default', …}`), an already loaded {@link Policy}, or a path to a policy JSON file. Default: {@link DEFAULT_POLICY}. */
  readonly policy?: PolicySource | Policy | string;
  /** a storage driver (e.g. PostgreSQL); default: embedded SQLite at `path`. */
  readonly driver?: StorageDriver;
  /**
   * Ed25519 private key (PEM) for signed audit checkpoints. Default for a file database: the
   * key file `<path>.key` (created with mode 0600 if missing); for `:memory:` a key of this
   * process; for a `driver` (e.g. PostgreSQL) none — give the same key to every process that
   * opens the store (verification accepts only checkpoints signed by it). `false` disables checkpoints.
   */
  readonly checkpointKey?: string | false;
  /**
   * Where the checkpoint key file of a file database is (created with mode 0600 if missing)
   * instead of `<path>.key` beside the database. Keep it outside the data directory: whoever
   * can rewrite the database and read the key beside it can re-sign a rewritten chain.
   */
  readonly checkpointKeyFile?: string;
  /**
   * A file to keep a copy of every signed checkpoint outside the database (one JSON line each),
   * so truncating the audit table *and* its checkpoints is still detected. Default for an SQLite
   * file: `<path>.checkpoints`; for a `driver` (e.g. PostgreSQL): none unless given here.
   */
  readonly checkpointFile?: string;
  /** clock, for tests; default `() => new Date()`. */
  readonly clock?: () => Date;
  /**
   * Embedded SQLite only: group commit — concurrent operations share one COMMIT, each in its own
   * SAVEPOINT; every call still resolves only once its COMMIT is durable (see
   * {@link GroupCommitOptions}). Worth it when many operations are in flight (a server). Default off.
   */
  readonly groupCommit?: boolean | GroupCommitOptions;
  /** the facade's read cache for transactions (see `MemoryOptions.cache`); default on. */
  readonly cache?: boolean | CacheOptions;
  /**
   * An embedder (docs/embeddings.md: `fromFunction`, `fromLangChain`, `fromAiSdk` from
   * `memauth/ai-sdk`, `openAiCompatibleEmbedder`): records are embedded on write and search
   * defaults to hybrid. Default none: search is lexical.
   */
  readonly embedder?: Embedder | null;
  /** versions one record's chain may hold (see `MemoryOptions.maxVersionsPerChain`); default 100. */
  readonly maxVersionsPerChain?: number;
}

/**
 * Read and validate a policy JSON file (a full policy, or one with `"extends": "default"`).
 * @param path - the file.
 * @returns the frozen {@link Policy}.
 * @throws MemauthError `POLICY_INVALID` when the file cannot be read, is not JSON, or does not
 *   validate (every problem with its JSON path: core/policy.ts `loadPolicy`).
 */
export function loadPolicyFile(path: string): Policy {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new MemauthError('POLICY_INVALID', `cannot read policy file ${path}: ${(e as Error).message}`, { path });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new MemauthError('POLICY_INVALID', `policy file ${path} is not valid JSON: ${(e as Error).message}`, { path });
  }
  try {
    return loadPolicy(json);
  } catch (e) {
    if (e instanceof MemauthError) throw new MemauthError(e.code, `${path}: ${e.message}`, { ...e.details, file: path });
    throw e;
  }
}

function resolvePolicy(p: OpenMemoryOptions['policy']): Policy {
  if (p === undefined) return loadPolicy(DEFAULT_POLICY);
  if (typeof p === 'string') return loadPolicyFile(p);
  if ('version' in p && 'document' in p && 'text' in p) return loadPolicy((p as Policy).document);
  return loadPolicy(p);
}

/** Refuse a file path whose directory does not exist: the file could never be created there. */
function assertDirectoryOf(file: string, field: string, what: string): void {
  const dir = dirname(resolve(file));
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new MemauthError('INVALID_ARGUMENT', `cannot keep ${what} in ${file}: directory ${dir} does not exist (create it, readable only by the user memauth runs as)`, { field, path: file });
}

/**
 * The Ed25519 checkpoint signing key (PKCS#8 PEM) kept in `file`: read, or created with mode
 * 0600 when the file does not exist yet. docs/design.md § Audit log.
 * @param file - the key file (`$MEMAUTH_CHECKPOINT_KEY`, `<db>.key` by default for SQLite).
 * @returns the PEM text.
 * @throws MemauthError `INVALID_ARGUMENT` (field `checkpointKeyFile`) when its directory does not
 *   exist, or the file cannot be read or created (a directory, no permission), naming the path.
 */
export function checkpointKeyFromFile(file: string): string {
  try {
    if (existsSync(file)) return readFileSync(file, 'utf8');
    assertDirectoryOf(file, 'checkpointKeyFile', 'the checkpoint key');
    const key = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    writeFileSync(file, key, { mode: 0o600, flag: 'wx' });
    chmodSync(file, 0o600);
    return key;
  } catch (e) {
    if (e instanceof MemauthError) throw e;
    // another process created it first: use its key, never overwrite it
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(file, 'utf8');
    throw new MemauthError('INVALID_ARGUMENT', `cannot read or create the checkpoint key ${file}: ${(e as Error).message}`, { field: 'checkpointKeyFile', path: file });
  }
}

/**
 * The checkpoint signing key {@link openMemory} uses: the one given, the key file's, one of this
 * process for `:memory:`, or none (`false`, or a driver's store without a key given).
 * @throws MemauthError `INVALID_ARGUMENT` from {@link checkpointKeyFromFile}.
 */
function signingKey(opts: OpenMemoryOptions, path: string, fileBacked: boolean): string | null {
  if (opts.checkpointKey === false) return null;
  if (typeof opts.checkpointKey === 'string') return opts.checkpointKey;
  if (fileBacked) return checkpointKeyFromFile(opts.checkpointKeyFile ?? `${path}.key`);
  // a driver's store (e.g. PostgreSQL) outlives this process and is shared by several: a key made
  // up here would differ in every process, and verification pins the store's own key — so no
  // key unless one is given
  return opts.driver === undefined ? generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() : null;
}

function readCheckpoints(file: string): Checkpoint[] {
  if (!existsSync(file)) return [];
  const out: Checkpoint[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      out.push(JSON.parse(line) as Checkpoint);
    } catch {
      // a torn last line (crash while appending) is ignored; earlier ones still count
    }
  }
  return out;
}

/**
 * Open a memory store. Embedded SQLite by default (one file, WAL); pass `driver` for another store.
 *
 * @example
 * ```ts
 * import { openMemory } from 'memauth';
 * const mem = await openMemory({ path: 'agent.db' });
 * await mem.registerPrincipal({ tenant: 'acme', id: 'browser', kind: 'tool', domain: 'browser' });
 * const { record } = await mem.write({ tenant: 'acme', scope: 'vendors', principal: 'browser',
 *   content: 'Acme now settles through ACCT-X', source: 'https://evil.example/page' });
 * record.origin.authority; // 'external_untrusted': a trusted channel, an untrusted source
 * await mem.close();
 * ```
 * @throws MemauthError `DATABASE_CORRUPT` (not a memauth database, or corrupted), `DATABASE_LOCKED`,
 *   `POLICY_INVALID` (naming the bad field), `INVALID_ARGUMENT` (a checkpoint key or checkpoint
 *   copy file that cannot be read or created, e.g. in a directory that does not exist).
 */
/**
 * One warning line when the checkpoint key of the SQLite file `dbPath` sits beside the database
 * (the default `<db>.key`, or any key file in the database's directory), else null. docs/design.md §
 * Audit log: a signed checkpoint makes truncation detectable only if the key is out of reach of
 * whoever can rewrite the database.
 */
export function checkpointKeyWarning(dbPath: string, keyFile: string | undefined): string | null {
  if (dbPath === ':memory:') return null;
  const file = keyFile ?? `${dbPath}.key`;
  if (dirname(resolve(file)) !== dirname(resolve(dbPath))) return null;
  return `memauth: warning: the checkpoint key ${file} is beside the database; whoever can rewrite the database can re-sign it — move the key outside the data directory and set MEMAUTH_CHECKPOINT_KEY to its path`;
}

export async function openMemory(opts: OpenMemoryOptions = {}): Promise<Memory> {
  const policy = resolvePolicy(opts.policy);
  const path = opts.path ?? 'memauth.db';
  const driver = opts.driver ?? SqliteDriver.open({ path, groupCommit: opts.groupCommit ?? false });
  const fileBacked = opts.driver === undefined && path !== ':memory:';
  let key: string | null = null;
  let cpFile: string | null;
  try {
    key = signingKey(opts, path, fileBacked);
    cpFile = opts.checkpointFile ?? (fileBacked ? `${path}.checkpoints` : null);
    if (opts.checkpointFile !== undefined) assertDirectoryOf(opts.checkpointFile, 'checkpointFile', 'the checkpoint copies');
  } catch (e) {
    if (opts.driver === undefined) await driver.close();
    throw e;
  }
  return new Memory({
    driver,
    policy,
    clock: opts.clock,
    ...(opts.cache !== undefined ? { cache: opts.cache } : {}),
    ...(opts.maxVersionsPerChain !== undefined ? { maxVersionsPerChain: opts.maxVersionsPerChain } : {}),
    embedder: opts.embedder ?? null,
    checkpointKey: key,
    onCheckpoint: cpFile ? (c) => appendFileSync(cpFile, `${JSON.stringify(c)}\n`) : undefined,
    externalCheckpoints: cpFile ? () => readCheckpoints(cpFile) : undefined,
  });
}
