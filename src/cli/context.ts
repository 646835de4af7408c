/**
 * What a CLI command handler works with: the global options as a {@link Ctx} (store, tenant,
 * --json, output helpers), opening and closing the store, reading content, and the commander
 * option parsers the command tables use.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import type { Memory } from '../api/memory.js';
import { checkpointKeyFromFile, openMemory } from '../api/open.js';
import { emptyTenantHint } from '../api/surfaces.js';
import { MemauthError } from '../core/errors.js';
import { type EmbedderSettings, embedderOf } from './embedder-config.js';

/** The global options every command sees (`--db`, `--database`, `--policy`, `--tenant`, `--json`). */
export interface GlobalOptions {
  readonly db: string;
  readonly database?: string;
  readonly policy?: string;
  readonly tenant?: string;
  readonly json?: boolean;
  readonly embedder?: string;
  readonly embeddingsUrl?: string;
  readonly embeddingsModel?: string;
  readonly embeddingsDimensions?: string;
}

/** Which store a command opens: an SQLite file, or a PostgreSQL database. */
export type StoreTarget = { readonly kind: 'sqlite'; readonly path: string } | { readonly kind: 'postgres'; readonly url: string };

/**
 * Parse a store location: `postgres://…` / `postgresql://…`, `sqlite:FILE` (or `sqlite://FILE`),
 * or a plain file path.
 * @throws MemauthError `INVALID_ARGUMENT` for another URL scheme.
 */
export function parseStoreTarget(value: string): StoreTarget {
  if (/^postgres(ql)?:\/\//i.test(value)) return { kind: 'postgres', url: value };
  if (/^sqlite:/i.test(value)) {
    const path = value.replace(/^sqlite:(\/\/)?/i, '');
    if (path === '') throw new MemauthError('INVALID_ARGUMENT', 'sqlite: needs a file path, e.g. sqlite:./memauth.db', { field: 'database' });
    return { kind: 'sqlite', path };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value))
    throw new MemauthError('INVALID_ARGUMENT', `unsupported database URL ${JSON.stringify(value.replace(/\/\/[^@/]*@/, '//…@'))}: use postgres://… or sqlite:FILE`, { field: 'database' });
  return { kind: 'sqlite', path: value };
}

