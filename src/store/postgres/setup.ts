/**
 * Setting up a PostgreSQL store: the schema version check, the migration (under an advisory
 * lock, so concurrent processes do not race) and what the server offers ({@link PostgresCapabilities}).
 *
 * May import: core/errors, ../rows.js, ../tables.js, ./schema.js, ./errors.js.
 */
import type pg from 'pg';
import { MemauthError } from '../../core/errors.js';
import { type Row, str } from '../rows.js';
import { TABLE_NAMES } from '../tables.js';
import { type PostgresTarget, where } from './errors.js';
import { MIGRATIONS, VERSION_TABLE } from './schema.js';

/** What the driver needs of a pool or a checked-out client. */
export interface Queryable {
  query(config: pg.QueryConfig): Promise<pg.QueryResult>;
}

/** What the connected server offers memauth. */
export interface PostgresCapabilities {
  /** PostgreSQL server version, e.g. `15.18`. */
  readonly serverVersion: string;
  /** Full-text search: a generated `tsvector` column with a GIN index, 'simple' configuration. */
  readonly fullTextSearch: 'tsvector';
  /**
   * pgvector: whether the `vector` extension can be created on this server, and whether it is.
   * Without it semantic search runs as an exact scan over real[] (the driver's `vectorNote`).
   */
  readonly vector: { readonly available: boolean; readonly installed: boolean; readonly version: string | null; readonly message: string };
}

/** First key of the two-int advisory lock memauth takes while migrating ('mema'); two-int keys do not overlap one-bigint keys. */
const MIGRATION_LOCK = 0x6d656d61;

async function currentVersion(c: Queryable): Promise<number | null> {
  const exists = await c.query({ text: 'SELECT to_regclass($1) IS NOT NULL AS x', values: [VERSION_TABLE] });
  if (exists.rows[0]?.x !== true) return null;
  const r = await c.query({ text: `SELECT coalesce(max(version), 0) AS v FROM ${VERSION_TABLE}` });
  return Number(r.rows[0]?.v ?? 0);
}

async function foreignTables(c: Queryable): Promise<string[]> {
  const r = await c.query({ text: 'SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = ANY($1::text[]) ORDER BY 1', values: [TABLE_NAMES] });
  return r.rows.map((x: Row) => str(x.table_name));
}

export async function checkVersion(c: Queryable, target: PostgresTarget): Promise<number> {
  const v = await currentVersion(c);
  const label = `${where(target)}${target.schema !== null ? `, schema ${target.schema}` : ''}`;
  if (v === null) {
    const foreign = await foreignTables(c);
    if (foreign.length > 0)
      throw new MemauthError('DATABASE_CORRUPT', `${label} has tables of another application (${foreign.join(', ')}) and no memauth version table; point memauth at an empty database or schema`, {
        tables: foreign,
      });
    return 0;
  }
  if (v > MIGRATIONS.length) throw new MemauthError('DATABASE_CORRUPT', `${label} has memauth schema version ${v}, newer than this memauth (${MIGRATIONS.length}); upgrade memauth`, { version: v });
  return v;
}

/** Create or upgrade the schema in one transaction, under a migration advisory lock. */
export async function migrate(pool: pg.Pool, target: PostgresTarget): Promise<void> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    await client.query({ text: 'SELECT pg_advisory_xact_lock($1::int, hashtext($2))', values: [MIGRATION_LOCK, target.schema ?? ''] });
    if (target.schema !== null) await client.query(`CREATE SCHEMA IF NOT EXISTS ${target.schema}`);
    const version = await checkVersion(client, target);
    if (version < MIGRATIONS.length) {
      if (version === 0) await client.query(`CREATE TABLE IF NOT EXISTS ${VERSION_TABLE} (version integer PRIMARY KEY, applied_at text NOT NULL, by text NOT NULL)`);
      for (let v = version; v < MIGRATIONS.length; v++) {
        await client.query(MIGRATIONS[v] as string);
        await client.query({ text: `INSERT INTO ${VERSION_TABLE} (version, applied_at, by) VALUES ($1, $2, 'memauth')`, values: [v + 1, new Date().toISOString()] });
      }
    }
    await client.query('COMMIT');
  } catch (e) {
    try {
      await client.query('ROLLBACK');
    } catch (re) {
      broken = re instanceof Error ? re : new Error(String(re));
    }
    throw e;
  } finally {
    client.release(broken);
  }
}

export async function detect(pool: pg.Pool): Promise<PostgresCapabilities> {
  const v = await pool.query({ text: "SELECT current_setting('server_version') AS v" });
  const ext = await pool.query({ text: "SELECT default_version, installed_version FROM pg_available_extensions WHERE name = 'vector'" });
  const row = ext.rows[0] as Row | undefined;
  const available = row !== undefined;
  const installed = available && row.installed_version !== null;
  const version = available ? str(row.installed_version ?? row.default_version) : null;
  const message = !available
    ? 'pgvector (the "vector" extension) is not available on this PostgreSQL server: semantic search uses an exact scan in SQL (install pgvector, docs/embeddings.md).'
    : `pgvector ${version} is ${installed ? 'installed' : 'available (not installed)'}.`;
  return { serverVersion: str((v.rows[0] as Row).v), fullTextSearch: 'tsvector', vector: { available, installed, version, message } };
}
