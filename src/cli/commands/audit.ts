/**
 * Command table of `audit verify` and `audit checkpoint` (all tenants unless `--tenant`):
 * `Memory.verifyAudit` and `Memory.checkpoint`.
 */
import { EXIT } from '../errors.js';
import { type Ctx, withMemory } from '../context.js';
import { formatAudit, formatCheckpoints } from '../format.js';
import { type AnyCommand, command, group } from '../spec.js';

const tenantFilter = (ctx: Ctx): { tenant?: string } => (ctx.tenant !== undefined ? { tenant: ctx.tenant } : {});

/** `audit verify` → `Memory.verifyAudit`; exit 1 when a chain fails. */
async function auditVerify(ctx: Ctx): Promise<number> {
  const rep = await withMemory(ctx, (mem) => mem.verifyAudit(tenantFilter(ctx)));
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
