/**
 * The server's configuration: defaults, the config file schema, environment variables, and their
 * resolution (flags > environment > file > defaults).
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { MemauthError } from '../core/errors.js';

/** The server's configuration, resolved from flags > environment > config file > defaults. */
export interface ServerConfig {
  /**
   * The config file's `embeddings` (an OpenAI-compatible endpoint: `url`, `model`, `dimensions`,
   * key from $MEMAUTH_EMBEDDINGS_KEY; or `test: true`), if any; the CLI's flags and variables win
   * field by field (src/cli/embedder-config.ts).
   */
  readonly embeddings?: z.output<typeof EmbeddingsFileSchema>;
  /** interface to listen on (default 127.0.0.1: localhost only). */
  readonly host: string;
  /** TCP port (default 8787; 0 picks a free one). */
  readonly port: number;
  /** SQLite file (default ./memauth.db). */
  readonly db: string;
  /** policy JSON file (default: the built-in policy). */
  readonly policy: string | undefined;
  /** SQLite: the checkpoint key file (default `<db>.key`, beside the database: keep it outside the data directory). */
  readonly checkpointKeyFile: string | undefined;
  /** largest accepted request body, in bytes (default 2 MiB); larger is 413 BODY_TOO_LARGE. */
  readonly bodyLimit: number;
  /** longest accepted memory content, in characters (default 1 000 000); longer is 413 CONTENT_TOO_LONG. */
  readonly maxContentChars: number;
  /** pino level: fatal, error, warn, info, debug, trace, silent (default info). */
  readonly logLevel: string;
  /** check every JSON response against its schema (default true). */
  readonly validateResponses: boolean;
  /** on SIGTERM/SIGINT, how long in-flight requests may take before connections are cut (default 10 000 ms). */
  readonly shutdownTimeoutMs: number;
  /** open MCP-over-HTTP sessions at most, all tenants together: a last resort far above the per-tenant limit (default 1000). */
  readonly mcpMaxSessions: number;
  /** open MCP-over-HTTP sessions of one tenant at most (default 64). */
  readonly mcpMaxSessionsPerTenant: number;
  /** open MCP-over-HTTP sessions of one principal at most (default 16). */
  readonly mcpMaxSessionsPerPrincipal: number;
  /** expensive requests (metrics, metrics series, decision replay, audit verification) one tenant may run at once (default 2); one more is 429 TOO_MANY_REQUESTS. */
  readonly maxExpensivePerTenant: number;
  /** an MCP-over-HTTP session idle this long is closed (default 30 min). */
  readonly mcpIdleTimeoutMs: number;
  /** decisions one external principal may request per minute, over HTTP and MCP together (default 30); one more is 429 RATE_LIMITED. */
  readonly externalDecisionsPerMinute: number;
  /** UTF-8 bytes of content one external principal may store in one record (default 64 KiB); more is 413 CONTENT_TOO_LONG. */
  readonly externalMaxContentBytes: number;
  /** records (writes and derivations) one external principal may store per minute, over HTTP and MCP together (default 60); one more is 429 RATE_LIMITED. */
  readonly externalWritesPerMinute: number;
  /** UTF-8 bytes of content one external principal may store per minute, over HTTP and MCP together (default 1 MiB); more is 429 RATE_LIMITED. */
  readonly externalWriteBytesPerMinute: number;
  /** records one external principal may mark read in its sessions per minute, over HTTP and MCP together (default 60; external principals are refused every read today); more is 429 RATE_LIMITED. */
  readonly externalReadsPerMinute: number;
  /** decisions one tool principal (a channel carrying others' text) may request per minute, over HTTP and MCP together (default 600); one more is 429 RATE_LIMITED. */
  readonly toolDecisionsPerMinute: number;
  /** UTF-8 bytes of content one tool principal may store in one record (default 1 MiB); more is 413 CONTENT_TOO_LONG. */
  readonly toolMaxContentBytes: number;
  /** records one tool principal may store per minute, over HTTP and MCP together (default 600); one more is 429 RATE_LIMITED. */
  readonly toolWritesPerMinute: number;
  /** UTF-8 bytes of content one tool principal may store per minute, over HTTP and MCP together (default 16 MiB); more is 429 RATE_LIMITED. */
  readonly toolWriteBytesPerMinute: number;
  /** records one tool principal may mark read in its sessions per minute (rows of their read logs; each read at least one), over HTTP and MCP together (default 3000: a read-log row holds the session's taint summary, at most about 4 KB); more is 429 RATE_LIMITED. */
  readonly toolReadsPerMinute: number;
  /** versions one record's chain may hold, every writer together (default 100); one more is 409 VERSION_CHAIN_FULL. */
  readonly maxVersionsPerChain: number;
}

