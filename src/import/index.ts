/**
 * `importMemories`: read another memory system's export (the MCP reference memory server's JSONL
 * graph, or a mem0 export) into a scope, each item written through `Memory.write` by an import
 * principal at the authority its unknown origin deserves. A refused item is skipped and
 * reported; a failure of the environment (the error table's exit 3: database unavailable,
 * locked, corrupt, closed) stops the import.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { Memory } from '../api/memory.js';
import { type Authority, atLeast } from '../core/authority.js';
import { sha256Hex } from '../core/canonical.js';
import { checkClaims, hashedBody } from '../core/claims.js';
import { contentHashOf } from '../core/content-hash.js';
import { ERROR_TABLE, EXIT } from '../core/error-codes.js';
import { MemauthError, isMemauthError } from '../core/errors.js';
import { originAuthority } from '../core/policy.js';
import { type Claim, KIND_CEILING, type Principal, type PrincipalKind } from '../core/types.js';
import { IMPORT_FORMATS, type ImportFormat, type ImportItem, type ImportProblem, type Parsed, type SkipReason } from './items.js';
import { parseMcpMemory } from './mcp-memory.js';
import { parseMem0 } from './mem0.js';

export { IMPORT_FORMATS, SKIP_REASONS, type ImportFormat, type ImportItem, type ImportProblem, type SkipReason } from './items.js';
export { parseMcpMemory } from './mcp-memory.js';
export { parseMem0 } from './mem0.js';

/** The most an import can be trusted with: imported text is never a user's, a tool's or the system's statement. */
export const IMPORT_TRUST = ['external_untrusted', 'model_inferred'] as const;
export type ImportTrust = (typeof IMPORT_TRUST)[number];

/** Options of {@link importMemories}. */
export interface ImportOptions {
  readonly tenant: string;
  /** the scope every imported record is written to. */
  readonly scope: string;
  readonly format: ImportFormat;
  /** the export file; its base name goes into each record's source. */
  readonly file: string;
  /** the file's text, when the caller has already read it (then `file` only names it). */
  readonly text?: string;
  /**
   * the ceiling for imported records (default `external_untrusted`). `model_inferred` also needs
   * the policy to rate `import:*` sources that high (a source rule); the report warns when it does not.
   */
  readonly trust?: ImportTrust;
  /**
   * the principal the records are written by; default `import` (kind `external`) for
   * `external_untrusted`, `import-inferred` (kind `agent`) for `model_inferred`. Registered in
   * domain `import` when missing. An existing one must be `external` or `agent`.
   */
  readonly principal?: string;
  /** refuse the whole file (write nothing) when any item is invalid; default false (skip and report). */
  readonly strict?: boolean;
  /** called after each item, e.g. for a progress bar. */
  readonly onProgress?: (done: number, total: number) => void;
}

/** What {@link importMemories} did. `read = imported + duplicates + skipped`. */
export interface ImportReport {
  readonly format: ImportFormat;
  readonly file: string;
  /** the source prefix of every record: `import:<format>:<file base name>`. */
  readonly source: string;
  readonly tenant: string;
  readonly scope: string;
  readonly principal: string;
  readonly trust: ImportTrust;
  /** items found (an MCP observation or relation, a mem0 memory; a bad line counts as one). */
  readonly read: number;
  readonly imported: number;
  /** items already in the store with the same source and text (re-imports), or repeated in the file. */
  readonly duplicates: number;
  readonly skipped: number;
  readonly skippedByReason: Readonly<Partial<Record<SkipReason, number>>>;
  /** every skipped item: line (JSONL) or index (JSON), ref, reason, detail. */
  readonly problems: readonly ImportProblem[];
  /** imported records per origin authority. */
  readonly authorities: Readonly<Partial<Record<Authority, number>>>;
  readonly warnings: readonly string[];
}

const PARSERS: Record<ImportFormat, (text: string) => Parsed> = { 'mcp-memory': parseMcpMemory, mem0: parseMem0 };
const IMPORT_KINDS: readonly PrincipalKind[] = ['external', 'agent'];
const MAX_WARNINGS = 50;

function defaultPrincipal(trust: ImportTrust): { id: string; kind: PrincipalKind } {
  return trust === 'model_inferred' ? { id: 'import-inferred', kind: 'agent' } : { id: 'import', kind: 'external' };
}

