/**
 * Command table of the store commands and the `Memory` method each calls: `principal add`
 * (`registerPrincipal`), `principal list` (`listPrincipals`), `write`, `derive`, `supersede`, `get`, `search`,
 * `list`, `corroborate`, `delete`, `lineage` (`lineageGraph`).
 */
import { AUTHORITIES } from '../../core/authority.js';
import { MemauthError } from '../../core/errors.js';
import { PRINCIPAL_KINDS, TRANSFORMS } from '../../core/types.js';
import { type Ctx, commaList, positiveInt, readContent, requireTenant, withListing, withMemory } from '../context.js';
import { formatCorroboration, formatDeleted, formatHits, formatLineageDot, formatLineageTree, formatPrincipals, formatRecord, formatRecords, formatWrite } from '../format.js';
import { type AnyCommand, command, group } from '../spec.js';
import type { SearchMode } from '../../api/search.js';
import type { Claim } from '../../core/types.js';
import { InvalidArgumentError } from 'commander';

/** Commander parser for `--mode`. */
function searchMode(value: string): SearchMode {
  if (value !== 'lexical' && value !== 'semantic' && value !== 'hybrid') throw new InvalidArgumentError('must be lexical, semantic or hybrid');
  return value;
}

/**
 * Commander parser for a repeatable `--claim subject:field=value` (docs/design.md § Claims and
 * intent): the subject runs to the first `:` that is followed by a field (a lowercase identifier)
 * and `=`; the value is everything after that `=`. The store checks the bounds (`CLAIM_INVALID`).
 */
function claimOption(value: string, previous: Claim[] | undefined): Claim[] {
  const m = /^(.+?):([a-z][a-z0-9_]*)=(.+)$/s.exec(value);
  if (m === null) throw new InvalidArgumentError('must be subject:field=value, e.g. "Acme Supplies:payee_account=ACME-AP-001" (field: a lowercase identifier)');
  return [...(previous ?? []), { subject: m[1] as string, field: m[2] as string, value: m[3] as string }];
}

const CLAIM_FLAG = {
  flags: '--claim <subject:field=value>',
  description: "a typed claim the record asserts, e.g. 'Acme Supplies:payee_account=ACME-AP-001' (repeatable); it has the record's authority",
  parse: claimOption,
};

/** `{key: value}` when the value is given, else `{}` (optional fields stay absent). */
const given = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } => (value !== undefined ? ({ [key]: value } as { [P in K]?: V }) : {});

interface PrincipalFlags {
  kind: (typeof PRINCIPAL_KINDS)[number];
  domain: string;
  maxAuthority?: (typeof AUTHORITIES)[number];
  ifNotExists?: boolean;
}

/**
 * `principal add <id>` → `Memory.ensurePrincipal`. An existing principal with the same kind, domain
 * and ceiling is `PRINCIPAL_EXISTS` (exit 2) unless `--if-not-exists` (exit 0, nothing changed).
 */
async function principalAdd(ctx: Ctx, o: PrincipalFlags, id: string): Promise<void> {
  const tenant = requireTenant(ctx);
  const { principal: p, created } = await withMemory(ctx, (mem) => mem.ensurePrincipal({ tenant, id, kind: o.kind, domain: o.domain, ...given('maxAuthority', o.maxAuthority) }));
  if (!created && o.ifNotExists !== true)
    throw new MemauthError(
      'PRINCIPAL_EXISTS',
      `principal ${JSON.stringify(id)} already exists in tenant ${JSON.stringify(tenant)} with this kind, domain and ceiling; pass --if-not-exists to accept that`,
      {
        tenant,
        principal: id,
      },
    );
  ctx.emit(
    { ...p, created },
    () => `${created ? 'added' : 'already registered (unchanged):'} principal ${p.id}: kind ${p.kind}, max authority ${p.maxAuthority}, domain ${p.domain} (tenant ${p.tenant})`,
  );
}

/** `principal list` → `Memory.listPrincipals`. */
async function principalList(ctx: Ctx): Promise<void> {
  const tenant = requireTenant(ctx);
  const ps = await withListing(ctx, tenant, (mem) => mem.listPrincipals({ tenant }));
  ctx.emit(ps, () => formatPrincipals(ps));
}

