/**
 * Batched reads of the audit entries rows are checked against (docs/design.md § Audit log: a row
 * that does not match the audit entry that recorded it carries no authority). A page of rows —
 * the hits of a search, a record's lineage, its corroborations — is checked against entries read
 * in one batch, not one read per row; every row is still checked against its own entry.
 * Imports from src/core and src/store's port.
 */
import type { AuditEntry } from '../core/audit.js';
import type { StorageReader } from '../store/driver.js';

/**
 * The tenant's audit entries that recorded `rows`, by seq (a seq with no entry is absent): one
 * batched read when the store offers it (`auditEntriesAt`), else one `auditRange` read per seq.
 * @param seqOf - the seq of the entry that recorded a row.
 */
export async function auditEntriesAt<T>(src: StorageReader, tenant: string, rows: readonly T[], seqOf: (row: T) => number): Promise<Map<number, AuditEntry>> {
  const want = [...new Set(rows.map(seqOf))];
  const out = new Map<number, AuditEntry>();
  if (want.length === 0) return out;
  if (src.auditEntriesAt !== undefined) {
    for (const e of await src.auditEntriesAt(tenant, want)) out.set(e.seq, e);
    return out;
  }
  for (const seq of want) {
    const [e] = await src.auditRange(tenant, seq, seq);
    if (e !== undefined) out.set(seq, e);
  }
  return out;
}
