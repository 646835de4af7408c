/**
 * Command table of `memauth serve` (HTTP API + MCP over HTTP), `memauth mcp` (MCP over stdio) and
 * `memauth token` (offline token management on the database file). These read the commander
 * command itself (which options came from the command line), so they are raw commands
 * (src/cli/spec.ts).
 */
import type { Command } from 'commander';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { checkpointKeyWarning } from '../../api/open.js';
import { MemauthError } from '../../core/errors.js';
import { resolveConfig, type ServerConfig } from '../../server/config.js';
import { VERSION, startServer } from '../../server/http.js';
import { createMcpServer, mcpPrincipal } from '../../server/mcp.js';
import { answerStartupError } from '../../server/mcp-startup-error.js';
import { TokenService } from '../../server/tokens.js';
import type { Memory } from '../../api/memory.js';
import { type Ctx, ctxOf, namedStore, openCliMemory } from '../context.js';
import { REPORTED, reportError } from '../errors.js';
import { embedderOf, mergeSettings, searchLine, settingsOfFile } from '../embedder-config.js';
import { type AnyCommand, group, rawCommand } from '../spec.js';

/** The explicit command-line values (not env, not defaults) of the options named in `keys`. */
function explicit(cmd: Command, keys: ReadonlyArray<keyof ServerConfig>): Partial<Record<keyof ServerConfig, unknown>> {
  const all = cmd.optsWithGlobals<Record<string, unknown>>();
  const out: Partial<Record<keyof ServerConfig, unknown>> = {};
  for (const k of keys) if (cmd.getOptionValueSourceWithGlobals(k) === 'cli' && all[k] !== undefined) out[k] = all[k];
  return out;
}

/**
 * The store of `serve`, `mcp` and `token` when `--database postgres://…` (or $DATABASE_URL, see
 * `namedStore`) selects PostgreSQL: an open memory, or undefined for an SQLite file.
 */
async function postgresMemory(ctx: Ctx, create: boolean): Promise<{ mem: Memory; where: string } | undefined> {
  if (ctx.store.kind !== 'postgres') return undefined;
  const mem = await openCliMemory(ctx, create, (line) => process.stderr.write(`memauth: ${line}\n`));
  return { mem, where: ctx.db };
}

const out = (s: string): void => {
  process.stdout.write(`${s}\n`);
};

interface ServeFlags {
  maxContent?: string;
  config?: string;
}

/**
 * `serve` → `startServer` (src/server/http.ts) on the SQLite file or PostgreSQL: the HTTP API,
 * its OpenAPI document and MCP over HTTP; SIGTERM/SIGINT finish in-flight requests, then close.
 */