interface WriteFlags {
  scope: string;
  principal: string;
  content?: string;
  file?: string;
  source?: string;
  sourceAt?: string;
  session?: string;
  expiresAt?: string;
  reason?: string;
  claim?: Claim[];
}

/** `write` → `Memory.write`. */
async function writeCommand(ctx: Ctx, o: WriteFlags): Promise<void> {
  const tenant = requireTenant(ctx);
  const content = await readContent(o);
  const w = await withMemory(ctx, (mem) =>
    mem.write({
      tenant,
      scope: o.scope,
      principal: o.principal,
      content,
      ...given('source', o.source),
      ...given('sourceAt', o.sourceAt),
      ...given('session', o.session),
      ...given('expiresAt', o.expiresAt),
      ...given('reason', o.reason),
      ...given('claims', o.claim),
    }),
  );
  ctx.emit(w, () => formatWrite(w));
}

interface DeriveFlags {
  from?: string[];
  transform: (typeof TRANSFORMS)[number];
  principal: string;
  content?: string;
  file?: string;
  scope?: string;
  session?: string;
  narrowInputs?: boolean;
  source?: string;
  expiresAt?: string;
  reason?: string;
  claim?: Claim[];
}

/** `derive` → `Memory.derive`. */
async function deriveCommand(ctx: Ctx, o: DeriveFlags): Promise<void> {
  const tenant = requireTenant(ctx);
  const content = await readContent(o);
  const r = await withMemory(ctx, (mem) =>
    mem.derive({
      tenant,
      from: o.from ?? [],
      transform: o.transform,
      principal: o.principal,
      content,
      ...given('scope', o.scope),
      ...given('session', o.session),
      ...(o.narrowInputs === true ? { narrowInputs: true } : {}),
      ...given('source', o.source),
      ...given('expiresAt', o.expiresAt),
      ...given('reason', o.reason),
      ...given('claims', o.claim),
    }),
  );
  ctx.emit(r, () => formatRecord(r));
}

/** `supersede <id>` → `Memory.supersede`. */
async function supersedeCommand(
  ctx: Ctx,
  o: { principal: string; content?: string; file?: string; reason: string; source?: string; session?: string; expiresAt?: string; claim?: Claim[] },
  id: string,
): Promise<void> {
  const tenant = requireTenant(ctx);
  const content = await readContent(o);
  const r = await withMemory(ctx, (mem) =>
    mem.supersede({
      tenant,
      id,
      principal: o.principal,
      content,
      reason: o.reason,
      ...given('source', o.source),
      ...given('session', o.session),
      ...given('expiresAt', o.expiresAt),
      ...given('claims', o.claim),
    }),
  );
  ctx.emit(r, () => `${formatRecord(r.record)}\n${r.conflict ? `CONFLICT: competes with ${r.current.filter((x) => x !== r.record.id).join(', ')} (it does not outrank them)` : 'current version'}`);
}

/** `get <id>` → `Memory.get`. */
async function getCommand(ctx: Ctx, o: { session?: string; exact?: boolean }, id: string): Promise<void> {
  const tenant = requireTenant(ctx);
  const v = await withMemory(ctx, (mem) => mem.get({ tenant, id, ...given('session', o.session), ...(o.exact === true ? { exact: true } : {}) }));
  ctx.emit(v, () => formatRecord(v));
}

/** `search <query>` → `Memory.search`. */
async function searchCommand(ctx: Ctx, o: { scope: string; limit?: number; session?: string; mode?: SearchMode }, query: string): Promise<void> {
  const tenant = requireTenant(ctx);
  const r = await withMemory(ctx, (mem) => mem.searchWithInfo({ tenant, scope: o.scope, query, ...given('limit', o.limit), ...given('session', o.session), ...given('mode', o.mode) }));
  ctx.emit(r, () => `mode ${r.mode} (${r.reason})\n${formatHits(r.hits)}`);
}

