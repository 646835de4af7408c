/**
 * Copying a whole store to another (`memauth migrate`, SQLite ↔ PostgreSQL): every table row by
 * from one consistent snapshot into an empty destination in one transaction, then each table's
 * digest and each tenant's audit head compared at both ends.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/canonical.js';
import { MemauthError } from '../core/errors.js';
import type { StorageDriver } from './driver.js';
import { type CopyRow, type RowStore, TABLE_NAMES, type TableName } from './tables.js';

/** What {@link copyStore} did and found. */
export interface CopyReport {
  readonly from: string;
  readonly to: string;
  /** rows copied per table. */
  readonly counts: Readonly<Record<TableName, number>>;
  /** per tenant: the audit head at the source and at the destination (identical when `ok`). */
  readonly heads: ReadonlyArray<{ readonly tenant: string; readonly seq: number; readonly hash: string; readonly destinationHash: string | null }>;
  /** per table: SHA-256 over the canonical JSON of every row in key order, at both ends. */
  readonly digests: Readonly<Record<TableName, { readonly source: string; readonly destination: string }>>;
  /** every table's digest and every tenant's head hash are identical at both ends. */
  readonly ok: boolean;
}

type Store = StorageDriver & RowStore;

async function digestAll(s: RowStore): Promise<{ digests: Record<TableName, string>; counts: Record<TableName, number> }> {
  const hashes = new Map<TableName, ReturnType<typeof createHash>>();
  const counts = Object.fromEntries(TABLE_NAMES.map((t) => [t, 0])) as Record<TableName, number>;
  for (const t of TABLE_NAMES) hashes.set(t, createHash('sha256'));
  await s.exportRows(async (t, rows) => {
    const h = hashes.get(t);
    for (const r of rows) h?.update(`${canonicalJson(r)}\n`);
    counts[t] += rows.length;
  });
  const digests = Object.fromEntries(TABLE_NAMES.map((t) => [t, hashes.get(t)?.digest('hex') ?? ''])) as Record<TableName, string>;
  return { digests, counts };
}

/**
 * Copy every row of every table from one store to another, empty one — principals, policies,
 * records (erased ones too, with their hashes), derivations, corroborations, confirmations and
 * their uses, sessions and reads, decisions, the audit chains and checkpoints — from one
 * consistent snapshot of the source, into the destination in one transaction. Then compare:
 * each table's digest (every row, canonical JSON, key order) and each tenant's audit head hash
 * must be identical at both ends. Search indexes are rebuilt by the destination driver.
 *
 * The caller still verifies the destination's chains (`verifyAudit`); `memauth migrate` does.
 *
 * @throws MemauthError `INVALID_ARGUMENT` when the destination already holds rows; the
 *   drivers' `DATABASE_*` errors.
 */
export async function copyStore(from: Store, to: Store): Promise<CopyReport> {
  const counts = Object.fromEntries(TABLE_NAMES.map((t) => [t, 0])) as Record<TableName, number>;
  await to.importRows(async (put) => {
    await from.exportRows(async (table: TableName, rows: CopyRow[]) => {
      await put(table, rows);
      counts[table] += rows.length;
    });
  });
  const [src, dst] = [await digestAll(from), await digestAll(to)];
  const digests = Object.fromEntries(TABLE_NAMES.map((t) => [t, { source: src.digests[t], destination: dst.digests[t] }])) as CopyReport['digests'];
  const heads: Array<CopyReport['heads'][number]> = [];
  for (const tenant of await from.tenants()) {
    const h = await from.auditHead(tenant);
    if (!h) continue;
    const d = await to.auditHead(tenant);
    heads.push({ tenant, seq: h.seq, hash: h.hash, destinationHash: d && d.seq === h.seq ? d.hash : null });
  }
  for (const t of TABLE_NAMES) {
    if (src.counts[t] !== counts[t])
      throw new MemauthError(
        'DATABASE_LOCKED',
        `the source changed during the copy (${t}: ${counts[t]} rows copied, ${src.counts[t]} now); stop its writers and migrate again into a new destination`,
        { table: t },
      );
  }
  const ok = TABLE_NAMES.every((t) => digests[t].source === digests[t].destination) && heads.every((h) => h.hash === h.destinationHash);
  return { from: from.kind, to: to.kind, counts, heads, digests, ok };
}