async function serveCommand(cmd: Command, o: ServeFlags): Promise<void> {
  const flags = explicit(cmd, ['port', 'host', 'policy', 'bodyLimit', 'logLevel']);
  if (o.maxContent !== undefined) flags.maxContentChars = o.maxContent;
  // the store named by --database/--db/$MEMAUTH_DB/$DATABASE_URL (the one resolution every command uses) wins over the config file
  const named = namedStore(cmd);
  if (named?.kind === 'sqlite') flags.db = named.path;
  const config = resolveConfig({ flags, env: process.env, configFile: o.config });
  // handlers first: a signal that arrives while starting stops the server as soon as it is up
  let srv: Awaited<ReturnType<typeof startServer>> | null = null;
  let stopping: string | null = null;
  let signals = 0;
  let pgStore: Awaited<ReturnType<typeof postgresMemory>> = undefined;
  const shutdown = (signal: string, s: NonNullable<typeof srv>): void => {
    process.stderr.write(`memauth: ${signal}: finishing in-flight requests, then closing the database\n`);
    s.close()
      .then(async () => {
        // a memory handed to startServer is ours to close
        if (pgStore) await pgStore.mem.close();
      })
      .then(
        () => {
          process.stderr.write('memauth: stopped cleanly\n');
          process.exitCode = 0;
        },
        (e: unknown) => {
          process.stderr.write(`memauth: error while stopping: ${(e as Error).message}\n`);
          process.exitCode = 3;
        },
      );
  };
  const onSignal = (signal: string): void => {
    signals++;
    if (signals > 1) {
      process.stderr.write(`memauth: second ${signal}, exiting now\n`);
      process.exit(1);
    }
    stopping = signal;
    if (srv) shutdown(signal, srv);
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  const base = ctxOf(cmd);
  // flags and variables win over the config file's `embeddings`, field by field
  const embeddings = mergeSettings(base.embeddings, settingsOfFile(config.embeddings));
  const embedder = embedderOf(embeddings);
  pgStore = await postgresMemory({ ...base, policy: config.policy, embeddings }, true);
  const keyWarning = pgStore ? null : checkpointKeyWarning(config.db, config.checkpointKeyFile);
  if (keyWarning !== null) process.stderr.write(`${keyWarning}\n`);
  try {
    srv = await startServer({ config, embedder, ...(pgStore ? { memory: pgStore.mem } : {}) });
  } catch (e) {
    if (pgStore) await pgStore.mem.close();
    if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE')
      throw new MemauthError('INVALID_ARGUMENT', `port ${config.port} on ${config.host} is already in use: stop the other server, or pass --port 0 to pick a free port`, {
        field: 'port',
        port: config.port,
      });
    throw e;
  }
  await announce(srv, pgStore ? pgStore.where : config.db);
  if (stopping !== null) shutdown(stopping, srv);
}

/** What `serve` prints once it listens: the admin token (first start only), the address, unaudited tokens. */
async function announce(srv: Awaited<ReturnType<typeof startServer>>, where: string): Promise<void> {
  if (srv.adminToken) {
    out(`memauth: created the admin token (shown once; only its hash is stored; rotate it with POST /v1/tokens/${srv.adminToken.info.id}/rotate):`);
    out(`memauth admin token: ${srv.adminToken.token}`);
  }
  out(`memauth listening on ${srv.url} (db ${where}; OpenAPI ${srv.url}/openapi.json; MCP ${srv.url}/mcp)`);
  out(`memauth search: ${searchLine(srv.memory)}`);
  const unaudited = await new TokenService(srv.memory.driver).unaudited();
  if (unaudited.length > 0)
    process.stderr.write(
      `memauth: ${unaudited.length} token(s) issued before tokens were audited are refused (401, reason not_in_audit): ${unaudited.map((t) => t.id).join(', ')}; check them with memauth token list, then run memauth token adopt\n`,
    );
}

/**
 * `mcp` → `createMcpServer` (src/server/mcp.ts) over stdio, bound to the principal of --token.
 * When it cannot start (no token, a bad store or policy, a token that is not an agent's), the
 * client gets the reason as the answer to its `initialize` (src/server/mcp-startup-error.ts)
 * instead of a closed pipe; the error is then reported on stderr with its exit code.
 */
async function mcpCommand(cmd: Command, o: { token?: string; session?: string }): Promise<void> {
  let started: Awaited<ReturnType<typeof startMcp>>;
  try {
    started = await startMcp(cmd, o);
  } catch (e) {
    // on stderr at once (the MCP host's log), then to the client, which may end the process
    reportError(e, false, { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) }, process.env.MEMAUTH_DEBUG === '1');
    if (e instanceof Error) REPORTED.add(e);
    await answerStartupError(e);
    throw e;
  }
  const { mem, server, label } = started;
  try {
    const transport = new StdioServerTransport();
    const done = new Promise<void>((resolve) => {
      transport.onclose = () => resolve();
      process.stdin.once('end', () => resolve());
    });
    await server.connect(transport);
    process.stderr.write(`memauth mcp: ${label} (stdio)\n`);
    await done;
    await server.close();
  } finally {
    await mem.close();
  }
}

/** Open the store, check the token and build the MCP server of `memauth mcp` (the store is closed again when this throws). */
async function startMcp(cmd: Command, o: { token?: string; session?: string }) {
  if (o.token === undefined || o.token === '') throw new MemauthError('INVALID_ARGUMENT', 'memauth mcp needs a principal token: --token mat_… or $MEMAUTH_TOKEN', { field: 'token' });
  const ctx = ctxOf(cmd);
  const mem = (await postgresMemory(ctx, false))?.mem ?? (await openCliMemory(ctx, false, undefined, true));
  const token = o.token;
  try {
    const tokens = new TokenService(mem.driver);
    const { tenant, principal } = mcpPrincipal(await tokens.authenticate(token));
    const server = createMcpServer({
      mem,
      tenant,
      principal,
      session: o.session ?? `mcp_${mem.newSessionId()}`,
      config: { maxContentChars: 1_000_000 },
      version: VERSION,
      recheck: async () => {
        await tokens.authenticate(token);
      },
    });
    return { mem, server, label: `${principal.kind} ${principal.id} in tenant ${tenant} on ${ctx.db}` };
  } catch (e) {
    await mem.close();
    throw e;
  }
}

/** Open the store of a `token` command, run `fn` on its token service, close the store. */
async function withTokens<T>(cmd: Command, fn: (t: TokenService) => Promise<T>): Promise<T> {
  const ctx = ctxOf(cmd);
  const mem = (await postgresMemory(ctx, false))?.mem ?? (await openCliMemory(ctx));
  try {
    return await fn(new TokenService(mem.driver));
  } finally {
    await mem.close();
  }
}

const json = (cmd: Command): boolean => cmd.optsWithGlobals<{ json?: boolean }>().json === true;

/** `token create` → `TokenService.issue`. */
async function tokenCreate(cmd: Command, o: { principal?: string; admin?: boolean }): Promise<void> {
  const tenant = cmd.optsWithGlobals<{ tenant?: string }>().tenant ?? process.env.MEMAUTH_TENANT;
  if (o.admin !== true && (tenant === undefined || tenant === '' || o.principal === undefined))
    throw new MemauthError('INVALID_ARGUMENT', 'give --tenant T --principal P, or --admin', { field: 'principal' });
  const issued = await withTokens(cmd, (t) => t.issue(o.admin === true ? 'admin' : { tenant: tenant as string, principal: o.principal as string }));
  out(json(cmd) ? JSON.stringify(issued) : `${issued.info.id} ${issued.token}`);
}

