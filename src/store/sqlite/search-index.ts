/**
 * The SQLite driver's full-text index: one FTS5 table per tenant (docs/design.md § Search and tenant isolation — search exposes no statistic that depends on another tenant's data).
 *
 * Why a table per tenant: FTS5's BM25 reads its statistics — the number of rows, their average
 * length and each term's document frequency — from the whole table it runs on. With one table for
 * every tenant, the score (and so the order) of tenant A's hits moved whenever tenant B wrote or
 * erased a record with the query's words: A could learn whether and how often any word occurs in
 * B's memory. In a table of its own, a tenant's statistics are computed from its own rows only,
 * while ranking stays FTS5's (the driver's window over the index's best matches stays exact, and
 * no statistic has to be kept by hand in step with FTS5's tokenizer). The statistics of one
 * tenant span all of its scopes: a tenant's scopes share one table (each row carries its scope key,
 * weight 0 in BM25; a search matches only its scope's rows).
 *
 * Tables are named `records_fts_<n>` by a registry (`search_indexes`: n ↔ tenant), never by the
 * tenant string itself, so no tenant name reaches an SQL identifier. A tenant's table is created
 * in the transaction that indexes its first record (rolled back with it) — in a group commit,
 * before that transaction's SAVEPOINT (see the driver's `ensureIndexOutsideSavepoint`).
 */
import type Database from 'better-sqlite3';

/** The FTS5 table definition of one tenant's index (`name` comes from {@link tableName} only). */
export function createTableSql(name: string): string {
  return `CREATE VIRTUAL TABLE ${name} USING fts5 (content, scope_key, tokenize = 'unicode61 remove_diacritics 2');
INSERT INTO ${name} (${name}, rank) VALUES ('secure-delete', 1);`;
}

/** The table name of registry entry `id` (a positive integer: nothing else reaches the SQL). */
export function tableName(id: number): string {
  if (!Number.isSafeInteger(id) || id < 1) throw new Error(`memauth internal: search index id ${String(id)}`);
  return `records_fts_${id}`;
}

/** Per-tenant statements kept prepared at most (each tenant's index has statements of its own). */
const MAX_STATEMENTS = 512;

/**
 * The per-tenant FTS5 tables of one connection: look-up, lazy creation, index and erase, and
 * statements over them (a bounded set, least recently used dropped first).
 */
export class SearchIndexes {
  private readonly stmts = new Map<string, Database.Statement>();
  private lookup: Database.Statement | null = null;
  private register: Database.Statement | null = null;
  /** tables this object has created so far (rolled back ones included). */
  created = 0;

  constructor(private readonly db: Database.Database) {}

  /** A prepared statement for per-tenant SQL (bounded; recently used kept). */
  stmt(sql: string): Database.Statement {
    let s = this.stmts.get(sql);
    if (s !== undefined) {
      this.stmts.delete(sql);
    } else {
      s = this.db.prepare(sql);
      if (this.stmts.size >= MAX_STATEMENTS) this.stmts.delete(this.stmts.keys().next().value as string);
    }
    this.stmts.set(sql, s);
    return s;
  }

  /**
   * The tenant's index table, or null when it has none yet (it never indexed a record). Read from
   * the registry every time (a rolled back creation leaves nothing behind to trust in memory).
   */
  tableOf(tenant: string): string | null {
    this.lookup ??= this.db.prepare('SELECT id FROM search_indexes WHERE tenant = ?').pluck();
    const r = this.lookup.get(tenant) as number | bigint | undefined;
    return r === undefined ? null : tableName(Number(r));
  }

  /** The tenant's index table, created (with its registry entry) when missing. Call inside a write transaction. */
  ensure(tenant: string): string {
    const known = this.tableOf(tenant);
    if (known !== null) return known;
    this.register ??= this.db.prepare('INSERT INTO search_indexes (tenant) VALUES (?)');
    const { lastInsertRowid } = this.register.run(tenant);
    const name = tableName(Number(lastInsertRowid));
    this.db.exec(createTableSql(name));
    this.created += 1;
    return name;
  }

  /** Index a record row (its `records` rowid) under its tenant's and scope's key. */
  insert(tenant: string, rowid: number | bigint, content: string | null, scopeKey: string): void {
    const t = this.ensure(tenant);
    this.stmt(`INSERT INTO ${t} (rowid, content, scope_key) VALUES (?, ?, ?)`).run(rowid, content, scopeKey);
  }

  /** Remove a record row's index entry (secure-delete: its terms leave the index's pages). */
  erase(tenant: string, rowid: number | bigint): void {
    const t = this.tableOf(tenant);
    if (t !== null) this.stmt(`DELETE FROM ${t} WHERE rowid = ?`).run(rowid);
  }
}

/**
 * Migration: move every active record's index entry from the shared `records_fts` into its
 * tenant's own table, then drop the shared one (its pages are overwritten: secure_delete is on).
 */
export function migrateToTenantIndexes(db: Database.Database): void {
  db.exec(`CREATE TABLE search_indexes (id INTEGER PRIMARY KEY, tenant TEXT NOT NULL UNIQUE) STRICT;
CREATE TRIGGER search_indexes_no_update BEFORE UPDATE ON search_indexes
BEGIN SELECT RAISE(ABORT, 'memauth IMMUTABLE_FIELD: search index registrations cannot be updated'); END;
CREATE TRIGGER search_indexes_no_delete BEFORE DELETE ON search_indexes
BEGIN SELECT RAISE(ABORT, 'memauth IMMUTABLE_FIELD: search index registrations cannot be deleted'); END;`);
  const idx = new SearchIndexes(db);
  const tenants = db.prepare('SELECT DISTINCT tenant FROM records WHERE content IS NOT NULL ORDER BY tenant').pluck().all() as string[];
  for (const tenant of tenants) {
    const t = idx.ensure(tenant);
    db.prepare(
      `INSERT INTO ${t} (rowid, content, scope_key)
       SELECT rowid, content, 'k' || lower(hex(tenant)) || 'x' || lower(hex(scope)) FROM records WHERE tenant = ? AND content IS NOT NULL ORDER BY rowid`,
    ).run(tenant);
  }
  db.exec('DROP TABLE records_fts');
}
