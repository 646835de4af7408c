/**
 * `memauth/postgres` — the PostgreSQL storage driver, kept off the main entry point so that
 * embedded SQLite users never load `pg`.
 *
 * @example
 * ```ts
 * import { openMemory } from 'memauth';
 * import { PostgresDriver } from 'memauth/postgres';
 * const mem = await openMemory({ driver: await PostgresDriver.connect(process.env.DATABASE_URL ?? 'postgres://localhost/memauth') });
 * ```
 */
export { PostgresDriver, mapPgError, type PostgresOptions, type PostgresCapabilities, type PostgresTarget } from './driver.js';
