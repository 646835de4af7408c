/**
 * Shared helpers for memauth's test suite: real SQLite files in fresh temp directories,
 * a standard cast of principals, a test policy that names trusted upstreams, error matchers
 * and raw-table snapshots for tamper tests.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { DEFAULT_POLICY, type Memory, type PolicyInput, SqliteDriver, isMemauthError, openMemory } from '../src/index.js';
import type { ErrorCode } from '../src/core/errors.js';
import { rmDir, tempDir } from './support/tmp.js';

export { rmDir, tempDir };

export type RawDb = BetterSqlite3.Database;

/** The tenant most tests use. */
export const T = 'acme';

/**
 * DEFAULT_POLICY plus source rules for trusted upstreams, so trusted tools can write
 * `trusted_tool_verified` records and corroborate with evidence that counts.
 */
export const TEST_POLICY: PolicyInput = {
  ...DEFAULT_POLICY,
  name: 'memauth-test',
  sources: [
    ...(DEFAULT_POLICY.sources ?? []),
    { match: 'bankapi:*', authority: 'trusted_tool_verified', description: 'verified bank registry' },
    { match: 'registry:*', authority: 'trusted_tool_verified', description: 'vendor registry' },
    { match: 'crm:*', authority: 'trusted_tool_verified', description: 'internal CRM' },
  ],
};

/** A controllable clock: starts at `start`, advance with `advance(ms)`. */
export function manualClock(start = '2025-01-01T00:00:00.000Z'): { now: () => Date; advance: (ms: number) => void; set: (iso: string) => void } {
  let t = Date.parse(start);
  return { now: () => new Date(t), advance: (ms) => void (t += ms), set: (iso) => void (t = Date.parse(iso)) };
}

export interface Env {
  readonly mem: Memory;
  readonly dir: string;
  readonly path: string;
  /** the raw better-sqlite3 handle under the API. */
  readonly db: RawDb;
  /** close the memory (idempotent). */
  close(): Promise<void>;
  /** close and remove the temp directory. */
  dispose(): Promise<void>;
}

/** The raw SQLite handle of a memory opened on the SQLite driver. */
export function rawDb(mem: Memory): RawDb {
  return (mem.driver as SqliteDriver).unsafeDatabase();
}

/**
 * Open a memory on a REAL SQLite file in a fresh temp directory.
 * The checkpoint key and sidecar checkpoint file live next to it (openMemory's defaults).
 */
export async function openTemp(opts: { policy?: PolicyInput; clock?: () => Date; checkpointKey?: string | false; dir?: string } = {}): Promise<Env> {
  const dir = opts.dir ?? tempDir();
  const file = path.join(dir, 'memauth.db');
  const mem = await openMemory({
    path: file,
    policy: opts.policy ?? TEST_POLICY,
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.checkpointKey !== undefined ? { checkpointKey: opts.checkpointKey } : {}),
  });
  assert.ok(mem.driver instanceof SqliteDriver);
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await mem.close();
  };
  return {
    mem,
    dir,
    path: file,
    db: rawDb(mem),
    close,
    dispose: async () => {
      await close();
      rmDir(dir);
    },
  };
}

/** The standard cast of principals (ids are also their domains unless noted). */
export const P = {
  /** browser tool: a trusted channel; what it fetches from the open web is untrusted. */
  browser: 'browser',
  /** a second tool in the browser's domain (Sybil sibling). */
  browser2: 'browser2',
  /** the end user. */
  alice: 'alice',
  /** the LLM agent. */
  agent: 'agent',
  /** an external submitter (e.g. a ticket commenter). */
  mallory: 'mallory',
  /** system-level memory pipeline (extractor, consolidator). */
  pipeline: 'pipeline',
  /** independent trusted verifiers, each in its own domain. */
  bank: 'bank',
  registry: 'registry',
  crm: 'crm',
  /** a second trusted tool in the bank's domain. */
  bank2: 'bank2',
} as const;

/** Register the standard cast in `tenant`. */
export async function registerCast(mem: Memory, tenant = T): Promise<void> {
  const reg = (id: string, kind: 'system' | 'user' | 'tool' | 'agent' | 'external', domain: string): Promise<unknown> => mem.registerPrincipal({ tenant, id, kind, domain });
  await reg(P.browser, 'tool', 'browser.vendor');
  await reg(P.browser2, 'tool', 'browser.vendor');
  await reg(P.alice, 'user', 'alice');
  await reg(P.agent, 'agent', 'agent');
  await reg(P.mallory, 'external', 'mallory.example');
  await reg(P.pipeline, 'system', 'pipeline');
  await reg(P.bank, 'tool', 'bank.example');
  await reg(P.bank2, 'tool', 'bank.example');
  await reg(P.registry, 'tool', 'registry.example');
  await reg(P.crm, 'tool', 'crm.example');
}

/** Open a temp memory and register the standard cast in tenant T. */
export async function setup(opts: Parameters<typeof openTemp>[0] = {}): Promise<Env> {
  const env = await openTemp(opts);
  await registerCast(env.mem);
  return env;
}

/** Assert that `fn` rejects/throws a MemauthError with `code`; returns the error. */
export async function expectCode(fn: () => unknown, code: ErrorCode): Promise<Error> {
  let caught: unknown = undefined;
  let threw = false;
  try {
    await fn();
  } catch (e) {
    threw = true;
    caught = e;
  }
  assert.ok(threw, `expected MemauthError ${code}, but nothing was thrown`);
  assert.ok(isMemauthError(caught), `expected MemauthError ${code}, got ${String((caught as Error)?.name)}: ${String((caught as Error)?.message)}`);
  assert.equal(caught.code, code, `expected code ${code}, got ${caught.code}: ${caught.message}`);
  return caught;
}

/** Assert that a synchronous raw SQL statement throws an error whose message contains IMMUTABLE_FIELD. */
export function expectImmutable(fn: () => unknown, what: string): void {
  assert.throws(fn, (e: unknown) => e instanceof Error && e.message.includes('IMMUTABLE_FIELD'), `${what}: expected IMMUTABLE_FIELD`);
}

/** Every row of a table, in a stable order, for before/after comparisons. */
export function snapshot(db: RawDb, table: string): unknown[] {
  return db.prepare(`SELECT rowid AS __rowid, * FROM ${table} ORDER BY rowid`).all();
}

/** Every protected table's rows. */
export const PROTECTED_TABLES = [
  'records',
  'derivations',
  'audit',
  'corroborations',
  'confirmations',
  'confirmation_uses',
  'decisions',
  'policies',
  'principals',
  'checkpoints',
  'session_reads',
] as const;

export function snapshotAll(db: RawDb): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const t of PROTECTED_TABLES) out[t] = snapshot(db, t);
  return out;
}

/** Drop the audit table's immutability triggers (tamper tests only). */
export function dropAuditTriggers(db: RawDb): void {
  db.exec('DROP TRIGGER IF EXISTS audit_no_update; DROP TRIGGER IF EXISTS audit_no_delete;');
}

/** Reason codes of a decision. */
export function codes(d: { reasons: ReadonlyArray<{ code: string }> }): string[] {
  return d.reasons.map((r) => r.code);
}

/** The reason with `code` (and optional argument/detail), or undefined. */
export function reason<R extends { code: string; argument?: string; detail?: string }>(d: { reasons: readonly R[] }, code: string, extra: { argument?: string; detail?: string } = {}): R | undefined {
  return d.reasons.find((r) => r.code === code && (extra.argument === undefined || r.argument === extra.argument) && (extra.detail === undefined || r.detail === extra.detail));
}
