/**
 * The small SQL dialect the two drivers share (src/store/sql/statements.ts writes each statement
 * once, with `?` placeholders): how placeholders are rendered, how a list of values becomes an
 * IN condition, and the few clauses that differ between SQLite and PostgreSQL. No query builder:
 * statements are plain text. Imports nothing of memauth but the row type.
 */

/** One statement ready for a driver: text in the dialect's placeholders, and its values. */
export interface Stmt {
  readonly text: string;
  readonly values: readonly unknown[];
  /**
   * PostgreSQL: plan this call with its own values, never with a cached generic plan (for
   * statements whose best plan depends on the values, like a search's words). SQLite ignores it.
   */
  readonly customPlan?: boolean;
}

/** What differs in the SQL text between the drivers. */
export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /** `?` placeholders (outside quotes) rendered as the driver expects (memoised per text). */
  sql(text: string): string;
  /**
   * The most values one {@link inList} may hold: SQLite binds one placeholder per value (lists
   * are cut in chunks of 500); PostgreSQL binds one array (no limit).
   */
  readonly inListMax: number;
  /** `column IN (…)` over `values` (non-empty, at most {@link inListMax}), with `?` placeholders; `type` is the column's (PostgreSQL's array type). */
  inList(column: string, values: readonly string[] | readonly number[], type?: 'text' | 'bigint'): { readonly sql: string; readonly values: readonly unknown[] };
  /** A top-level field of a JSON text column, the field's name bound to the next `?`. */
  jsonField(column: string): string;
  /** Row lock for a read-then-update inside a transaction (SQLite holds the file's write lock already). */
  readonly forUpdate: string;
  /**
   * The tenant column of `records` in a look-up by primary key: SQLite's `+tenant` keeps the
   * planner on the id index (with a long IN list it would otherwise scan the tenant index).
   */
  readonly recordsTenantByKey: string;
}

/** `?` placeholders (outside quotes) to `$1`, `$2`, … */
export function toDollar(sql: string): string {
  let n = 0;
  let out = '';
  let quote: string | null = null;
  for (const ch of sql) {
    if (quote !== null) {
      if (ch === quote) quote = null;
      out += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      out += ch;
    } else if (ch === '?') out += `$${++n}`;
    else out += ch;
  }
  return out;
}

/**
 * SQLite: `?` as is; an IN list of placeholders for the next power of two, padded by repeating
 * the last value (a duplicate in an IN list changes nothing), so that only a handful of
 * statements per query are ever prepared and cached.
 */
export const sqliteDialect: Dialect = {
  name: 'sqlite',
  sql: (text) => text,
  inListMax: 500,
  inList(column, values) {
    let n = 1;
    while (n < values.length) n *= 2;
    const padded: unknown[] = [...values];
    const last = values[values.length - 1];
    while (padded.length < n) padded.push(last);
    return { sql: `${column} IN (?${',?'.repeat(n - 1)})`, values: padded };
  },
  jsonField: (column) => `json_extract(${column}, '$.' || ?)`,
  forUpdate: '',
  recordsTenantByKey: '+tenant',
};

const DOLLAR = new Map<string, string>();

/** PostgreSQL: `$n` placeholders; an IN list is one text array (`= ANY`). */
export const postgresDialect: Dialect = {
  name: 'postgres',
  sql(text) {
    let out = DOLLAR.get(text);
    if (out === undefined) {
      if (DOLLAR.size >= 4096) DOLLAR.clear();
      DOLLAR.set(text, (out = toDollar(text)));
    }
    return out;
  },
  inListMax: Number.POSITIVE_INFINITY,
  inList: (column, values, type = 'text') => ({ sql: `${column} = ANY(?::${type}[])`, values: [[...values]] }),
  jsonField: (column) => `(${column}::json ->> ?)`,
  forUpdate: ' FOR UPDATE',
  recordsTenantByKey: 'tenant',
};

/** `values` in consecutive slices of at most `size` (one slice when it is infinite). */
export function chunks<T>(values: readonly T[], size: number): T[][] {
  if (values.length <= size) return [[...values]];
  const out: T[][] = [];
  for (let i = 0; i < values.length; i += size) out.push(values.slice(i, i + size));
  return out;
}