export const DEFAULT_CONFIG: ServerConfig = Object.freeze({
  host: '127.0.0.1',
  port: 8787,
  db: './memauth.db',
  policy: undefined,
  checkpointKeyFile: undefined,
  bodyLimit: 2 * 1024 * 1024,
  maxContentChars: 1_000_000,
  logLevel: 'info',
  validateResponses: true,
  shutdownTimeoutMs: 10_000,
  mcpMaxSessions: 1000,
  mcpMaxSessionsPerTenant: 64,
  mcpMaxSessionsPerPrincipal: 16,
  maxExpensivePerTenant: 2,
  mcpIdleTimeoutMs: 30 * 60 * 1000,
  externalDecisionsPerMinute: 30,
  externalMaxContentBytes: 64 * 1024,
  externalWritesPerMinute: 60,
  externalWriteBytesPerMinute: 1024 * 1024,
  externalReadsPerMinute: 60,
  toolDecisionsPerMinute: 600,
  toolMaxContentBytes: 1024 * 1024,
  toolWritesPerMinute: 600,
  toolWriteBytesPerMinute: 16 * 1024 * 1024,
  toolReadsPerMinute: 3000,
  maxVersionsPerChain: 100,
});

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const UNITS: ReadonlyMap<string, number> = new Map([
  ['b', 1],
  ...['k', 'kb', 'kib'].map((u) => [u, 1024] as const),
  ...['m', 'mb', 'mib'].map((u) => [u, 1024 ** 2] as const),
  ...['g', 'gb', 'gib'].map((u) => [u, 1024 ** 3] as const),
]);

/**
 * A size in bytes: a number, or a string of digits (a fraction allowed) and an optional unit —
 * `b`, `k`/`kb`/`kib`, `m`/`mb`/`mib`, `g`/`gb`/`gib`, any case, 1 kb = 1024 bytes: `123`,
 * `512kb`, `1.5MiB`, `10gb` (rounded down to whole bytes). NaN for anything else.
 */
export function bytes(v: string | number): number {
  if (typeof v === 'number') return v;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(v);
  const mult = m ? UNITS.get((m[2] || 'b').toLowerCase()) : undefined;
  return m && mult !== undefined ? Math.floor(Number(m[1]) * mult) : Number.NaN;
}

/** `n` bytes in the largest unit that divides it: `100mb`, `1024` → `1kb`. */
const sizeText = (n: number): string => {
  const [unit, size] = (['gb', 'mb', 'kb'] as const).map((u) => [u, UNITS.get(u) as number] as const).find(([, m]) => n % m === 0) ?? ['', 1];
  return `${n / size}${unit || (n === 1 ? ' byte' : ' bytes')}`;
};

const SIZE_HELP = 'not a size: give a number of bytes, or one with a unit b, kb, mb or gb (1 kb = 1024 bytes), e.g. 512kb, 10mb, 1gb';

/** A size in bytes, as a number or a string such as `64KiB` (see {@link bytes}), from `min` to `max`. */
const byteSize = (max: number, min = 1) =>
  z
    .union([z.number(), z.string().refine((v) => !Number.isNaN(bytes(v)), SIZE_HELP)])
    .transform(bytes)
    .pipe(
      z
        .number()
        .int()
        .min(min, `at least ${sizeText(min)}`)
        .max(max, `at most ${sizeText(max)}`),
    );

