/**
 * Command table of `migrate` (`copyStore`, src/store/copy.ts) and the stores it opens.
 */
import { existsSync, statSync } from 'node:fs';
import { openMemory } from '../../api/open.js';
import type { AuditReport } from '../../api/verify.js';
import { MemauthError } from '../../core/errors.js';
import { type CopyReport, copyStore } from '../../store/copy.js';
import type { StorageDriver } from '../../store/driver.js';
import { SqliteDriver } from '../../store/sqlite/driver.js';
import type { RowStore } from '../../store/tables.js';
import { EXIT } from '../errors.js';
import { type Ctx, type StoreTarget, displayTarget, parseStoreTarget } from '../context.js';
import { type AnyCommand, command } from '../spec.js';

type Store = StorageDriver & RowStore;

async function openStore(t: StoreTarget, role: 'source' | 'destination'): Promise<Store> {
  if (t.kind === 'postgres') {
    const { PostgresDriver } = await import('../../store/postgres/driver.js');
    return PostgresDriver.connect(t.url, { applicationName: `memauth-migrate-${role}`, create: role === 'destination' });
  }
  if (role === 'source') {
    if (!existsSync(t.path) || statSync(t.path).isDirectory()) throw new MemauthError('INVALID_ARGUMENT', `source ${t.path} is not an SQLite file`, { field: 'from', path: t.path });
    return SqliteDriver.open({ path: t.path });
  }
  if (existsSync(t.path) && statSync(t.path).size > 0) {
    throw new MemauthError('INVALID_ARGUMENT', `destination ${t.path} already exists; migrate into a new file`, { field: 'to', path: t.path });
  }
  return SqliteDriver.open({ path: t.path });
}

/** Human output of a migration. */
function formatMigration(from: string, to: string, r: CopyReport, v: AuditReport): string {
  const lines = [`copied ${from} → ${to}`];
  for (const [t, n] of Object.entries(r.counts))
    lines.push(
      `  ${t.padEnd(18)} ${String(n).padStart(8)} rows  ${r.digests[t as keyof CopyReport['digests']].source === r.digests[t as keyof CopyReport['digests']].destination ? 'identical' : 'DIFFERENT'}`,
    );
  for (const h of r.heads)
    lines.push(`  chain ${h.tenant}: ${h.seq} entries, head ${h.hash.slice(0, 16)}… ${h.hash === h.destinationHash ? 'same at the destination' : 'DIFFERENT at the destination'}`);
  lines.push(
    `destination audit: ${v.ok ? 'every chain verifies' : 'FAILS'}${
      v.ok
        ? ''
        : ` (${v.tenants
            .filter((x) => !x.ok)
            .map((x) => x.message)
            .join('; ')})`
    }`,
  );
  lines.push(r.ok && v.ok ? 'ok: every row copied, same hashes at both ends' : 'FAILED: the destination is not an exact copy');
  return lines.join('\n');
}

/**
 * `migrate --from SRC --to DST` → `copyStore` (src/store/copy.ts), then `Memory.verifyAudit` on the
 * destination: copy a whole store between SQLite and PostgreSQL (either way) and prove the copy —
 * row digests per table, audit heads per tenant, and the destination's chains verified. Exit 0
 * when identical and verified, 1 otherwise.
 */
async function migrateCommand(ctx: Ctx, o: { from: string; to: string }): Promise<number> {
  const from = parseStoreTarget(o.from);
  const to = parseStoreTarget(o.to);
  if (from.kind === 'sqlite' && to.kind === 'sqlite' && from.path === to.path) throw new MemauthError('INVALID_ARGUMENT', '--from and --to are the same file', { field: 'to' });
  const src = await openStore(from, 'source');
  let dst: Store | null = null;
  try {
    dst = await openStore(to, 'destination');
    const report = await copyStore(src, dst);
    // verify the destination's chains with the library itself (no new checkpoint is written)
    const mem = await openMemory({ driver: dst, checkpointKey: false });
    const verify = await mem.verifyAudit({});
    await mem.close();
    dst = null;
    const value = {
      from: displayTarget(from),
      to: displayTarget(to),
      ok: report.ok && verify.ok,
      counts: report.counts,
      heads: report.heads,
      digests: report.digests,
      audit: { ok: verify.ok, tenants: verify.tenants.map((x) => ({ tenant: x.tenant, ok: x.ok, entries: x.chain.entries, message: x.message })) },
    };
    ctx.emit(value, () => formatMigration(value.from, value.to, report, verify));
    return value.ok ? EXIT.OK : EXIT.FAILED;
  } finally {
    await src.close();
    if (dst !== null) await dst.close();
  }
}

export const migrateCommands: readonly AnyCommand[] = [
  command({
    name: 'migrate',
    description: 'copy a whole store between SQLite and PostgreSQL (sqlite:FILE ↔ postgres://…) and verify the copy; stop writers first',
    options: [
      { flags: '--from <url>', description: 'source: sqlite:FILE or postgres://…', required: true },
      { flags: '--to <url>', description: 'destination (new file / empty database or schema): sqlite:FILE or postgres://…', required: true },
    ],
    handler: migrateCommand,
  }),
];
