/**
 * What the SQLite driver does its own way: running a statement (better-sqlite3, prepared once
 * and cached, synchronously), its errors, full-text search over the tenant's FTS5 table
 * (./search-index.ts) and lineage in one recursive statement. Everything else is the shared
 * SQL of src/store/sql/.
 *
 * May import: better-sqlite3 (types), core, ../driver.js, ../rows.js, ../search-budget.js, ../sql/*, ./search-index.js.
 */
import type Database from 'better-sqlite3';
import { MemauthError } from '../../core/errors.js';
import type { SearchHit } from '../driver.js';
import type { DerivationEdge } from '../../core/types.js';
import { type Row, lineageFromRows, searchTokens } from '../rows.js';
import { RANKED_MATCHES, wordsToRank } from '../search-budget.js';
import type { Stmt } from '../sql/dialect.js';
import type { NativeReads, SqlExecutor, SqlReader } from '../sql/reader.js';
import type { SearchIndexes } from './search-index.js';

/** Map a better-sqlite3 error to a MemauthError with a message a person can act on. */
export function mapSqliteError(e: unknown, path: string): unknown {
  const code = (e as { code?: string })?.code ?? '';
  const msg = e instanceof Error ? e.message : String(e);
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT' || code.startsWith('SQLITE_CORRUPT')) {
    return new MemauthError(
      'DATABASE_CORRUPT',
      `${path} is not a valid memauth database or is corrupted (${code}); restore it from a backup. Nothing was written.`,
      { path, sqliteCode: code },
      { cause: e },
    );
  }
  if (code === 'SQLITE_CANTOPEN' || code === 'SQLITE_READONLY' || code === 'SQLITE_PERM' || code === 'SQLITE_IOERR' || code.startsWith('SQLITE_IOERR') || code === 'SQLITE_FULL') {
    return new MemauthError(
      'DATABASE_UNAVAILABLE',
      `cannot open or write ${path} (${code}): check that its folder exists, that it is a file, that you may write it and that the disk has room. Nothing was written.`,
      { path, sqliteCode: code },
      { cause: e },
    );
  }
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
    return new MemauthError('DATABASE_LOCKED', `${path} is locked by another process; retry, or stop the other writer`, { path, sqliteCode: code }, { cause: e });
  }
  if (msg.includes('memauth IMMUTABLE_FIELD')) {
    return new MemauthError('IMMUTABLE_FIELD', msg.replace(/^.*memauth IMMUTABLE_FIELD: /, ''), { path }, { cause: e });
  }
  return e;
}

/**
 * Statements on one better-sqlite3 connection, each prepared once; runs synchronously. A failure
 * of the file itself (corrupt page, I/O error, lock) is thrown as the MemauthError of
 * {@link mapSqliteError} (`DATABASE_CORRUPT`, …), so every read and write reports it alike.
 */
export class SqliteExec implements SqlExecutor {
  private readonly stmts = new Map<string, Database.Statement>();

  /** @param path - the database file, named in error messages. */
  constructor(
    readonly db: Database.Database,
    readonly path = '',
  ) {}

  /** `fn()`, with a better-sqlite3 error mapped by {@link mapSqliteError}. */
  private mapped<T>(fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      throw mapSqliteError(e, this.path);
    }
  }

  /** The cached prepared statement for `sql`. */
  stmt(sql: string): Database.Statement {
    let s = this.stmts.get(sql);
    if (!s) {
      s = this.mapped(() => this.db.prepare(sql));
      this.stmts.set(sql, s);
    }
    return s;
  }

  all(s: Stmt): Row[] {
    return this.mapped(() => this.stmt(s.text).all(...s.values) as Row[]);
  }

  run(stmts: ReadonlyArray<Stmt | null>): void {
    this.mapped(() => {
      for (const s of stmts) if (s !== null) this.stmt(s.text).run(...s.values);
    });
  }

  /** Run one statement; its new row's rowid. */
  insert(s: Stmt): number | bigint {
    return this.mapped(() => this.stmt(s.text).run(...s.values).lastInsertRowid);
  }
}