/** The import principal: existing (checked) or registered now. */
async function importPrincipal(memory: Memory, tenant: string, trust: ImportTrust, id: string | undefined): Promise<Principal> {
  const def = defaultPrincipal(trust);
  const want = id ?? def.id;
  const existing = (await memory.listPrincipals({ tenant })).find((p) => p.id === want);
  if (existing) {
    if (!IMPORT_KINDS.includes(existing.kind)) {
      throw new MemauthError(
        'INVALID_ARGUMENT',
        `import: principal ${want} is of kind ${existing.kind}; imported text is never the statement of a principal of kind ${existing.kind} — use an external or agent principal`,
        { principal: want, kind: existing.kind },
      );
    }
    if (!atLeast(existing.maxAuthority, trust)) {
      throw new MemauthError(
        'AUTHORITY_EXCEEDS_PRINCIPAL',
        `import: principal ${want} can write at most ${existing.maxAuthority}, not ${trust}; pass --trust ${existing.maxAuthority} or another principal`,
        { principal: want, ceiling: existing.maxAuthority, requested: trust },
      );
    }
    return existing;
  }
  const kind = id === undefined ? def.kind : trust === 'model_inferred' ? 'agent' : 'external';
  return memory.registerPrincipal({ tenant, id: want, kind, domain: 'import', maxAuthority: KIND_CEILING[kind] });
}

/** A date from the file as ISO-8601, or a warning why it is not used. */
function isoOrWhy(s: string | undefined, now: Date, what: string): { iso?: string; why?: string } {
  if (s === undefined) return {};
  const t = Date.parse(s);
  if (Number.isNaN(t)) return { why: `${what} ${JSON.stringify(s)} is not a date; not used` };
  if (what === 'created_at' && t > now.getTime()) return { why: `${what} ${s} is in the future; not used` };
  return { iso: new Date(t).toISOString() };
}

/**
 * Import memories from another memory system into memauth (docs/design.md § Principals and origin, § Memory record):
 * the MCP reference memory server's JSONL knowledge graph (`mcp-memory`) or a mem0 export (`mem0`).
 *
 * Every item becomes one record written by an import principal whose ceiling is `trust` —
 * `external_untrusted` by default, `model_inferred` at most: an imported memory's origin is
 * unknown to memauth, and neither format records who stated it. The record's source is
 * `import:<format>:<file base name>#<item ref>` (a mem0 id; an MCP entity or relation), its
 * `sourceAt` the item's `created_at` when present and valid, its expiry mem0's `expiration_date`
 * (an already expired item is skipped), its typed claims an MCP relation whose type is a claim
 * field, or a mem0 memory's `metadata.claims` (invalid claims are dropped with a warning; the
 * claims have the import principal's authority, so they never supply a value on their own).
 * Records are written outside any session.
 *
 * An item whose source and text are already in the scope (an earlier import of the same file,
 * or a repeat within it) is a duplicate and is not written again; one that was deleted from the
 * store is not brought back (`deleted_in_store`). A bad line or item is skipped and reported
 * with its line number (JSONL) or position (JSON); with `strict` nothing is written.
 *
 * @returns an {@link ImportReport} with counts (read, imported, duplicates, skipped by reason),
 *   the problems, imported records per authority, and warnings.
 * @throws MemauthError `INVALID_ARGUMENT` (unknown format, unreadable or malformed file, a bad
 *   item under `strict` — `details.problems` lists them, a user/system/tool principal),
 *   `AUTHORITY_EXCEEDS_PRINCIPAL` (an existing principal below `trust`), `TENANT_REQUIRED`,
 *   `SCOPE_REQUIRED`.
 *
 * @example
 * ```ts
 * import { importMemories, openMemory } from 'memauth';
 * const mem = await openMemory({ path: 'agent.db' });
 * const report = await importMemories(mem, { tenant: 'acme', scope: 'imported', format: 'mcp-memory', file: 'memory.jsonl' });
 * report.imported; // records written, each external_untrusted, source import:mcp-memory:memory.jsonl#…
 * ```
 */
export async function importMemories(memory: Memory, options: ImportOptions): Promise<ImportReport> {
  const { tenant, scope, format, file } = options;
  const trust = checkedTrust(options);
  const source = sourceOf(format, file);
  const parsed = PARSERS[format](readText(options));
  if (options.strict && parsed.problems.length > 0) throw strictRefusal(parsed.problems, file);
  const principal = await importPrincipal(memory, tenant, trust, options.principal);
  const prefix = `${source}#`;
  const run: ImportRun = {
    memory,
    options,
    trust,
    principal,
    prefix,
    seen: await importedBefore(memory, tenant, scope, prefix),
    contentKey: await memory.driver.tenantContentKey(tenant),
    now: new Date(),
    problems: [...parsed.problems],
    warnings: [],
    moreWarnings: 0,
    authorities: {},
    imported: 0,
    duplicates: 0,
  };
  const total = parsed.items.length;
  for (const [n, item] of parsed.items.entries()) {
    await importItem(run, item);
    options.onProgress?.(n + 1, total);
  }
  return finish(run, source, total + parsed.problems.length);
}