/** A store location for messages: a PostgreSQL URL without its password. */
export function displayTarget(t: StoreTarget): string {
  if (t.kind === 'sqlite') return t.path;
  try {
    const u = new URL(t.url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://…';
  }
}

/** What a command handler gets: the global options and output helpers. */
export interface Ctx {
  /** the store this command opens (see {@link ctxOf} for the precedence of flags and variables). */
  readonly store: StoreTarget;
  /** the SQLite path, or the PostgreSQL URL shown without its password. */
  readonly db: string;
  readonly policy: string | undefined;
  readonly tenant: string | undefined;
  readonly json: boolean;
  /** the embedder settings of the global flags and their variables (src/cli/embedder-config.ts). */
  readonly embeddings: EmbedderSettings;
  /** write to stdout (a newline is added). */
  out(text: string): void;
  /** write to stderr (a newline is added). */
  err(text: string): void;
  /** print `value` as one line of JSON with `--json`, else `human()` — lazily, so it is only rendered when needed. */
  emit(value: unknown, human: () => string): void;
}

/**
 * The store a command names through a flag or a variable, or undefined when none does (the caller's
 * default applies: `./memauth.db` for the CLI, the config file's `db` for `serve`). The one
 * resolution of `--database`/`--db`/$MEMAUTH_DB/$DATABASE_URL for every command.
 *
 * Precedence: `--database URL`, else `--db PATH`, else $MEMAUTH_DB, else $DATABASE_URL (flags before
 * variables; memauth's own variable before the generic one).
 * @throws MemauthError `INVALID_ARGUMENT` for an unsupported URL scheme.
 */
export function namedStore(cmd: Command): StoreTarget | undefined {
  const g = cmd.optsWithGlobals<GlobalOptions>();
  const src = (name: string): string | undefined => cmd.getOptionValueSourceWithGlobals(name);
  const database = g.database !== undefined && g.database !== '' ? g.database : undefined;
  const db = g.db !== undefined && g.db !== '' && (src('db') === 'cli' || src('db') === 'env') ? g.db : undefined;
  if (database !== undefined && src('database') === 'cli') return parseStoreTarget(database);
  if (db !== undefined) return parseStoreTarget(db);
  if (database !== undefined) return parseStoreTarget(database);
  return undefined;
}

/**
 * Build the {@link Ctx} of a command from its (and its parents') parsed options.
 *
 * The store: {@link namedStore}, else `./memauth.db`.
 */
export function ctxOf(cmd: Command): Ctx {
  const g = cmd.optsWithGlobals<GlobalOptions>();
  const json = g.json === true;
  const out = (text: string): void => {
    process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  };
  const store = namedStore(cmd) ?? parseStoreTarget('./memauth.db');
  return {
    store,
    db: store.kind === 'sqlite' ? store.path : displayTarget(store),
    policy: g.policy !== undefined && g.policy !== '' ? g.policy : undefined,
    tenant: g.tenant !== undefined && g.tenant !== '' ? g.tenant : undefined,
    json,
    embeddings: { embedder: g.embedder, embeddingsUrl: g.embeddingsUrl, embeddingsModel: g.embeddingsModel, embeddingsDimensions: g.embeddingsDimensions },
    out,
    err: (text) => {
      process.stderr.write(text.endsWith('\n') ? text : `${text}\n`);
    },
    emit: (value, human) => out(json ? JSON.stringify(value) : human()),
  };
}

/**
 * The tenant of a data command. Fails closed (`TENANT_REQUIRED`, exit 2) before the database is
 * touched when neither `--tenant` nor `MEMAUTH_TENANT` names one.
 */
export function requireTenant(ctx: Ctx): string {
  if (ctx.tenant === undefined) {
    throw new MemauthError('TENANT_REQUIRED', 'a tenant is required: pass --tenant T or set MEMAUTH_TENANT (every read and write names its tenant)', { field: 'tenant' });
  }
  return ctx.tenant;
}

/**
 * Open the store, run `fn`, and always close it (which writes the signed checkpoint), also on error.
 *
 * @param create - allow creating a new database file (only `init` does); otherwise a missing file
 *   is `INVALID_ARGUMENT` so a typo in `--db` does not silently start an empty store.
 */
export async function withMemory<T>(ctx: Ctx, fn: (mem: Memory) => Promise<T>, create = false): Promise<T> {
  const mem = await openCliMemory(ctx, create);
  let result: T;
  try {
    result = await fn(mem);
  } catch (e) {
    try {
      await mem.close();
    } catch {
      // the command's own error is the one to report
    }
    throw e;
  }
  await mem.close();
  return result;
}

/**
 * {@link withMemory} for a listing of one tenant: when the list is empty and the tenant holds
 * nothing at all (a misspelt `--tenant`?), a `hint:` line on stderr says so (stdout keeps its shape).
 */
export async function withListing<T>(ctx: Ctx, tenant: string, fn: (mem: Memory) => Promise<readonly T[]>): Promise<readonly T[]> {
  return withMemory(ctx, async (mem) => {
    const out = await fn(mem);
    const hint = out.length === 0 ? await emptyTenantHint(mem, tenant) : undefined;
    if (hint !== undefined) ctx.err(`hint: ${hint}`);
    return out;
  });
}

/**
 * PostgreSQL options of the CLI: the checkpoint key file ($MEMAUTH_CHECKPOINT_KEY, created with
 * mode 0600 if missing) and the file keeping copies of the checkpoints ($MEMAUTH_CHECKPOINTS).
 * Without a key no checkpoint is signed (verification still checks the chains and any
 * checkpoint already stored); every server of one database must use the same key file.
 */
function pgCheckpointOptions(): { checkpointKey: string | false; checkpointFile?: string } {
  const out: { checkpointKey: string | false; checkpointFile?: string } = { checkpointKey: false };
  const keyFile = process.env.MEMAUTH_CHECKPOINT_KEY;
  if (keyFile !== undefined && keyFile !== '') out.checkpointKey = checkpointKeyFromFile(keyFile);
  const cpFile = process.env.MEMAUTH_CHECKPOINTS;
  if (cpFile !== undefined && cpFile !== '') out.checkpointFile = cpFile;
  return out;
}

/**
 * Open the command's store: an SQLite file (only `init` may create one) or a PostgreSQL database
 * (only `init` may initialise an empty one; `pg` is loaded only then).
 * @param groupCommit - SQLite: share COMMITs between concurrent operations (the stdio MCP server).
 * @throws MemauthError `INVALID_ARGUMENT` (missing file / empty database outside `init`), `DATABASE_*`.
 */
export async function openCliMemory(ctx: Ctx, create = false, notice?: (line: string) => void, groupCommit = false): Promise<Memory> {
  if (ctx.store.kind === 'postgres') {
    const { PostgresDriver } = await import('../store/postgres/driver.js');
    const driver = await PostgresDriver.connect(ctx.store.url, { create, applicationName: 'memauth-cli', ...(notice ? { onNotice: notice } : {}) });
    try {
      return await openMemory({ driver, embedder: embedderOf(ctx.embeddings), ...(ctx.policy !== undefined ? { policy: ctx.policy } : {}), ...pgCheckpointOptions() });
    } catch (e) {
      await driver.close();
      throw e;
    }
  }
  if (ctx.db !== ':memory:') {
    if (!existsSync(ctx.db)) {
      if (!create) throw new MemauthError('INVALID_ARGUMENT', `database ${ctx.db} does not exist; create it with: memauth init --db ${ctx.db}`, { field: 'db', path: ctx.db });
      const dir = dirname(resolve(ctx.db));
      if (!existsSync(dir) || !statSync(dir).isDirectory())
        throw new MemauthError('INVALID_ARGUMENT', `cannot create database ${ctx.db}: directory ${dir} does not exist`, { field: 'db', path: ctx.db });
    } else if (statSync(ctx.db).isDirectory()) {
      throw new MemauthError('INVALID_ARGUMENT', `--db ${ctx.db} is a directory, not a database file`, { field: 'db', path: ctx.db });
    }
  }
  const keyFile = process.env.MEMAUTH_CHECKPOINT_KEY;
  const embedder = embedderOf(ctx.embeddings);
  return openMemory({
    path: ctx.db,
    groupCommit,
    embedder,
    ...(ctx.policy !== undefined ? { policy: ctx.policy } : {}),
    ...(keyFile !== undefined && keyFile !== '' ? { checkpointKeyFile: keyFile } : {}),
  });
}

/**
 * The text of a write/derive: `--content`, else `--file`, else piped stdin.
 * @throws `INVALID_ARGUMENT` when both flags are given, the file cannot be read, or nothing is given on a terminal.
 */
export async function readContent(opts: { content?: string; file?: string }): Promise<string> {
  if (opts.content !== undefined && opts.file !== undefined) throw new MemauthError('INVALID_ARGUMENT', 'give either --content or --file, not both', { field: 'content' });
  if (opts.content !== undefined) return opts.content;
  if (opts.file !== undefined) {
    try {
      return readFileSync(opts.file, 'utf8');
    } catch (e) {
      throw new MemauthError('INVALID_ARGUMENT', `cannot read --file ${opts.file}: ${(e as Error).message}`, { field: 'file', path: opts.file });
    }
  }
  if (process.stdin.isTTY) throw new MemauthError('INVALID_ARGUMENT', 'no content: give --content TEXT, --file F, or pipe the text on stdin', { field: 'content' });
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') throw new MemauthError('INVALID_ARGUMENT', 'no content: stdin was empty (give --content TEXT, --file F, or pipe the text on stdin)', { field: 'content' });
  return text;
}

// ------------------------------------------------------------------ option parsers (commander)

/** Commander parser for a positive integer option. */
export function positiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError('must be a positive integer');
  return Number(value);
}

/** Commander parser for a JSON object option (`--args`). */
export function jsonObject(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (e) {
    throw new InvalidArgumentError(`not valid JSON (${(e as Error).message})`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new InvalidArgumentError('must be a JSON object, e.g. \'{"to":"ACCT-1","amount":"10.00"}\'');
  return parsed as Record<string, unknown>;
}

/** Commander parser for a list option: accumulates over repeated flags and variadic values, and splits commas (`--x a b`, `--x a --x b`, `--x a,b`). */
export function commaList(value: string, previous: string[] | undefined): string[] {
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  return [...(previous ?? []), ...items];
}

/** Shared by every command of one CLI run: the exit code the command chose (set by src/cli/spec.ts). */
export interface RunState {
  exitCode: number;
}