/** {@link scopeKeyOf}'s recent answers (a pure function of its arguments), bounded. */
const SCOPE_KEYS = new Map<string, Map<string, string>>();

/**
 * The full-text index's key for a tenant's scope: one token (`k`, hex of the tenant's UTF-8,
 * `x`, hex of the scope's) — migration 4 computes the same in SQL.
 */
export function scopeKeyOf(tenant: string, scope: string): string {
  const memo = SCOPE_KEYS.get(tenant)?.get(scope);
  if (memo !== undefined) return memo;
  const k = `k${Buffer.from(tenant, 'utf8').toString('hex')}x${Buffer.from(scope, 'utf8').toString('hex')}`;
  if (SCOPE_KEYS.size >= 256) SCOPE_KEYS.clear();
  let scopes = SCOPE_KEYS.get(tenant);
  if (scopes === undefined) SCOPE_KEYS.set(tenant, (scopes = new Map()));
  if (scopes.size >= 1024) scopes.clear();
  scopes.set(scope, k);
  return k;
}

/** FTS5 query from free text: each token quoted (no operator injection), OR-ed, ranked by BM25. */
export function ftsQuery(text: string): string | null {
  const tokens = searchTokens(text);
  return tokens.length === 0 ? null : orQuery(tokens);
}

/** The FTS5 OR of `tokens` (from {@link searchTokens}: letters and digits only), each quoted. */
const orQuery = (tokens: readonly string[]): string => tokens.map((t) => `"${t}"`).join(' OR ');

/**
 * Full-text search among the tenant's scope's active, unexpired records: the top `limit` by BM25
 * (ties by id) over the query's ranked words, then, if fewer than `limit` were found, the newest
 * matches of its other words (score 0). The ranked words are the query's rarest words in the
 * scope, taken while their matches add up to at most {@link RANKED_MATCHES} (each word's count is
 * read up to that bound, in its own statement); a query whose words all fit is ranked exactly as by
 * BM25 over every match. A word matching more than that carries little ranking signal (BM25's
 * IDF falls with the matches; a word in over half the records has FTS5's floor IDF of 1e-6), so
 * it is not scored: its matches come newest first (`rowid` order, which FTS5 serves without
 * visiting every match). The counts are of the tenant's own index in the asked scope, so neither
 * the choice nor a score depends on another tenant's data (docs/design.md § Search and tenant
 * isolation). The index matches only this tenant's scope (scope_key, weight 0 in BM25; see
 * {@link onlyScope}).
 */
async function search(indexes: SearchIndexes, r: SqlReader, tenant: string, scope: string, query: string, limit: number, now: string): Promise<SearchHit[]> {
  const tokens = searchTokens(query);
  if (tokens.length === 0 || limit < 1) return [];
  const table = indexes.tableOf(tenant);
  if (table === null) return [];
  const inScope = onlyScope(indexes, tenant, scope) ? '' : `scope_key : "${scopeKeyOf(tenant, scope)}" AND `;
  const ranked = rankedWords(indexes, table, inScope, tokens);
  let hits = ranked.length === 0 ? [] : rankAll(indexes, table, `${inScope}content : (${orQuery(ranked)})`, tenant, scope, limit, now);
  if (hits.length < limit && ranked.length < tokens.length) {
    const seen = new Set(hits.map((h) => h.id as string));
    hits = hits.concat(newest(indexes, table, `${inScope}content : (${orQuery(tokens)})`, tenant, scope, limit - hits.length, now, seen));
  }
  const recs = await r.recordsFromRows(hits, now);
  return recs.map((record, i) => ({ record, score: -Number((hits[i] as Row).score) || 0 }));
}

/**
 * The words of `tokens` a search ranks by BM25, in the query's order (the order BM25 sums in): see
 * {@link wordsToRank}; each word's matches in the scope are counted up to {@link RANKED_MATCHES} + 1.
 */
