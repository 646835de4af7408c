/**
 * Command table of `import` (`importMemories`, src/import) and the human rendering of its report.
 */
import { IMPORT_FORMATS, IMPORT_TRUST, type ImportFormat, type ImportReport, type ImportTrust, importMemories } from '../../import/index.js';
import { type Ctx, requireTenant, withMemory } from '../context.js';
import { truncate } from '../format.js';
import { createProgress } from '../progress.js';
import { type AnyCommand, command } from '../spec.js';

/** Human rendering of an import report. */
export function formatImportReport(r: ImportReport): string {
  const counts = (o: Readonly<Record<string, number | undefined>>): string =>
    Object.entries(o)
      .map(([k, v]) => `${k} ${v ?? 0}`)
      .join(', ') || 'none';
  const lines = [
    `imported ${r.imported} of ${r.read} items from ${r.file} (${r.format}) into scope ${r.scope}, tenant ${r.tenant}`,
    `  written by principal ${r.principal} (trust at most ${r.trust}), source ${r.source}#…`,
    `  authority   ${counts(r.authorities)}`,
    `  duplicates  ${r.duplicates}`,
    `  skipped     ${r.skipped}${r.skipped > 0 ? ` (${counts(r.skippedByReason)})` : ''}`,
  ];
  const shown = r.problems.slice(0, 20);
  for (const p of shown) {
    const where = p.line !== null ? `line ${p.line}` : `item ${p.index ?? '?'}`;
    lines.push(`    ${where.padEnd(10)} ${p.reason.padEnd(16)} ${truncate(p.detail, 100)}`);
  }
  if (r.problems.length > shown.length) lines.push(`    … and ${r.problems.length - shown.length} more (--json lists them all)`);
  for (const w of r.warnings) lines.push(`  warning: ${w}`);
  return lines.join('\n');
}

interface ImportFlags {
  format: ImportFormat;
  file: string;
  scope: string;
  trust: ImportTrust;
  principal?: string;
  strict?: boolean;
}

/** `import` → `importMemories` (src/import), which writes through `Memory.write`. */
async function importCommand(ctx: Ctx, o: ImportFlags): Promise<void> {
  const tenant = requireTenant(ctx);
  const progress = createProgress(process.stderr, 'import');
  let report: ImportReport;
  try {
    report = await withMemory(ctx, (mem) =>
      importMemories(mem, {
        tenant,
        scope: o.scope,
        format: o.format,
        file: o.file,
        trust: o.trust,
        ...(o.principal !== undefined ? { principal: o.principal } : {}),
        strict: o.strict === true,
        // small files finish before a progress line would help
        onProgress: (done, total) => (total >= 500 ? progress.update(done, total, '') : undefined),
      }),
    );
  } finally {
    progress.finish();
  }
  ctx.emit(report, () => formatImportReport(report));
}

/**
 * `import`: read a memory export (the MCP reference memory server's JSONL graph, or a mem0
 * export) into a scope. Each item is written by an import principal at `external_untrusted` (or
 * `model_inferred` with `--trust model_inferred`, where the policy allows), with the import as its
 * source. Exit 0 when the import ran (skipped items are reported), 2 on invalid input — with
 * `--strict`, any invalid item.
 */
export const importCommands: readonly AnyCommand[] = [
  command({
    name: 'import',
    description: 'import memories from another memory system, each at the authority its unknown origin deserves',
    options: [
      { flags: '--format <format>', description: 'export format', choices: IMPORT_FORMATS, required: true },
      { flags: '--file <path>', description: 'the export file (mcp-memory: memory.jsonl; mem0: a JSON export)', required: true },
      { flags: '--scope <scope>', description: 'scope the imported records are written to', required: true },
      { flags: '--trust <authority>', description: 'the most an imported record may have', choices: IMPORT_TRUST, default: 'external_untrusted' },
      { flags: '--principal <id>', description: 'import principal (default: import, or import-inferred with --trust model_inferred; created if missing)' },
      { flags: '--strict', description: 'refuse the whole file if any item is invalid (nothing is written)' },
    ],
    helpAfter: `
Each record's source is import:<format>:<file name>#<item> (a mem0 id; an MCP entity or relation).
Re-importing a file skips what is already there. --trust model_inferred needs a policy source rule
{"match": "import:*", "authority": "model_inferred"}; without one the records stay external_untrusted.`,
    handler: importCommand,
  }),
];
