/**
 * The tables every driver keeps, with their storable columns in one order and their keys:
 * what `memauth migrate` copies row for row (src/store/copy.ts). SQLite's FTS5 table and
 * PostgreSQL's generated tsvector are indexes, rebuilt from `records.content` by each driver.
 */
export const TABLE_COLUMNS = {
  policies: ['version', 'text', 'created_at'],
  principals: ['tenant', 'id', 'kind', 'max_authority', 'domain', 'created_at'],
  records: [
    'id',
    'tenant',
    'scope',
    'content',
    'content_hash',
    'created_at',
    'expires_at',
    'origin_authority',
    'origin_principal',
    'origin_source',
    'origin_written_at',
    'taint_lowest',
    'taint_channels',
    'taint_sources',
    'taint_oldest_source_at',
    'policy_version',
    'write_reason',
    'audit_seq',
    'status',
    'deleted_at',
    'session_context',
    'claims',
    'version_of',
    'supersedes',
  ],
  derivations: ['record_id', 'ord', 'from_id', 'transform', 'kind'],
  corroborations: ['id', 'tenant', 'record_id', 'principal_id', 'authority', 'domain', 'evidence_ref', 'at', 'audit_seq'],
  confirmations: ['id', 'tenant', 'principal_id', 'action_type', 'resource', 'args_hash', 'args', 'memory_ids', 'expires_at', 'max_uses', 'created_at', 'audit_seq', 'usable_by'],
  confirmation_uses: ['tenant', 'confirmation_id', 'decision_id', 'at'],
  sessions: ['tenant', 'id', 'created_at', 'owner'],
  session_reads: ['tenant', 'session_id', 'record_id', 'first_read_at'],
  session_log: ['tenant', 'session_id', 'ord', 'record_id', 'hash', 'summary', 'at'],
  decisions: ['id', 'tenant', 'session_id', 'at', 'outcome', 'body', 'audit_seq', 'action_type', 'context_waived'],
  audit: ['tenant', 'seq', 'prev_hash', 'op', 'payload', 'policy_version', 'hash'],
  checkpoints: ['tenant', 'seq', 'hash', 'at', 'public_key', 'signature'],
  tokens: ['id', 'tenant', 'principal_id', 'hash', 'created_at', 'revoked_at'],
  review_notes: ['id', 'tenant', 'decision_id', 'verdict', 'by_principal', 'note', 'at'],
  tenant_keys: ['tenant', 'content_key', 'created_at'],
} as const satisfies Record<string, readonly string[]>;

export type TableName = keyof typeof TABLE_COLUMNS;
export const TABLE_NAMES = Object.keys(TABLE_COLUMNS) as TableName[];

/** Primary key of each table: the order rows are exported in (byte order on both drivers). */
export const TABLE_KEYS: Readonly<Record<TableName, readonly string[]>> = {
  policies: ['version'],
  principals: ['tenant', 'id'],
  records: ['id'],
  derivations: ['record_id', 'ord'],
  corroborations: ['id'],
  confirmations: ['id'],
  confirmation_uses: ['decision_id'],
  sessions: ['tenant', 'id'],
  session_reads: ['tenant', 'session_id', 'record_id'],
  session_log: ['tenant', 'session_id', 'ord'],
  decisions: ['id'],
  audit: ['tenant', 'seq'],
  checkpoints: ['tenant', 'seq', 'at'],
  tokens: ['id'],
  review_notes: ['id'],
  tenant_keys: ['tenant'],
};

/** Integer columns; every other column is text (or NULL). */
export const INTEGER_COLUMNS: ReadonlySet<string> = new Set(['audit_seq', 'ord', 'max_uses', 'seq']);

/** One row as copied: integers as numbers, text as strings, NULL as null. */
export type CopyRow = Record<string, string | number | null>;

/** Normalise a driver's row (PostgreSQL returns bigint as a string) to a {@link CopyRow} of `table`'s columns. */
export function copyRow(table: TableName, r: Record<string, unknown>): CopyRow {
  const out: CopyRow = {};
  for (const c of TABLE_COLUMNS[table]) {
    const v = r[c];
    out[c] = v === null || v === undefined ? null : INTEGER_COLUMNS.has(c) ? Number(v) : String(v);
  }
  return out;
}

/**
 * Bulk row access for `memauth migrate`: a consistent export and an all-or-nothing import.
 * Both drivers implement it; it is not part of the {@link StorageDriver} port.
 */
export interface RowStore {
  readonly kind: string;
  /** Every row of every table, table by table in {@link TABLE_NAMES} order, keys ascending, from one consistent snapshot. */
  exportRows(sink: (table: TableName, rows: CopyRow[]) => Promise<void>, batchSize?: number): Promise<void>;
  /**
   * Insert rows in one transaction: all of them or none. Refuses (INVALID_ARGUMENT) when the
   * store already holds any row.
   */
  importRows(fill: (put: (table: TableName, rows: readonly CopyRow[]) => Promise<void>) => Promise<void>): Promise<void>;
}