function rankedWords(indexes: SearchIndexes, table: string, inScope: string, tokens: readonly string[]): string[] {
  const count = indexes.stmt(`SELECT count(*) AS n FROM (SELECT rowid FROM ${table} WHERE ${table} MATCH ? LIMIT ?)`);
  return wordsToRank(tokens.map((word) => ({ word, matches: Number((count.get(`${inScope}content : "${word}"`, RANKED_MATCHES + 1) as Row).n) })));
}

/**
 * The newest `need` accepted matches of `match` whose id is not in `seen`, newest first (score 0),
 * read in windows down the index's rowids: a window's rows dropped by the row filter (expired,
 * erased meanwhile) only move the next window down.
 */
function newest(indexes: SearchIndexes, table: string, match: string, tenant: string, scope: string, need: number, now: string, seen: ReadonlySet<string>): Row[] {
  const window = need + 16 + seen.size;
  const stmt = indexes.stmt(
    `SELECT 0 AS score, f.fts_rowid AS fts_rowid, r.* FROM (SELECT rowid AS fts_rowid FROM ${table} WHERE ${table} MATCH ? AND rowid < ? ORDER BY rowid DESC LIMIT ?) AS f LEFT JOIN records r ON ${SEARCH_ROW_FILTER} ORDER BY f.fts_rowid DESC`,
  );
  const out: Row[] = [];
  let below = Number.MAX_SAFE_INTEGER;
  for (;;) {
    const rows = stmt.all(match, below, window, tenant, scope, now) as Row[];
    for (const x of rows) {
      below = Number(x.fts_rowid);
      if (x.id !== null && x.id !== undefined && !seen.has(x.id as string) && out.length < need) out.push(x);
    }
    if (out.length >= need || rows.length < window) return out;
  }
}

/**
 * The top `limit` accepted matches of `match` by BM25 (ties by id), exactly as ranking every match.
 * Only the best `window` matches are looked up in `records` (one row probe per in-scope match was
 * over a third of a search at 1M records). A LEFT JOIN keeps the candidates the row filter drops
 * (expired; the tenant and scope are checked again), so one statement — one snapshot — tells
 * whether the window decided the answer: it did when the index had no more matches, or when the
 * `limit`-th accepted hit scores strictly better than the window's worst candidate (every match
 * outside the window scores at least that, so none can enter the top `limit`, not even by the id
 * tie-break). Otherwise one more statement, run synchronously right after (same snapshot), ranks
 * inside SQLite by (score, id) with the row filter inside the query and returns `limit` rows: when
 * the window already held `limit` accepted hits, only matches scoring at most the `limit`-th's are
 * looked up (the tie at the boundary); else every match is. No more than `window` rows reach
 * JavaScript.
 */
function rankAll(indexes: SearchIndexes, table: string, match: string, tenant: string, scope: string, limit: number, now: string): Row[] {
  const window = Math.max(2 * limit, limit + 16);
  const rows = indexes.stmt(searchSql(table, 'window')).all(match, window, tenant, scope, now) as Row[];
  const hits = rows.filter((x) => x.id !== null && x.id !== undefined).slice(0, limit);
  if (rows.length < window) return hits;
  const worst = Number((rows[rows.length - 1] as Row).score);
  const kth = hits.length === limit ? Number((hits[limit - 1] as Row).score) : Number.POSITIVE_INFINITY;
  if (kth < worst) return hits;
  return hits.length === limit
    ? (indexes.stmt(searchSql(table, 'tie')).all(match, kth, tenant, scope, now, limit) as Row[])
    : (indexes.stmt(searchSql(table, 'all')).all(match, tenant, scope, now, limit) as Row[]);
}