/** @throws MemauthError `TENANT_REQUIRED`, `SCOPE_REQUIRED`, `INVALID_ARGUMENT` (unknown format, a trust above model_inferred). @returns the trust. */
function checkedTrust(options: ImportOptions): ImportTrust {
  const { tenant, scope, format } = options;
  if (typeof tenant !== 'string' || tenant === '') throw new MemauthError('TENANT_REQUIRED', 'import: a tenant is required', { field: 'tenant' });
  if (typeof scope !== 'string' || scope === '') throw new MemauthError('SCOPE_REQUIRED', 'import: a scope is required', { field: 'scope' });
  if (!(IMPORT_FORMATS as readonly string[]).includes(format))
    throw new MemauthError('INVALID_ARGUMENT', `import: unknown format ${JSON.stringify(format)}; known: ${IMPORT_FORMATS.join(', ')}`, { field: 'format' });
  const trust: ImportTrust = options.trust ?? 'external_untrusted';
  if (!(IMPORT_TRUST as readonly string[]).includes(trust)) {
    throw new MemauthError('INVALID_ARGUMENT', `import: --trust must be one of ${IMPORT_TRUST.join(', ')}; imported memories are never trusted higher`, { field: 'trust' });
  }
  return trust;
}

/** The file's text (`options.text` when given). @throws MemauthError `INVALID_ARGUMENT` when the file cannot be read. */
function readText(options: ImportOptions): string {
  if (options.text !== undefined) return options.text;
  try {
    return readFileSync(options.file, 'utf8');
  } catch (e) {
    throw new MemauthError('INVALID_ARGUMENT', `import: cannot read ${options.file}: ${(e as Error).message}`, { field: 'file', file: options.file });
  }
}

/** `import:<format>:<file base name>`; a source is a reference (no white space or invisible characters): those are percent-encoded. */
function sourceOf(format: ImportFormat, file: string): string {
  return `import:${format}:${basename(file).replace(/[\s\p{C}]/gu, (c) => [...new TextEncoder().encode(c)].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''))}`;
}

/** The error of a `strict` import of a file with invalid items: nothing is imported. */
function strictRefusal(problems: readonly ImportProblem[], file: string): MemauthError {
  const first = problems[0] as ImportProblem;
  const where = first.line !== null ? `line ${first.line}` : `item ${first.index ?? '?'}`;
  return new MemauthError('INVALID_ARGUMENT', `import: ${problems.length} invalid item(s) in ${basename(file)}, first at ${where}: ${first.reason} (${first.detail}); nothing was imported`, {
    field: 'file',
    problems: problems.slice(0, 100),
  });
}

/** What this file already put in the scope: source + content hash -> still there (not deleted)? */
async function importedBefore(memory: Memory, tenant: string, scope: string, prefix: string): Promise<Map<string, boolean>> {
  const seen = new Map<string, boolean>();
  for (let offset = 0; ; offset += 1000) {
    const page = await memory.list({ tenant, scope, limit: 1000, offset, includeDeleted: true });
    for (const r of page) if (r.origin.sourceRef.startsWith(prefix)) seen.set(`${r.origin.sourceRef}\u0000${r.contentHash}`, r.status !== 'deleted');
    if (page.length < 1000) break;
  }
  return seen;
}

/** The state of one import while its items are written. */
interface ImportRun {
  readonly memory: Memory;
  readonly options: ImportOptions;
  readonly trust: ImportTrust;
  readonly principal: Principal;
  /** `<source>#`: every item's source starts with it */
  readonly prefix: string;
  readonly seen: Map<string, boolean>;
  contentKey: Awaited<ReturnType<Memory['driver']['tenantContentKey']>>;
  readonly now: Date;
  readonly problems: ImportProblem[];
  readonly warnings: string[];
  moreWarnings: number;
  readonly authorities: Partial<Record<Authority, number>>;
  imported: number;
  duplicates: number;
}

function warn(run: ImportRun, w: string): void {
  if (run.warnings.length < MAX_WARNINGS) run.warnings.push(w);
  else run.moreWarnings++;
}

function skip(run: ImportRun, item: ImportItem, reason: SkipReason, detail: string): void {
  run.problems.push({ line: item.line, index: item.index, ref: item.ref, reason, detail });
}