/** `list` → `Memory.list`. */
async function listCommand(ctx: Ctx, o: { scope?: string; includeDeleted?: boolean; allVersions?: boolean; limit?: number }): Promise<void> {
  const tenant = requireTenant(ctx);
  const flags = { ...(o.includeDeleted === true ? { includeDeleted: true } : {}), ...(o.allVersions === true ? { allVersions: true } : {}) };
  const rs = await withListing(ctx, tenant, (mem) => mem.list({ tenant, ...given('scope', o.scope), ...flags, ...given('limit', o.limit) }));
  ctx.emit(rs, () => formatRecords(rs));
}

/** `corroborate <recordId>` → `Memory.corroborate`. */
async function corroborateCommand(ctx: Ctx, o: { principal: string; evidence: string }, recordId: string): Promise<void> {
  const tenant = requireTenant(ctx);
  const c = await withMemory(ctx, (mem) => mem.corroborate({ tenant, recordId, principal: o.principal, evidence: o.evidence }));
  ctx.emit(c, () => formatCorroboration(c));
}

/** `delete <id>` → `Memory.delete`. */
async function deleteCommand(ctx: Ctx, o: { principal?: string; reason?: string }, id: string): Promise<void> {
  const tenant = requireTenant(ctx);
  const r = await withMemory(ctx, (mem) => mem.delete({ tenant, id, ...given('principal', o.principal), ...given('reason', o.reason) }));
  ctx.emit(r, () => formatDeleted(r));
}

/** `lineage <id>` → `Memory.lineageGraph`. */
async function lineageCommand(ctx: Ctx, o: { format: 'tree' | 'dot' }, id: string): Promise<void> {
  const tenant = requireTenant(ctx);
  const g = await withMemory(ctx, (mem) => mem.lineageGraph({ tenant, id }));
  ctx.emit(g, () => (o.format === 'dot' ? formatLineageDot(g, id) : formatLineageTree(g, id)));
}