/**
 * Whether the tenant has no record outside `scope` (two index look-ups on `records (tenant,
 * scope, …)`). Then a search matches the words alone: the scope key in the MATCH costs a pass over
 * every posting of the scope's key — BM25 counts the rows of each phrase of the query, and the AND
 * steps through the key's doclist — O(records in the scope) per search, even for a word in one
 * record. Scores are the same either way (the key's column has weight 0 and the row's length
 * counts every column), and the row filter still checks tenant and scope, so the answer is the
 * same; a record written to another scope in between only sends a candidate to the row filter.
 */
function onlyScope(indexes: SearchIndexes, tenant: string, scope: string): boolean {
  return indexes.stmt(OTHER_SCOPE_SQL).get(tenant, scope, tenant, scope) === undefined;
}

const OTHER_SCOPE_SQL = `SELECT 1 AS x WHERE EXISTS (SELECT 1 FROM records WHERE tenant = ? AND scope < ?) OR EXISTS (SELECT 1 FROM records WHERE tenant = ? AND scope > ?)`;

/** The row filter of a search: the tenant's scope's active, unexpired records (`r` is `records`). */
const SEARCH_ROW_FILTER = `r.rowid = f.fts_rowid AND r.tenant = ? AND r.scope = ? AND r.status = 'active' AND (r.expires_at IS NULL OR r.expires_at > ?)`;

/**
 * The statements of {@link search} over the FTS5 table `table` (a registry name, see
 * search-index.ts): `window`, the best `?` matches by score, each with its row or NULLs when the
 * row filter drops it; `tie`, the best `?` accepted matches by (score, id) among those scoring at
 * most `?`; `all`, the best `?` accepted matches by (score, id).
 */
function searchSql(table: string, kind: 'window' | 'tie' | 'all'): string {
  const scored = `SELECT rowid AS fts_rowid, bm25(${table}, 1.0, 0.0) AS score FROM ${table} WHERE ${table} MATCH ?`;
  if (kind === 'window') return `SELECT f.score AS score, r.* FROM (${scored} ORDER BY score LIMIT ?) AS f LEFT JOIN records r ON ${SEARCH_ROW_FILTER} ORDER BY f.score, r.id`;
  const bound = kind === 'tie' ? ' AND score <= ?' : '';
  return `SELECT f.score AS score, r.* FROM (${scored}${bound}) AS f JOIN records r ON ${SEARCH_ROW_FILTER} ORDER BY f.score, r.id LIMIT ?`;
}

/**
 * The lineage DAG of `ids` in one statement (the PostgreSQL driver's walk, in SQLite): every record
 * of the tenant reachable upward from `ids` over derivation edges, each with its stored edges in
 * order (edges to a parent outside the tenant included, the parent itself not: the walk never
 * leaves the tenant). A chain of depth d is one statement, not d round trips. The ids travel as one
 * JSON array (no IN-list limit).
 */
async function lineage(r: SqlReader, tenant: string, ids: readonly string[]): Promise<Map<string, DerivationEdge[]>> {
  if (ids.length === 0) return new Map();
  return lineageFromRows(await r.rows({ text: LINEAGE_SQL, values: [JSON.stringify([...new Set(ids)]), tenant, tenant] }));
}

const LINEAGE_SQL = `WITH RECURSIVE l(id) AS (
  SELECT r.id FROM json_each(?) AS j JOIN records r ON r.id = j.value AND +r.tenant = ?
  UNION
  SELECT r.id FROM l JOIN derivations d ON d.record_id = l.id JOIN records r ON r.id = d.from_id AND +r.tenant = ?
)
SELECT l.id AS id, d.from_id AS from_id, d.transform AS transform, d.kind AS kind FROM l LEFT JOIN derivations d ON d.record_id = l.id ORDER BY l.id, d.ord`;

/** SQLite's own reads over the driver's search indexes (see {@link NativeReads}). */
export function sqliteNative(indexes: SearchIndexes, path = ''): NativeReads {
  return {
    search: (r, tenant, scope, query, limit, now) =>
      search(indexes, r, tenant, scope, query, limit, now).catch((e: unknown) => {
        throw mapSqliteError(e, path);
      }),
    lineage,
  };
}
