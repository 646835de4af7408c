/**
 * Helpers of the conformance suite: the same calls on either store, through the factory's
 * {@link Env} and its driver-specific {@link Raw} handle.
 */
import assert from 'node:assert/strict';
import type { Env, OpenOptions, Raw, Row, StoreFactory } from '../support/stores.js';
import { registerCast } from '../helpers.js';

export type { Env, Raw, Row, StoreFactory } from '../support/stores.js';

/** Open a fresh store of the factory's kind and register the standard cast in tenant T. */
export async function setupWith(f: StoreFactory, opts: OpenOptions = {}): Promise<Env> {
  const env = await f.open(opts);
  await registerCast(env.mem);
  return env;
}

/** Assert that a raw statement is refused by a memauth trigger (message contains IMMUTABLE_FIELD). */
export async function expectImmutable(fn: () => Promise<unknown>, what: string): Promise<void> {
  let err: unknown = null;
  try {
    await fn();
  } catch (e) {
    err = e;
  }
  assert.ok(err !== null, `${what}: expected IMMUTABLE_FIELD, but the statement was accepted`);
  assert.ok(err instanceof Error && err.message.includes('IMMUTABLE_FIELD'), `${what}: expected IMMUTABLE_FIELD, got ${String(err)}`);
}

/** Every protected table. */
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
  'session_log',
  'review_notes',
] as const;

/** Every row of a table, in physical order, for before/after comparisons. */
export async function snapshot(raw: Raw, table: string): Promise<Row[]> {
  return raw.query(`SELECT ${raw.rowKey} AS __rowid, * FROM ${table} ORDER BY ${raw.rowKey}`);
}

export async function snapshotAll(raw: Raw): Promise<Record<string, Row[]>> {
  const out: Record<string, Row[]> = {};
  for (const t of PROTECTED_TABLES) out[t] = await snapshot(raw, t);
  return out;
}

/** One value of a raw query (first column of the first row). */
export async function scalar(raw: Raw, sql: string, params: readonly unknown[] = []): Promise<unknown> {
  const [r] = await raw.query(sql, params);
  return r === undefined ? undefined : Object.values(r)[0];
}

/** Drop the audit table's immutability triggers (tamper tests only). */
export async function dropAuditTriggers(raw: Raw): Promise<void> {
  await raw.dropTriggers('audit', ['update', 'delete']);
}

/**
 * The inputs of record `id` as its lineage graph shows them: its stored edges and, for a record
 * written in a session, one `session` edge to each record its session context stands for.
 */
export async function inputsOf(mem: Env['mem'], tenant: string, id: string): Promise<Array<{ from: string; transform: string; kind: string }>> {
  return (await mem.lineageGraph({ tenant, id })).edges.filter((e) => e.to === id).map((e) => ({ from: e.from, transform: e.transform, kind: e.kind }));
}