/** The `principal` group and the record commands, in help order. */
export const recordCommands: readonly AnyCommand[] = [
  group('principal', 'manage principals (authenticated writers)'),
  command({
    name: 'principal add',
    arg: '<id>',
    description: 'register a principal; its kind fixes its highest possible authority',
    options: [
      { flags: '--kind <kind>', description: 'principal kind', choices: PRINCIPAL_KINDS, required: true },
      { flags: '--domain <domain>', description: 'independence domain (administrative domain / upstream provider)', required: true },
      { flags: '--max-authority <authority>', description: "ceiling (default: the kind's ceiling)", choices: AUTHORITIES },
      { flags: '--if-not-exists', description: 'exit 0 when the principal already exists with the same kind, domain and ceiling (it is never changed)' },
    ],
    handler: principalAdd,
  }),
  command({ name: 'principal list', description: "list the tenant's principals", handler: principalList }),
  command({
    name: 'write',
    description: 'write a memory; its origin authority is decided by the store from principal and source',
    options: [
      { flags: '--scope <scope>', description: 'scope of the record', required: true },
      { flags: '--principal <id>', description: 'the writing principal', required: true },
      { flags: '--content <text>', description: 'the text (else --file, else stdin)' },
      { flags: '--file <path>', description: 'read the text from a file' },
      { flags: '--source <ref>', description: 'where the text came from (URL, message id, file path…); default: the principal itself' },
      { flags: '--source-at <iso>', description: 'when the source said it (ISO-8601)' },
      { flags: '--session <id>', description: 'session the write happens in' },
      { flags: '--expires-at <iso>', description: 'retention: when the record expires (ISO-8601)' },
      { flags: '--reason <text>', description: 'write reason, kept in the audit log' },
      CLAIM_FLAG,
    ],
    handler: writeCommand,
  }),
  command({
    name: 'derive',
    description: 'derive a record (summary, extraction, rewrite…) from others; taint is the minimum over every input',
    options: [
      { flags: '--from <ids...>', description: 'declared input record ids (repeatable, or comma-separated)', parse: commaList },
      { flags: '--transform <t>', description: 'derivation transform', choices: TRANSFORMS, required: true },
      { flags: '--principal <id>', description: 'the deriving principal', required: true },
      { flags: '--content <text>', description: 'the derived text (else --file, else stdin)' },
      { flags: '--file <path>', description: 'read the derived text from a file' },
      { flags: '--scope <scope>', description: "scope (default: the first input's scope; required with no inputs)" },
      { flags: '--session <id>', description: 'session: every record read in it is an input unless --narrow-inputs is proven' },
      { flags: '--narrow-inputs', description: 'claim the text was extracted verbatim from the declared inputs only (checked)' },
      { flags: '--source <ref>', description: 'source reference of the derivation' },
      { flags: '--expires-at <iso>', description: 'retention: when the record expires (ISO-8601)' },
      { flags: '--reason <text>', description: 'reason, kept in the audit log' },
      { ...CLAIM_FLAG, description: 'a claim of a declared input the derived record restates, as subject:field=value (repeatable); a claim no input makes is CLAIM_NOT_IN_INPUTS' },
    ],
    handler: deriveCommand,
  }),
  command({
    name: 'supersede',
    arg: '<id>',
    description: 'write a new version of a record; below a current version it competes with it instead of replacing it',
    options: [
      { flags: '--principal <id>', description: 'the writing principal', required: true },
      { flags: '--content <text>', description: 'the new text (else --file, else stdin)' },
      { flags: '--file <path>', description: 'read the new text from a file' },
      { flags: '--reason <text>', description: 'why (kept in the audit log)', required: true },
      { flags: '--source <ref>', description: 'where the text came from; default: the principal itself' },
      { flags: '--session <id>', description: 'session the write happens in' },
      { flags: '--expires-at <iso>', description: 'retention: when the version expires (ISO-8601)' },
      { ...CLAIM_FLAG, description: "a typed claim the new version asserts, as subject:field=value (repeatable); it has the version's authority" },
    ],
    handler: supersedeCommand,
  }),
  command({
    name: 'get',
    arg: '<id>',
    description: 'show one record (the current version of its chain) with its action authority and versions; with --session it counts as read there',
    options: [
      { flags: '--session <id>', description: 'mark the record as read in this session' },
      { flags: '--exact', description: 'the record asked for, not the current version of its chain' },
    ],
    handler: getCommand,
  }),
  command({
    name: 'search',
    arg: '<query>',
    description: 'search one scope (lexical, semantic or hybrid); with --session the hits count as read there',
    options: [
      { flags: '--scope <scope>', description: 'scope to search', required: true },
      { flags: '--mode <mode>', description: 'lexical | semantic | hybrid (default hybrid with an embedder, else lexical)', parse: searchMode },
      { flags: '--limit <n>', description: 'at most n hits (default 10)', parse: positiveInt },
      { flags: '--session <id>', description: 'mark hits as read in this session' },
    ],
    handler: searchCommand,
  }),
  command({
    name: 'list',
    description: 'list records, newest first',
    options: [
      { flags: '--scope <scope>', description: 'only this scope' },
      { flags: '--include-deleted', description: 'include deleted records (content erased)' },
      { flags: '--all-versions', description: 'include versions that are no longer current' },
      { flags: '--limit <n>', description: 'at most n records (default 100)', parse: positiveInt },
    ],
    handler: listCommand,
  }),
  command({
    name: 'corroborate',
    arg: '<recordId>',
    description: 'record that a principal corroborates a record; says whether it counts',
    options: [
      { flags: '--principal <id>', description: 'the corroborating principal', required: true },
      { flags: '--evidence <ref>', description: 'evidence: a source ref, or memory:<id> of its own record', required: true },
    ],
    handler: corroborateCommand,
  }),
  command({
    name: 'delete',
    arg: '<id>',
    description: 'delete a record: erase its content and index entries, keep its hash and the audit chain',
    options: [
      { flags: '--principal <id>', description: 'who deletes' },
      { flags: '--reason <text>', description: 'why (kept in the audit log)' },
    ],
    handler: deleteCommand,
  }),
  command({
    name: 'lineage',
    arg: '<id>',
    description: 'show the lineage of a record down to its roots (tree, or Graphviz DOT)',
    options: [{ flags: '--format <f>', description: 'output format', choices: ['tree', 'dot'], default: 'tree' }],
    handler: lineageCommand,
  }),
];