/** `token list` → `TokenService.list`. */
async function tokenList(cmd: Command): Promise<void> {
  const tenant = cmd.optsWithGlobals<{ tenant?: string }>().tenant;
  const list = await withTokens(cmd, (t) => t.list(tenant !== undefined && tenant !== '' ? tenant : null));
  out(
    json(cmd)
      ? JSON.stringify({ tokens: list })
      : list.map((t) => `${t.id} ${t.admin ? 'admin' : `${t.tenant}/${t.principal}`} created ${t.createdAt}${t.revokedAt ? ` revoked ${t.revokedAt}` : ''}`).join('\n') || '(no tokens)',
  );
}

/** `token revoke <id>` → `TokenService.revoke`. */
async function tokenRevoke(cmd: Command, _o: unknown, id: string): Promise<void> {
  const info = await withTokens(cmd, (t) => t.revoke(id));
  out(json(cmd) ? JSON.stringify(info) : `revoked ${info.id} at ${info.revokedAt}`);
}

/** `token rotate <id>` → `TokenService.rotate`. */
async function tokenRotate(cmd: Command, _o: unknown, id: string): Promise<void> {
  const r = await withTokens(cmd, (t) => t.rotate(id));
  out(json(cmd) ? JSON.stringify(r) : `${r.info.id} ${r.token} (revoked ${r.revoked.id})`);
}

/** `token adopt` → `TokenService.adopt`. */
async function tokenAdopt(cmd: Command): Promise<void> {
  const adopted = await withTokens(cmd, (t) => t.adopt());
  out(
    json(cmd)
      ? JSON.stringify({ adopted })
      : adopted.map((t) => `adopted ${t.id} ${t.admin ? 'admin' : `${t.tenant}/${t.principal}`}${t.revokedAt ? ' (revoked)' : ''}`).join('\n') || '(no token to adopt)',
  );
}

/** `serve`, `mcp` and the `token` group. Global options used: `--db`, `--database`, `--policy`, `--tenant`, `--json`. */
export const serverCommands: readonly AnyCommand[] = [
  rawCommand({
    name: 'serve',
    description: 'serve the HTTP API, its OpenAPI document and MCP (Streamable HTTP at /mcp) on the SQLite file, or on PostgreSQL with --database postgres://…',
    options: [
      { flags: '--port <port>', description: 'TCP port (default 8787, $MEMAUTH_PORT; 0 picks a free one)' },
      { flags: '--host <host>', description: 'interface (default 127.0.0.1, $MEMAUTH_HOST)' },
      { flags: '--config <file>', description: 'JSON config file (or $MEMAUTH_CONFIG); flags > environment > file > defaults' },
      { flags: '--body-limit <bytes>', description: 'largest request body, e.g. 2mb (default 2 MiB, $MEMAUTH_BODY_LIMIT)' },
      { flags: '--max-content <chars>', description: 'longest memory content in characters (default 1000000, $MEMAUTH_MAX_CONTENT)' },
      {
        flags: '--log-level <level>',
        description: 'request log level ($MEMAUTH_LOG_LEVEL; default info; JSON lines on stderr)',
        choices: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      },
    ],
    raw: serveCommand,
  }),
  rawCommand({
    name: 'mcp',
    description: 'run the MCP server over stdio, bound to the principal of --token (an agent, tool or external principal)',
    options: [
      { flags: '--token <token>', description: 'bearer token of the principal (prefer $MEMAUTH_TOKEN: arguments are visible to other users)', env: 'MEMAUTH_TOKEN' },
      { flags: '--session <id>', description: 'memauth session of this connection (default: a new one per run)' },
    ],
    raw: mcpCommand,
  }),
  group('token', 'manage bearer tokens offline, on the database file (the server does it at /v1/tokens)'),
  rawCommand({
    name: 'token create',
    description: 'issue a token for a principal (--tenant T --principal P) or an admin token (--admin); printed once',
    options: [
      { flags: '--principal <id>', description: 'principal id' },
      { flags: '--admin', description: 'issue an admin token' },
    ],
    raw: tokenCreate,
  }),
  rawCommand({ name: 'token list', description: "list a tenant's tokens (--tenant), or the admin tokens; never their secrets", raw: tokenList }),
  rawCommand({ name: 'token revoke', arg: '<id>', description: 'revoke a token (refused from the next request on)', raw: tokenRevoke }),
  rawCommand({ name: 'token rotate', arg: '<id>', description: 'issue a new token for the same principal and revoke the old one; printed once', raw: tokenRotate }),
  rawCommand({
    name: 'token adopt',
    description:
      'record tokens issued before tokens were audited in the audit chain (token_issue, adopted: true) so they authenticate again; check `memauth token list` first — every row without an entry is adopted',
    raw: tokenAdopt,
  }),
];
