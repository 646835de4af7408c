/**
 * Command table of the gate commands: `confirm` (`Memory.confirm`), `authorize`
 * (`Memory.authorize`), `decisions` (`Memory.listDecisions`), `replay` (`Memory.replay`).
 */
import { MemauthError } from '../../core/errors.js';
import { EXIT } from '../errors.js';
import { type Ctx, commaList, jsonObject, positiveInt, requireTenant, withListing, withMemory } from '../context.js';
import { formatConfirmation, formatDecision, formatDecisions, formatReplay } from '../format.js';
import { type AnyCommand, command } from '../spec.js';

interface ConfirmFlags {
  principal: string;
  action: string;
  args?: Record<string, unknown>;
  argsHash?: string;
  resource?: string;
  memory?: string[];
  ttl?: number;
  maxUses?: number;
}

/** `confirm` → `Memory.confirm`. */
async function confirmCommand(ctx: Ctx, o: ConfirmFlags): Promise<void> {
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
}

interface AuthorizeFlags {
  action: string;
  args?: Record<string, unknown>;
  resource?: string;
  session?: string;
  dependsOn?: string[];
  userPrincipal?: string;
  userTurn?: string;
  context?: 'session' | 'declared';
  confirmation?: string;
}

/** `authorize` → `Memory.authorize`; exit 1 when the outcome is deny. */
async function authorizeCommand(ctx: Ctx, o: AuthorizeFlags): Promise<number> {
  const tenant = requireTenant(ctx);
  if ((o.userPrincipal === undefined) !== (o.userTurn === undefined))
    throw new MemauthError('INVALID_ARGUMENT', 'authorize: --user-principal and --user-turn go together', { field: o.userPrincipal === undefined ? 'userPrincipal' : 'userTurn' });
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
}

/** `decisions` → `Memory.listDecisions`. */
async function decisionsCommand(ctx: Ctx, o: { limit?: number }): Promise<void> {
  const tenant = requireTenant(ctx);
  const ds = await withListing(ctx, tenant, (mem) => mem.listDecisions({ tenant, limit: o.limit ?? 20 }));
  ctx.emit(ds, () => formatDecisions(ds));
}

/** `replay <decisionId>` → `Memory.replay`; exit 1 on mismatch. */
async function replayCommand(ctx: Ctx, _o: unknown, decisionId: string): Promise<number> {
  const tenant = requireTenant(ctx);
  const r = await withMemory(ctx, (mem) => mem.replay({ tenant, decisionId }));
  ctx.emit(r, () => formatReplay(r));
  return r.matches ? EXIT.OK : EXIT.FAILED;
}

/** The gate commands, in help order. */
export const gateCommands: readonly AnyCommand[] = [
  command({
    name: 'confirm',
    description: 'issue a scoped human confirmation for one exact action (user principals only)',
    options: [
      { flags: '--principal <id>', description: 'the confirming user principal', required: true },
      { flags: '--action <type>', description: 'action type, e.g. pay', required: true },
      { flags: '--args <json>', description: 'the exact action arguments, a JSON object', parse: jsonObject },
      { flags: '--args-hash <hex>', description: 'or: the SHA-256 of their canonical JSON' },
      { flags: '--resource <r>', description: 'the resource the action touches' },
      { flags: '--memory <ids...>', description: 'memory ids the confirmation covers (repeatable, or comma-separated)', parse: commaList },
      { flags: '--ttl <seconds>', description: 'lifetime in seconds (default and maximum from the policy)', parse: positiveInt },
      { flags: '--max-uses <n>', description: 'how many decisions it may allow (default 1)', parse: positiveInt },
    ],
    handler: confirmCommand,
  }),
  command({
    name: 'authorize',
    description: 'ask the action gate; exit 1 when the outcome is deny (would_deny exits 0)',
    options: [
      { flags: '--action <type>', description: 'action type, e.g. pay', required: true },
      { flags: '--args <json>', description: 'action arguments, a JSON object (default {})', parse: jsonObject },
      { flags: '--resource <r>', description: 'the resource the action touches' },
      { flags: '--session <id>', description: 'the session the action is proposed in (its reads are dependencies)' },
      { flags: '--depends-on <ids...>', description: 'declared dependency record ids (repeatable, or comma-separated)', parse: commaList },
      { flags: '--user-principal <id>', description: 'the user whose current turn is given by --user-turn' },
      { flags: '--user-turn <text>', description: "the user's current turn (its values count as user_confirmed)" },
      { flags: '--context <mode>', description: 'session: every session read is a dependency; declared: only --depends-on and value sources', choices: ['session', 'declared'] },
      { flags: '--confirmation <id>', description: 'cite a confirmation' },
    ],
    handler: authorizeCommand,
  }),
  command({
    name: 'decisions',
    description: 'recent gate decisions, newest first',
    options: [{ flags: '--limit <n>', description: 'at most n decisions (default 20)', parse: positiveInt }],
    handler: decisionsCommand,
  }),
  command({
    name: 'replay',
    arg: '<decisionId>',
    description: 'rebuild a decision from the audit log alone and re-evaluate it; exit 1 on mismatch',
    handler: replayCommand,
  }),
];
