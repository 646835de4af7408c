/**
 * Command table of `audit verify` and `audit checkpoint` (all tenants unless `--tenant`):
 * `Memory.verifyAudit` and `Memory.checkpoint`.
 */
import type { Memory } from '../../api/memory.js';
import type { AuditReport } from '../../api/verify.js';
import { MemauthError } from '../../core/errors.js';
import { SqliteDriver } from '../../store/sqlite/driver.js';
import { EXIT } from '../errors.js';
import { type Ctx, withMemory } from '../context.js';
import { formatAudit, formatCheckpoints } from '../format.js';
import { type AnyCommand, command, group } from '../spec.js';

const tenantFilter = (ctx: Ctx): { tenant?: string } => (ctx.tenant !== undefined ? { tenant: ctx.tenant } : {});
const verifyWith = (ctx: Ctx) => (mem: Memory) => mem.verifyAudit(tenantFilter(ctx));

/**
 * The tables of the SQLite file `path` that fail SQLite's own check (`PRAGMA quick_check(table)`),
 * each with its first problem; `[]` when the file cannot even be read that far.
 */
function corruptTables(path: string): Array<{ table: string; problem: string }> {
  const out: Array<{ table: string; problem: string }> = [];
  let d: SqliteDriver | undefined;
  try {
    d = SqliteDriver.open({ path, readonly: true });
    const db = d.unsafeDatabase();
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all() as string[];
    for (const table of tables) {
      let rows: string[];
      try {
        rows = db
          .prepare(`PRAGMA quick_check("${table.replace(/"/g, '""')}")`)
          .pluck()
          .all() as string[];
      } catch (e) {
        rows = [(e as Error).message];
      }
      const problems = rows.flatMap((r) => r.split('\n')).filter((r) => r !== 'ok' && !r.startsWith('***'));
      if (problems.length > 0) out.push({ table, problem: problems[0] as string });
    }
  } catch {
    // the schema itself is unreadable: nothing more to name
  } finally {
    d?.unsafeDatabase().close();
  }
  return out;
}

/**
 * `audit verify` on a file SQLite reports corrupted: `DATABASE_CORRUPT` naming the tables that
 * fail SQLite's check (what is broken), instead of the bare read error.
 */
function corruptReport(ctx: Ctx, e: MemauthError): MemauthError {
  const bad = corruptTables(ctx.db);
  const what = bad.length > 0 ? `corrupted tables: ${bad.map((b) => `${b.table} (${b.problem})`).join('; ')}` : 'its schema cannot be read';
  return new MemauthError(
    'DATABASE_CORRUPT',
    `${ctx.db} is corrupted, so its audit chains cannot be verified — ${what}. Restore it from a backup and run memauth audit verify on the copy (the signed checkpoints in ${ctx.db}.checkpoints check it).`,
    { ...e.details, tables: bad },
    { cause: e },
  );
}

/** `audit verify` → `Memory.verifyAudit`; exit 1 when a chain fails, 3 (`DATABASE_CORRUPT`, naming the broken tables) when the file is corrupted. */
async function auditVerify(ctx: Ctx): Promise<number> {
  let rep: AuditReport;
  try {
    rep = await withMemory(ctx, verifyWith(ctx));
  } catch (e) {
    if (e instanceof MemauthError && e.code === 'DATABASE_CORRUPT' && ctx.store.kind === 'sqlite' && ctx.db !== ':memory:') throw corruptReport(ctx, e);
    throw e;
  }
  ctx.emit(rep, () => formatAudit(rep));
  return rep.ok ? EXIT.OK : EXIT.FAILED;
}

/** `audit checkpoint` → `Memory.checkpoint`. */
async function auditCheckpoint(ctx: Ctx): Promise<void> {
  const cs = await withMemory(ctx, (mem) => mem.checkpoint(tenantFilter(ctx)));
  ctx.emit(cs, () => formatCheckpoints(cs));
}

/** The `audit` group. */
export const auditCommands: readonly AnyCommand[] = [
  group('audit', 'the tamper-evident audit log'),
  command({
    name: 'audit verify',
    description: "verify each tenant's hash chain, signed checkpoint and rows (all tenants unless --tenant); exit 1 if any fails",
    handler: auditVerify,
  }),
  command({
    name: 'audit checkpoint',
    description: "sign a checkpoint of each tenant's chain head (all tenants unless --tenant)",
    handler: auditCheckpoint,
  }),
];
