/**
 * PostgreSQL lexical search over the generated tsvector (`records.search`, GIN index), ranked by
 * `ts_rank` within the bound the SQLite driver keeps (../search-budget.ts): a word in more records
 * of the scope than the bound is not scored, its matches follow newest first. Every statement is
 * planned with its call's values ({@link Stmt.customPlan}): the words decide between the GIN index
 * (rare words) and the `(tenant, scope, created_at)` index read until the bound (common words).
 *
 * May import: core types, ../driver.js, ../rows.js, ../search-budget.js, ../sql/*, ./schema.js.
 */
import type { SearchHit } from '../driver.js';
import { type Row, searchTokens } from '../rows.js';
import { RANKED_MATCHES, wordsToRank } from '../search-budget.js';
import { type Stmt, postgresDialect } from '../sql/dialect.js';
import type { SqlReader } from '../sql/reader.js';
import { RECORD_COLUMNS } from '../sql/statements.js';
import { FTS_TEXT_FUNCTION } from './schema.js';

const RECORD_COLUMNS_OF_R = RECORD_COLUMNS.split(',')
  .map((c) => `r.${c.trim()}`)
  .join(', ');

/**
 * The tsquery of the words of the text parameter `p`: the OR of its lexemes ('simple'
 * configuration, sorted, each quoted), NULL when it has none. Immutable functions only, so a
 * statement planned with its values sees it as a constant (the planner's estimate of how many rows
 * match chooses the index). Lexemes hold letters and digits only ({@link FTS_TEXT_FUNCTION}), so the
 * quoting of the tsvector's text form is the tsquery's.
 */
const wordsQuery = (p: string): string => `to_tsquery('simple', NULLIF(replace(strip(to_tsvector('simple', ${FTS_TEXT_FUNCTION}(${p})))::text, ''' ''', ''' | '''), ''))`;

/** The row filter of a search: the tenant's scope's active, unexpired records (`r` is `records`; tenant, scope, now). */
const ACTIVE_IN_SCOPE = `r.tenant = ? AND r.scope = ? AND r.status = 'active' AND (r.expires_at IS NULL OR r.expires_at > ?)`;

/**
 * Full-text search among the tenant's scope's active, unexpired records, with the same tokens as
 * SQLite's: the top `limit` by `ts_rank` (higher first, ties by id) over the query's ranked words,
 * then, if fewer than `limit` were found, the newest matches of its other words (by `created_at`,
 * then id, descending; score 0). The ranked words are chosen by {@link wordsToRank} from each
 * word's matches in the tenant's scope, counted up to {@link RANKED_MATCHES} + 1 (one statement);
 * a query whose words all fit is ranked exactly as by `ts_rank` over every match. `ts_rank` reads
 * the matched row only, and the counts are of the asked tenant's scope, so neither the choice nor
 * a score depends on another tenant's data (docs/design.md § Search and tenant isolation). A limit
 * below 1 finds nothing (as on SQLite; a negative LIMIT is an error in PostgreSQL).
 *
 * @returns the hits, best first; `score` is the `ts_rank` (0 for a hit of an unranked word).
 */
export async function pgSearch(r: SqlReader, tenant: string, scope: string, query: string, limit: number, now: string): Promise<SearchHit[]> {
  const tokens = searchTokens(query);
  if (tokens.length === 0 || limit < 1) return [];
  const ranked = await rankedWords(r, tenant, scope, tokens);
  let rows = ranked.length === 0 ? [] : await r.rows(rankedSql(ranked.join(' '), tenant, scope, now, limit));
  if (rows.length < limit && ranked.length < tokens.length) {
    const seen = rows.map((x) => x.id as string);
    rows = rows.concat(await r.rows(newestSql(tokens.join(' '), tenant, scope, now, seen, limit - rows.length)));
  }
  const recs = await r.recordsFromRows(rows, now);
  return recs.map((record, i) => ({ record, score: Number((rows[i] as Row).score) }));
}

/**
 * The words of `tokens` the search ranks ({@link wordsToRank}), each word's matches among the
 * tenant's scope's rows counted up to {@link RANKED_MATCHES} + 1 in one statement: a bounded read
 * per word whatever the records it is in (a common word stops at the bound, read newest first or
 * in table order; a rare one is looked up in the GIN index). Erased rows have an empty tsvector.
 */
async function rankedWords(r: SqlReader, tenant: string, scope: string, tokens: readonly string[]): Promise<string[]> {
  const counts = tokens.map((_, i) => `(SELECT count(*) FROM (SELECT 1 FROM records r WHERE r.tenant = $1 AND r.scope = $2 AND r.search @@ ${wordsQuery(`$${i + 4}`)} LIMIT $3) c) AS n${i}`);
  const row = (await r.rows({ text: `SELECT ${counts.join(', ')}`, values: [tenant, scope, RANKED_MATCHES + 1, ...tokens], customPlan: true }))[0] as Row;
  return wordsToRank(tokens.map((word, i) => ({ word, matches: Number(row[`n${i}`]) })));
}

/** The best `limit` accepted matches of the words `text` by `ts_rank` (higher first, ties by id). */
function rankedSql(text: string, tenant: string, scope: string, now: string, limit: number): Stmt {
  const sql = `SELECT ${RECORD_COLUMNS_OF_R}, ts_rank(r.search, ${wordsQuery('?')}) AS score FROM records r
     WHERE r.search @@ ${wordsQuery('?')} AND ${ACTIVE_IN_SCOPE} ORDER BY score DESC, r.id LIMIT ?`;
  return { text: postgresDialect.sql(sql), values: [text, text, tenant, scope, now, limit], customPlan: true };
}

/** The newest `need` accepted matches of the words `text` (by `created_at`, then id, descending) whose id is not in `seen`; score 0. */
function newestSql(text: string, tenant: string, scope: string, now: string, seen: readonly string[], need: number): Stmt {
  const sql = `SELECT ${RECORD_COLUMNS_OF_R}, 0 AS score FROM records r
     WHERE r.search @@ ${wordsQuery('?')} AND ${ACTIVE_IN_SCOPE} AND NOT (r.id = ANY(?::text[])) ORDER BY r.created_at DESC, r.id DESC LIMIT ?`;
  return { text: postgresDialect.sql(sql), values: [text, tenant, scope, now, [...seen], need], customPlan: true };
}
