import { type Command, Option } from 'commander';
import { MemauthError } from '../../core/errors.js';
import { EXIT } from '../errors.js';
import { type RunState, act, commaList, jsonObject, positiveInt, requireTenant, withMemory } from '../context.js';
import { formatConfirmation, formatDecision, formatDecisions, formatReplay } from '../format.js';

/** Register the gate commands: `confirm`, `authorize`, `decisions`, `replay`. */
export function registerGateCommands(program: Command, state: RunState): void {
  program
    .command('confirm')
    .description('issue a scoped human confirmation for one exact action (user principals only)')
    .requiredOption('--principal <id>', 'the confirming user principal')
    .requiredOption('--action <type>', 'action type, e.g. pay')
    .option('--args <json>', 'the exact action arguments, a JSON object', jsonObject)
    .option('--args-hash <hex>', 'or: the SHA-256 of their canonical JSON')
    .option('--resource <r>', 'the resource the action touches')
    .option('--memory <ids...>', 'memory ids the confirmation covers (repeatable, or comma-separated)', commaList)
    .option('--ttl <seconds>', 'lifetime in seconds (default and maximum from the policy)', positiveInt)
    .option('--max-uses <n>', 'how many decisions it may allow (default 1)', positiveInt)
    .action(
      act(state, async (ctx, o: { principal: string; action: string; args?: Record<string, unknown>; argsHash?: string; resource?: string; memory?: string[]; ttl?: number; maxUses?: number }) => {
        const tenant = requireTenant(ctx);
        if (o.args === undefined && o.argsHash === undefined) throw new MemauthError('INVALID_ARGUMENT', 'confirm: give the exact --args JSON (or --args-hash)', { field: 'args' });
        const c = await withMemory(ctx, (mem) =>
          mem.confirm({
            tenant,
            principal: o.principal,
            action: { type: o.action, ...(o.args !== undefined ? { args: o.args } : {}), ...(o.resource !== undefined ? { resource: o.resource } : {}) },
            ...(o.argsHash !== undefined ? { argsHash: o.argsHash } : {}),
            ...(o.memory !== undefined ? { memoryIds: o.memory } : {}),
            ...(o.ttl !== undefined ? { expiresInSeconds: o.ttl } : {}),
            ...(o.maxUses !== undefined ? { maxUses: o.maxUses } : {}),
          }),
        );
        ctx.emit(c, () => formatConfirmation(c));
      }),
    );

  program
    .command('authorize')
    .description('ask the action gate; exit 1 when the outcome is deny (would_deny exits 0)')
    .requiredOption('--action <type>', 'action type, e.g. pay')
    .option('--args <json>', 'action arguments, a JSON object (default {})', jsonObject)
    .option('--resource <r>', 'the resource the action touches')
    .option('--session <id>', 'the session the action is proposed in (its reads are dependencies)')
    .option('--depends-on <ids...>', 'declared dependency record ids (repeatable, or comma-separated)', commaList)
    .option('--user-principal <id>', "the user whose current turn is given by --user-turn")
    .option('--user-turn <text>', "the user's current turn (its values count as user_confirmed)")
    .addOption(new Option('--context <mode>', 'session: every session read is a dependency; declared: only --depends-on and value sources').choices(['session', 'declared']))
    .option('--confirmation <id>', 'cite a confirmation')
    .action(
      act(state, async (ctx, o: { action: string; args?: Record<string, unknown>; resource?: string; session?: string; dependsOn?: string[]; userPrincipal?: string; userTurn?: string; context?: 'session' | 'declared'; confirmation?: string }) => {
        const tenant = requireTenant(ctx);
        if ((o.userPrincipal === undefined) !== (o.userTurn === undefined)) throw new MemauthError('INVALID_ARGUMENT', 'authorize: --user-principal and --user-turn go together', { field: o.userPrincipal === undefined ? 'userPrincipal' : 'userTurn' });
        const d = await withMemory(ctx, (mem) =>
          mem.authorize({
            tenant,
            action: { type: o.action, args: o.args ?? {}, ...(o.resource !== undefined ? { resource: o.resource } : {}) },
            ...(o.session !== undefined ? { session: o.session } : {}),
            ...(o.dependsOn !== undefined ? { dependsOn: o.dependsOn } : {}),
            ...(o.userPrincipal !== undefined && o.userTurn !== undefined ? { userTurn: { principal: o.userPrincipal, text: o.userTurn } } : {}),
            ...(o.context !== undefined ? { context: o.context } : {}),
            ...(o.confirmation !== undefined ? { confirmationId: o.confirmation } : {}),
          }),
        );
        ctx.emit(d, () => formatDecision(d));
        return d.outcome === 'deny' ? EXIT.FAILED : EXIT.OK;
      }),
    );

  program
    .command('decisions')
    .description('recent gate decisions, newest first')
    .option('--limit <n>', 'at most n decisions (default 20)', positiveInt)
    .action(
      act(state, async (ctx, o: { limit?: number }) => {
        const tenant = requireTenant(ctx);
        const ds = await withMemory(ctx, (mem) => mem.listDecisions({ tenant, limit: o.limit ?? 20 }));
        ctx.emit(ds, () => formatDecisions(ds));
      }),
    );

  program
    .command('replay <decisionId>')
    .description('rebuild a decision from the audit log alone and re-evaluate it; exit 1 on mismatch')
    .action(
      act(state, async (ctx, decisionId: string) => {
        const tenant = requireTenant(ctx);
        const r = await withMemory(ctx, (mem) => mem.replay({ tenant, decisionId }));
        ctx.emit(r, () => formatReplay(r));
        return r.matches ? EXIT.OK : EXIT.FAILED;
      }),
    );
}
