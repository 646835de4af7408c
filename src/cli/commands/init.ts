/**
 * Command table of `init`: create the database (an SQLite file and its checkpoint key, or the
 * PostgreSQL schema) through `openMemory`, and the server's admin token (`TokenService.ensureAdmin`).
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { checkpointKeyWarning, loadPolicyFile } from '../../api/open.js';
import { TokenService } from '../../server/tokens.js';
import { type Ctx, openCliMemory, withMemory } from '../context.js';
import { searchLine } from '../embedder-config.js';
import { type AnyCommand, command } from '../spec.js';

/** `init` on PostgreSQL (`--database postgres://…`): create or migrate the schema. */
async function initPostgres(ctx: Ctx): Promise<void> {
  const notices: string[] = [];
  const mem = await openCliMemory(ctx, true, (line) => notices.push(line));
  let pgInfo: { database: string; kind: 'postgres'; serverVersion: string | null; vector: unknown; search: string; policyVersion: string; policyName: string; adminToken: string | null };
  try {
    const driver = mem.driver as unknown as { capabilities?: { vector: unknown; serverVersion: string } };
    const admin = await new TokenService(mem.driver).ensureAdmin();
    pgInfo = {
      database: ctx.db,
      kind: 'postgres',
      serverVersion: driver.capabilities?.serverVersion ?? null,
      vector: driver.capabilities?.vector ?? null,
      search: searchLine(mem),
      policyVersion: mem.policy.version,
      policyName: mem.policy.document.name,
      adminToken: admin?.token ?? null,
    };
  } finally {
    await mem.close();
  }
  ctx.emit(pgInfo, () =>
    [
      `ready ${pgInfo.database} (PostgreSQL ${pgInfo.serverVersion ?? '?'}; schema created or up to date)`,
      ...notices.map((n) => `note             ${n}`),
      `search           ${pgInfo.search}`,
      `checkpoint key   ${process.env.MEMAUTH_CHECKPOINT_KEY ?? '(none: no checkpoints are signed; set MEMAUTH_CHECKPOINT_KEY=FILE, the same file on every server)'}`,
      `policy           ${pgInfo.policyName} ${pgInfo.policyVersion}`,
      ...(pgInfo.adminToken !== null ? [`admin token      ${pgInfo.adminToken} (for memauth serve; shown once, only its hash is stored)`] : []),
      'next: memauth --database URL --tenant T principal add <id> --kind user --domain D',
    ].join('\n'),
  );
}

/** `init` on an SQLite file: create it (and its key) unless it exists. */
async function initSqlite(ctx: Ctx): Promise<void> {
  const existed = ctx.db !== ':memory:' && existsSync(ctx.db);
  const keyFile = process.env.MEMAUTH_CHECKPOINT_KEY !== undefined && process.env.MEMAUTH_CHECKPOINT_KEY !== '' ? process.env.MEMAUTH_CHECKPOINT_KEY : undefined;
  const keyWarning = checkpointKeyWarning(ctx.db, keyFile);
  if (keyWarning !== null) process.stderr.write(`${keyWarning}\n`);
  const info = await withMemory(
    ctx,
    async (mem) => {
      // the HTTP API's admin token: created once, shown once, only its hash stored (src/server/tokens.ts)
      const admin = await new TokenService(mem.driver).ensureAdmin();
      return {
        created: !existed,
        db: ctx.db === ':memory:' ? ':memory:' : resolve(ctx.db),
        key: ctx.db === ':memory:' ? null : resolve(keyFile ?? `${ctx.db}.key`),
        checkpoints: ctx.db === ':memory:' ? null : resolve(`${ctx.db}.checkpoints`),
        policyVersion: mem.policy.version,
        policyName: mem.policy.document.name,
        search: searchLine(mem),
        adminToken: admin?.token ?? null,
      };
    },
    true,
  );
  ctx.emit(info, () =>
    [
      `${info.created ? 'created' : 'already initialised'} ${info.db}`,
      `checkpoint key   ${info.key ?? '(in memory)'} (keep it secret; mode 0600)`,
      `checkpoints      ${info.checkpoints ?? '(in memory)'}`,
      `policy           ${info.policyName} ${info.policyVersion}`,
      `search           ${info.search}`,
      ...(info.adminToken !== null ? [`admin token      ${info.adminToken} (for memauth serve; shown once, only its hash is stored)`] : []),
      'next: memauth --tenant T principal add <id> --kind user --domain D',
    ].join('\n'),
  );
}

/** `init` → `openMemory` (creating) + `TokenService.ensureAdmin`. */
async function initCommand(ctx: Ctx): Promise<void> {
  // a bad policy is reported before anything is created or warned about
  if (ctx.policy !== undefined) loadPolicyFile(ctx.policy);
  if (ctx.store.kind === 'postgres') return initPostgres(ctx);
  return initSqlite(ctx);
}

export const initCommands: readonly AnyCommand[] = [
  command({
    name: 'init',
    description: "create the database (SQLite file and its Ed25519 checkpoint key, or the PostgreSQL schema) and the server's admin token (printed once); print where",
    handler: initCommand,
  }),
];
