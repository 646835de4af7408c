/**
 * Where a PostgreSQL driver points and how its errors read: {@link PostgresTarget} (never the
 * password) and {@link mapPgError}, which turns `pg` and network errors into MemauthErrors a
 * person can act on.
 *
 * May import: core/errors.
 */
import { MemauthError } from '../../core/errors.js';

/** Where a driver points, for messages: never the password. */
export interface PostgresTarget {
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
  readonly schema: string | null;
}

export function describeTarget(url: string, schema: string | null): PostgresTarget {
  try {
    const u = new URL(url);
    const hostParam = u.searchParams.get('host');
    return {
      host: decodeURIComponent(u.hostname) || hostParam || process.env.PGHOST || 'localhost',
      port: u.port !== '' ? Number(u.port) : Number(process.env.PGPORT ?? 5432),
      database: decodeURIComponent(u.pathname.replace(/^\//, '')) || process.env.PGDATABASE || decodeURIComponent(u.username) || 'postgres',
      user: decodeURIComponent(u.username) || process.env.PGUSER || 'postgres',
      schema,
    };
  } catch {
    return { host: 'localhost', port: 5432, database: '?', user: '?', schema };
  }
}

export const where = (t: PostgresTarget): string => `PostgreSQL at ${t.host}:${t.port} (database ${JSON.stringify(t.database)}, user ${JSON.stringify(t.user)})`;

/**
 * Map an error from `pg` (or the network) to a MemauthError a person can act on.
 *
 * - connection refused / host not found / timeout / server starting or shutting down →
 *   `DATABASE_UNAVAILABLE`, naming host and port;
 * - authentication failure, missing database, missing privileges → `DATABASE_UNAVAILABLE`;
 * - a memauth trigger refusing a change → `IMMUTABLE_FIELD`;
 * - lock timeout, deadlock, serialization failure → `DATABASE_LOCKED`;
 * - a NUL character or invalid text → `INVALID_ARGUMENT`.
 * Anything else is returned unchanged.
 */
export function mapPgError(e: unknown, target: PostgresTarget): unknown {
  if (e instanceof MemauthError) return e;
  const code = String((e as { code?: unknown })?.code ?? '');
  const msg = e instanceof Error ? e.message : String(e);
  const details = { host: target.host, port: target.port, database: target.database, pgCode: code };
  if (msg.includes('memauth IMMUTABLE_FIELD')) {
    return new MemauthError('IMMUTABLE_FIELD', msg.replace(/^.*memauth IMMUTABLE_FIELD: /, ''), details, { cause: e });
  }
  if (
    ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOENT', 'EPIPE'].includes(code) ||
    /timeout expired|Connection terminated|not queryable/i.test(msg)
  ) {
    return new MemauthError('DATABASE_UNAVAILABLE', `cannot reach ${where(target)}: ${code || msg}. Is the server running and listening there? Nothing was written.`, details, { cause: e });
  }
  if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300') {
    return new MemauthError('DATABASE_UNAVAILABLE', `${where(target)} is not accepting connections (${code}: ${msg}). Nothing was written.`, details, { cause: e });
  }
  if (code === '28P01' || code === '28000') {
    return new MemauthError('DATABASE_UNAVAILABLE', `${where(target)} refused the login (${msg}); check the user and password in the URL. Nothing was written.`, details, { cause: e });
  }
  if (code === '3D000') {
    return new MemauthError('DATABASE_UNAVAILABLE', `${where(target)}: the database does not exist (${msg}); create it first, e.g. createdb ${target.database}. Nothing was written.`, details, {
      cause: e,
    });
  }
  if (code === '42501') {
    return new MemauthError(
      'DATABASE_UNAVAILABLE',
      `${where(target)}: permission denied (${msg}); the role needs CREATE on the schema to migrate it, and SELECT/INSERT/UPDATE on memauth's tables. Nothing was written.`,
      details,
      { cause: e },
    );
  }
  if (code === '55P03' || code === '40P01' || code === '40001') {
    return new MemauthError('DATABASE_LOCKED', `${where(target)}: ${msg} (${code}); retry`, details, { cause: e });
  }
  if (code === '22021' || code === '22P05' || code === '54000') {
    return new MemauthError('INVALID_ARGUMENT', `PostgreSQL cannot store this text (${msg})`, details, { cause: e });
  }
  return e;
}