/** One item: a duplicate, a deleted one not brought back, an expired one skipped, or written. */
async function importItem(run: ImportRun, item: ImportItem): Promise<void> {
  const sourceRef = `${run.prefix}${item.ref}`;
  const where = item.line !== null ? `line ${item.line}` : `item ${item.index ?? '?'}`;
  const claims = importClaims(run, item, where);
  // records carry a keyed content hash (or, written before keyed hashes, a plain SHA-256) of their text and claims;
  // an item with claims imported before claims were read has the hash of its text alone
  const seenAs = (body: string): boolean | undefined => run.seen.get(`${sourceRef}\u0000${contentHashOf(body, run.contentKey)}`) ?? run.seen.get(`${sourceRef}\u0000${sha256Hex(body)}`);
  const already = seenAs(hashedBody(item.content, claims)) ?? (claims.length > 0 ? seenAs(item.content) : undefined);
  if (already === true) {
    run.duplicates++;
    return;
  }
  if (already === false) return skip(run, item, 'deleted_in_store', 'this item was imported before and deleted since; not brought back');
  const created = isoOrWhy(item.createdAt, run.now, 'created_at');
  if (created.why) warn(run, `${where}: ${created.why}`);
  const expires = isoOrWhy(item.expiresAt, run.now, 'expiration_date');
  if (expires.why) warn(run, `${where}: ${expires.why}`);
  if (expires.iso !== undefined && expires.iso <= run.now.toISOString()) return skip(run, item, 'expired', `expired ${expires.iso}`);
  await writeItem(run, { ...item, claims }, sourceRef, where, created.iso, expires.iso);
}

/** An item's claims if they are valid; invalid ones are dropped with a warning and the text is still imported. */
function importClaims(run: ImportRun, item: ImportItem, where: string): Claim[] {
  if (item.claims === undefined || item.claims.length === 0) return [];
  try {
    return checkClaims(item.claims, 'import');
  } catch (e) {
    if (!isMemauthError(e, 'CLAIM_INVALID')) throw e;
    warn(run, `${where}: claims not imported (${e.message}); the text is`);
    return [];
  }
}

/** Write one item as a record; a refusal skips it (or, under `strict`, stops the import). */
async function writeItem(run: ImportRun, item: ImportItem, sourceRef: string, where: string, sourceAt: string | undefined, expiresAt: string | undefined): Promise<void> {
  const { memory, options } = run;
  const { tenant, scope } = options;
  try {
    const { record } = await memory.write({
      tenant,
      scope,
      principal: run.principal.id,
      content: item.content,
      source: sourceRef,
      authority: run.trust,
      ...(item.claims !== undefined && item.claims.length > 0 ? { claims: [...item.claims] } : {}),
      ...(sourceAt !== undefined ? { sourceAt } : {}),
      ...(expiresAt !== undefined ? { expiresAt } : {}),
      reason: `import ${options.format} ${basename(options.file)}`.slice(0, 1000),
    });
    run.seen.set(`${sourceRef}\u0000${record.contentHash}`, true);
    run.contentKey ??= await memory.driver.tenantContentKey(tenant);
    run.imported++;
    run.authorities[record.origin.authority] = (run.authorities[record.origin.authority] ?? 0) + 1;
  } catch (e) {
    // the environment failed (database unavailable, locked, corrupt, closed): stop, do not skip every item that follows
    if (!isMemauthError(e) || ERROR_TABLE[e.code].exit === EXIT.UNEXPECTED) throw e;
    if (options.strict) throw new MemauthError(e.code, `import: ${where} refused after ${run.imported} imported: ${e.message}`, { ...e.details, imported: run.imported });
    skip(run, item, 'write_refused', `${e.code}: ${e.message}`);
  }
}

/** The report of a finished import, with the warning about a policy that rated nothing model_inferred. */
function finish(run: ImportRun, source: string, read: number): ImportReport {
  const { memory, options, trust, principal, prefix, imported, authorities, warnings, problems } = run;
  if (trust === 'model_inferred' && imported > 0 && (authorities.model_inferred ?? 0) === 0) {
    const rated = originAuthority(memory.policy, `${prefix}x`, principal);
    warn(
      run,
      `the policy rates ${prefix}… sources as ${rated}, so nothing was imported at model_inferred; add a source rule {"match": "import:*", "authority": "model_inferred"} to the policy to allow it`,
    );
  }
  if (run.moreWarnings > 0) warnings.push(`… and ${run.moreWarnings} more warnings`);
  const skippedByReason: Partial<Record<SkipReason, number>> = {};
  for (const p of problems) skippedByReason[p.reason] = (skippedByReason[p.reason] ?? 0) + 1;
  problems.sort((a, b) => (a.line ?? a.index ?? 0) - (b.line ?? b.index ?? 0));
  return {
    format: options.format,
    file: options.file,
    source,
    tenant: options.tenant,
    scope: options.scope,
    principal: principal.id,
    trust,
    read,
    imported,
    duplicates: run.duplicates,
    skipped: problems.length,
    skippedByReason,
    problems,
    authorities,
    warnings,
  };
}
