import type { Command } from 'commander';
import { EXIT } from '../errors.js';
import { type RunState, act, withMemory } from '../context.js';
import { formatAudit, formatCheckpoints } from '../format.js';

/** Register `audit verify` and `audit checkpoint` (all tenants unless `--tenant`). */
export function registerAuditCommands(program: Command, state: RunState): void {
  const audit = program.command('audit').description('the tamper-evident audit log');
  audit
    .command('verify')
    .description("verify each tenant's hash chain, signed checkpoint and rows (all tenants unless --tenant); exit 1 if any fails")
    .action(
      act(state, async (ctx) => {
        const rep = await withMemory(ctx, (mem) => mem.verifyAudit(ctx.tenant !== undefined ? { tenant: ctx.tenant } : {}));
        ctx.emit(rep, () => formatAudit(rep));
        return rep.ok ? EXIT.OK : EXIT.FAILED;
      }),
    );
  audit
    .command('checkpoint')
    .description("sign a checkpoint of each tenant's chain head (all tenants unless --tenant)")
    .action(
      act(state, async (ctx) => {
        const cs = await withMemory(ctx, (mem) => mem.checkpoint(ctx.tenant !== undefined ? { tenant: ctx.tenant } : {}));
        ctx.emit(cs, () => formatCheckpoints(cs));
      }),
    );
}
