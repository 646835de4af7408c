/**
 * Command table of `surfaces`, the write-surface inventory of a tenant (src/api/surfaces.ts
 * `surfaceInventory`): one row per principal, policy source rule, self-statement path and default
 * source, with what was written through it and the decisions per tier that depended on it over
 * `--since` (default 7 days). The first step of the rollout in docs/policy.md.
 */
import { DEFAULT_SURFACE_WINDOW, DELETION, type Surface, type SurfaceInventory, surfaceInventory } from '../../api/surfaces.js';
import { type Ctx, requireTenant, withMemory } from '../context.js';
import { table, truncate } from '../format.js';
import { type AnyCommand, command } from '../spec.js';

/** The high tier's use of a surface: `decisions (allow/deny/would_deny)`, or `-`. */
function highUse(s: Surface): string {
  const h = s.observed.tiers.high;
  return h.decisions === 0 ? '-' : `${h.decisions} (${h.allow}/${h.deny}/${h.would_deny})`;
}

/** The inventory for people: one table, then the window and what it did not see. */
export function formatSurfaces(inv: SurfaceInventory): string {
  const rows = inv.surfaces.map((s) => [
    truncate(s.type === 'principal' ? s.name : `${s.type === 'source_rule' ? s.id : s.type}: ${s.name}`, 40),
    s.kind ?? '(unregistered)',
    s.domain ?? '-',
    truncate(s.owner, 24),
    s.defaultAuthority ?? 'writer ceiling',
    s.observed.writes,
    s.observed.erased + s.observed.expiring === 0 ? '-' : `${s.observed.erased} erased, ${s.observed.expiring} expiring`,
    s.observed.tiers.read_only.decisions + s.observed.tiers.low.decisions,
    highUse(s),
  ]);
  const w = inv.window;
  const lines = [
    table(['surface', 'kind', 'domain', 'owner', 'default authority', 'writes', 'retention', 'low-risk uses', 'high-risk uses (allow/deny/would_deny)'], rows),
    `window ${w.since} → ${w.until}: ${w.recordsRead} records, ${w.decisionsRead} decisions${w.complete ? '' : ' (the newest only: the window held more)'}; store ${inv.surfaces[0]?.store ?? '-'}`,
    DELETION,
  ];
  if (inv.hint !== undefined) lines.push(`hint: ${inv.hint}`);
  return lines.join('\n');
}

/** `surfaces` → `surfaceInventory` (src/api/surfaces.ts). */
async function surfacesCommand(ctx: Ctx, o: { since: string }): Promise<void> {
  const tenant = requireTenant(ctx);
  const inv = await withMemory(ctx, (mem) => surfaceInventory(mem, { tenant, since: o.since }));
  ctx.emit(inv, () => formatSurfaces(inv));
  if (ctx.json && inv.hint !== undefined) ctx.err(`hint: ${inv.hint}`);
}

/** The `surfaces` command. */
export const surfaceCommands: readonly AnyCommand[] = [
  command({
    name: 'surfaces',
    description: "the tenant's write-surface inventory: every principal and source rule, what it wrote and which decisions (per risk tier) depended on it",
    options: [{ flags: '--since <when>', description: 'start of the window: a duration (7d, 24h, 30m) or an ISO-8601 time', default: DEFAULT_SURFACE_WINDOW }],
    helpAfter: '\nRead it before switching a tier to enforce (docs/policy.md § Rolling out): the surfaces with high-risk uses are the paths that feed consequential actions.',
    handler: surfacesCommand,
  }),
];