const fields = {
  host: z.string().min(1).max(255),
  port: z.coerce.number().int().min(0).max(65535),
  db: z.string().min(1),
  policy: z.string().min(1),
  checkpointKeyFile: z.string().min(1),
  bodyLimit: byteSize(1024 * 1024 * 1024, 1024),
  maxContentChars: z.coerce.number().int().min(1).max(1_000_000),
  logLevel: z.enum(LEVELS),
  validateResponses: z.union([z.boolean(), z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1')]),
  shutdownTimeoutMs: z.coerce.number().int().min(0).max(600_000),
  mcpMaxSessions: z.coerce.number().int().min(1).max(100_000),
  mcpMaxSessionsPerTenant: z.coerce.number().int().min(1).max(100_000),
  mcpMaxSessionsPerPrincipal: z.coerce.number().int().min(1).max(100_000),
  maxExpensivePerTenant: z.coerce.number().int().min(1).max(1000),
  mcpIdleTimeoutMs: z.coerce.number().int().min(1000),
  externalDecisionsPerMinute: z.coerce.number().int().min(1).max(1_000_000),
  externalMaxContentBytes: byteSize(100 * 1024 * 1024),
  externalWritesPerMinute: z.coerce.number().int().min(1).max(1_000_000),
  externalWriteBytesPerMinute: byteSize(100 * 1024 * 1024 * 1024),
  externalReadsPerMinute: z.coerce.number().int().min(1).max(100_000_000),
  toolDecisionsPerMinute: z.coerce.number().int().min(1).max(1_000_000),
  toolMaxContentBytes: byteSize(100 * 1024 * 1024),
  toolWritesPerMinute: z.coerce.number().int().min(1).max(1_000_000),
  toolWriteBytesPerMinute: byteSize(100 * 1024 * 1024 * 1024),
  toolReadsPerMinute: z.coerce.number().int().min(1).max(100_000_000),
  maxVersionsPerChain: z.coerce.number().int().min(2).max(100_000),
};

/** The config file's `embeddings` object (docs/embeddings.md). */
export const EmbeddingsFileSchema = z.strictObject({
  url: z.string().min(1).max(2000).optional(),
  model: z.string().min(1).max(120).optional(),
  dimensions: z.number().int().min(1).max(16_000).optional(),
  test: z.boolean().optional(),
});

/** The config file (`--config FILE` or `MEMAUTH_CONFIG`): JSON, every field optional, unknown fields refused. */
export const ConfigFileSchema = z.strictObject({
  embeddings: EmbeddingsFileSchema.optional(),
  host: fields.host.optional(),
  port: fields.port.optional(),
  db: fields.db.optional(),
  policy: fields.policy.optional(),
  checkpointKeyFile: fields.checkpointKeyFile.optional(),
  bodyLimit: fields.bodyLimit.optional(),
  maxContentChars: fields.maxContentChars.optional(),
  logLevel: fields.logLevel.optional(),
  validateResponses: fields.validateResponses.optional(),
  shutdownTimeoutMs: fields.shutdownTimeoutMs.optional(),
  mcpMaxSessions: fields.mcpMaxSessions.optional(),
  mcpMaxSessionsPerTenant: fields.mcpMaxSessionsPerTenant.optional(),
  mcpMaxSessionsPerPrincipal: fields.mcpMaxSessionsPerPrincipal.optional(),
  maxExpensivePerTenant: fields.maxExpensivePerTenant.optional(),
  mcpIdleTimeoutMs: fields.mcpIdleTimeoutMs.optional(),
  externalDecisionsPerMinute: fields.externalDecisionsPerMinute.optional(),
  externalMaxContentBytes: fields.externalMaxContentBytes.optional(),
  externalWritesPerMinute: fields.externalWritesPerMinute.optional(),
  externalWriteBytesPerMinute: fields.externalWriteBytesPerMinute.optional(),
  externalReadsPerMinute: fields.externalReadsPerMinute.optional(),
  toolDecisionsPerMinute: fields.toolDecisionsPerMinute.optional(),
  toolMaxContentBytes: fields.toolMaxContentBytes.optional(),
  toolWritesPerMinute: fields.toolWritesPerMinute.optional(),
  toolWriteBytesPerMinute: fields.toolWriteBytesPerMinute.optional(),
  toolReadsPerMinute: fields.toolReadsPerMinute.optional(),
  maxVersionsPerChain: fields.maxVersionsPerChain.optional(),
});

/** Environment variable of each setting (an empty variable counts as unset). */
export const ENV_VARS: Readonly<Partial<Record<keyof ServerConfig, string>>> = Object.freeze({
  host: 'MEMAUTH_HOST',
  port: 'MEMAUTH_PORT',
  db: 'MEMAUTH_DB',
  policy: 'MEMAUTH_POLICY',
  checkpointKeyFile: 'MEMAUTH_CHECKPOINT_KEY',
  bodyLimit: 'MEMAUTH_BODY_LIMIT',
  maxContentChars: 'MEMAUTH_MAX_CONTENT',
  logLevel: 'MEMAUTH_LOG_LEVEL',
  mcpMaxSessions: 'MEMAUTH_MCP_MAX_SESSIONS',
  mcpMaxSessionsPerTenant: 'MEMAUTH_MCP_MAX_SESSIONS_PER_TENANT',
  mcpMaxSessionsPerPrincipal: 'MEMAUTH_MCP_MAX_SESSIONS_PER_PRINCIPAL',
  maxExpensivePerTenant: 'MEMAUTH_MAX_EXPENSIVE_PER_TENANT',
  externalDecisionsPerMinute: 'MEMAUTH_EXTERNAL_DECISIONS_PER_MINUTE',
  externalMaxContentBytes: 'MEMAUTH_EXTERNAL_MAX_CONTENT',
  externalWritesPerMinute: 'MEMAUTH_EXTERNAL_WRITES_PER_MINUTE',
  externalWriteBytesPerMinute: 'MEMAUTH_EXTERNAL_WRITE_BYTES_PER_MINUTE',
  externalReadsPerMinute: 'MEMAUTH_EXTERNAL_READS_PER_MINUTE',
  toolDecisionsPerMinute: 'MEMAUTH_TOOL_DECISIONS_PER_MINUTE',
  toolMaxContentBytes: 'MEMAUTH_TOOL_MAX_CONTENT',
  toolWritesPerMinute: 'MEMAUTH_TOOL_WRITES_PER_MINUTE',
  toolWriteBytesPerMinute: 'MEMAUTH_TOOL_WRITE_BYTES_PER_MINUTE',
  toolReadsPerMinute: 'MEMAUTH_TOOL_READS_PER_MINUTE',
  maxVersionsPerChain: 'MEMAUTH_MAX_VERSIONS_PER_CHAIN',
});

type Raw = Partial<Record<keyof ServerConfig, unknown>>;

function parseField<K extends keyof typeof fields>(key: K, value: unknown, where: string): z.output<(typeof fields)[K]> {
  const r = fields[key].safeParse(value);
  if (!r.success) {
    throw new MemauthError('INVALID_ARGUMENT', `${where}: invalid ${key} ${JSON.stringify(value)}: ${r.error.issues[0]?.message ?? 'invalid'}`, { field: key, source: where });
  }
  return r.data as z.output<(typeof fields)[K]>;
}

/**
 * Resolve the server configuration: each setting from the first of `flags` (explicit command-line
 * values only), the environment ({@link ENV_VARS}), the config file (relative `db`/`policy` paths
 * are taken relative to the file), the defaults ({@link DEFAULT_CONFIG}).
 *
 * @param input.configFile - path of a JSON config file (`--config`, else `MEMAUTH_CONFIG`).
 * @throws MemauthError `INVALID_ARGUMENT` naming the setting and where it came from.
 */
export function resolveConfig(input: { flags?: Raw; env?: NodeJS.ProcessEnv; configFile?: string | undefined } = {}): ServerConfig {
  const env = input.env ?? {};
  const envVal = (name: string | undefined): string | undefined => {
    if (name === undefined) return undefined;
    const v = env[name];
    return v === undefined || v === '' ? undefined : v;
  };
  const configPath = input.configFile ?? envVal('MEMAUTH_CONFIG');
  let file: z.output<typeof ConfigFileSchema> = {};
  if (configPath !== undefined) {
    let text: string;
    try {
      text = readFileSync(configPath, 'utf8');
    } catch (e) {
      throw new MemauthError('INVALID_ARGUMENT', `cannot read config file ${configPath}: ${(e as Error).message}`, { field: 'config', path: configPath });
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      throw new MemauthError('INVALID_ARGUMENT', `config file ${configPath} is not valid JSON: ${(e as Error).message}`, { field: 'config', path: configPath });
    }
    const r = ConfigFileSchema.safeParse(parsed);
    if (!r.success) {
      const issue = r.error.issues[0];
      throw new MemauthError('INVALID_ARGUMENT', `config file ${configPath}: ${issue ? issue.path.join('.') || '(root)' : '(root)'}: ${issue?.message ?? 'invalid'}`, {
        field: 'config',
        path: configPath,
      });
    }
    file = r.data;
    const base = dirname(resolve(configPath));
    if (file.db !== undefined && file.db !== ':memory:') file = { ...file, db: resolve(base, file.db) };
    if (file.policy !== undefined) file = { ...file, policy: resolve(base, file.policy) };
    if (file.checkpointKeyFile !== undefined) file = { ...file, checkpointKeyFile: resolve(base, file.checkpointKeyFile) };
  }
  const flags = input.flags ?? {};
  const pick = <K extends keyof typeof fields>(key: K): z.output<(typeof fields)[K]> | undefined => {
    if (flags[key] !== undefined) return parseField(key, flags[key], `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
    const ev = envVal(ENV_VARS[key]);
    if (ev !== undefined) return parseField(key, ev, `$${ENV_VARS[key]}`);
    return (file as Record<string, unknown>)[key] as z.output<(typeof fields)[K]> | undefined;
  };
  const d = DEFAULT_CONFIG;
  return Object.freeze({
    host: pick('host') ?? d.host,
    port: pick('port') ?? d.port,
    db: pick('db') ?? d.db,
    policy: pick('policy') ?? d.policy,
    checkpointKeyFile: pick('checkpointKeyFile') ?? d.checkpointKeyFile,
    bodyLimit: pick('bodyLimit') ?? d.bodyLimit,
    maxContentChars: pick('maxContentChars') ?? d.maxContentChars,
    logLevel: pick('logLevel') ?? d.logLevel,
    validateResponses: pick('validateResponses') ?? d.validateResponses,
    shutdownTimeoutMs: pick('shutdownTimeoutMs') ?? d.shutdownTimeoutMs,
    mcpMaxSessions: pick('mcpMaxSessions') ?? d.mcpMaxSessions,
    mcpMaxSessionsPerTenant: pick('mcpMaxSessionsPerTenant') ?? d.mcpMaxSessionsPerTenant,
    mcpMaxSessionsPerPrincipal: pick('mcpMaxSessionsPerPrincipal') ?? d.mcpMaxSessionsPerPrincipal,
    maxExpensivePerTenant: pick('maxExpensivePerTenant') ?? d.maxExpensivePerTenant,
    mcpIdleTimeoutMs: pick('mcpIdleTimeoutMs') ?? d.mcpIdleTimeoutMs,
    externalDecisionsPerMinute: pick('externalDecisionsPerMinute') ?? d.externalDecisionsPerMinute,
    externalMaxContentBytes: pick('externalMaxContentBytes') ?? d.externalMaxContentBytes,
    externalWritesPerMinute: pick('externalWritesPerMinute') ?? d.externalWritesPerMinute,
    externalWriteBytesPerMinute: pick('externalWriteBytesPerMinute') ?? d.externalWriteBytesPerMinute,
    externalReadsPerMinute: pick('externalReadsPerMinute') ?? d.externalReadsPerMinute,
    toolDecisionsPerMinute: pick('toolDecisionsPerMinute') ?? d.toolDecisionsPerMinute,
    toolMaxContentBytes: pick('toolMaxContentBytes') ?? d.toolMaxContentBytes,
    toolWritesPerMinute: pick('toolWritesPerMinute') ?? d.toolWritesPerMinute,
    toolWriteBytesPerMinute: pick('toolWriteBytesPerMinute') ?? d.toolWriteBytesPerMinute,
    toolReadsPerMinute: pick('toolReadsPerMinute') ?? d.toolReadsPerMinute,
    maxVersionsPerChain: pick('maxVersionsPerChain') ?? d.maxVersionsPerChain,
    ...(file.embeddings !== undefined ? { embeddings: file.embeddings } : {}),
  });
}
