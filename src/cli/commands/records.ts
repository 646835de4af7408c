import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { AUTHORITIES } from '../../core/authority.js';
import { PRINCIPAL_KINDS, TRANSFORMS } from '../../core/types.js';
import { checkpointKeyWarning } from '../../api/open.js';
import { TokenService } from '../../server/tokens.js';
import { type RunState, act, commaList, openCliMemory, positiveInt, readContent, requireTenant, withMemory } from '../context.js';
import { formatCorroboration, formatDeleted, formatHits, formatLineageDot, formatLineageTree, formatPrincipals, formatRecord, formatRecords, formatWrite } from '../format.js';

/**
 * Register the store commands: `init`, `principal add|list`, `write`, `derive`, `get`, `search`,
 * `list`, `corroborate`, `delete`, `lineage`.
 */
export function registerRecordCommands(program: Command, state: RunState): void {
  program
    .command('init')
    .description('create the database (SQLite file and its Ed25519 checkpoint key, or the PostgreSQL schema) and the server\'s admin token (printed once); print where')
    .action(
      act(state, async (ctx) => {
        if (ctx.store.kind === 'postgres') {
          const notices: string[] = [];
          const mem = await openCliMemory(ctx, true, (line) => notices.push(line));
          let pgInfo: { database: string; kind: 'postgres'; serverVersion: string | null; vector: unknown; policyVersion: string; policyName: string; adminToken: string | null };
          try {
            const driver = mem.driver as unknown as { capabilities?: { vector: unknown; serverVersion: string } };
            const admin = await new TokenService(mem.driver).ensureAdmin();
            pgInfo = { database: ctx.db, kind: 'postgres', serverVersion: driver.capabilities?.serverVersion ?? null, vector: driver.capabilities?.vector ?? null, policyVersion: mem.policy.version, policyName: mem.policy.document.name, adminToken: admin?.token ?? null };
          } finally {
            await mem.close();
          }
          ctx.emit(pgInfo, () =>
            [
              `ready ${pgInfo.database} (PostgreSQL ${pgInfo.serverVersion ?? '?'}; schema created or up to date)`,
              ...notices.map((n) => `note             ${n}`),
              `checkpoint key   ${process.env.MEMAUTH_CHECKPOINT_KEY ?? '(none: no checkpoints are signed; set MEMAUTH_CHECKPOINT_KEY=FILE, the same file on every server)'}`,
              `policy           ${pgInfo.policyName} ${pgInfo.policyVersion}`,
              ...(pgInfo.adminToken !== null ? [`admin token      ${pgInfo.adminToken} (for memauth serve; shown once, only its hash is stored)`] : []),
              'next: memauth --database URL --tenant T principal add <id> --kind user --domain D',
            ].join('\n'),
          );
          return;
        }
        const existed = ctx.db !== ':memory:' && existsSync(ctx.db);
        const keyFile = process.env.MEMAUTH_CHECKPOINT_KEY !== undefined && process.env.MEMAUTH_CHECKPOINT_KEY !== '' ? process.env.MEMAUTH_CHECKPOINT_KEY : undefined;
        const keyWarning = checkpointKeyWarning(ctx.db, keyFile);
        if (keyWarning !== null) process.stderr.write(`${keyWarning}\n`);
        const info = await withMemory(
          ctx,
          async (mem) => {
            // the HTTP API's admin token: created once, shown once, only its hash stored (src/server/tokens.ts)
            const admin = await new TokenService(mem.driver).ensureAdmin();
            return { created: !existed, db: ctx.db === ':memory:' ? ':memory:' : resolve(ctx.db), key: ctx.db === ':memory:' ? null : resolve(keyFile ?? `${ctx.db}.key`), checkpoints: ctx.db === ':memory:' ? null : resolve(`${ctx.db}.checkpoints`), policyVersion: mem.policy.version, policyName: mem.policy.document.name, adminToken: admin?.token ?? null };
          },
          true,
        );
        ctx.emit(info, () =>
          [
            `${info.created ? 'created' : 'already initialised'} ${info.db}`,
            `checkpoint key   ${info.key ?? '(in memory)'} (keep it secret; mode 0600)`,
            `checkpoints      ${info.checkpoints ?? '(in memory)'}`,
            `policy           ${info.policyName} ${info.policyVersion}`,
            ...(info.adminToken !== null ? [`admin token      ${info.adminToken} (for memauth serve; shown once, only its hash is stored)`] : []),
            'next: memauth --tenant T principal add <id> --kind user --domain D',
          ].join('\n'),
        );
      }),
    );

  const principal = program.command('principal').description('manage principals (authenticated writers)');
  principal
    .command('add <id>')
    .description('register a principal; its kind fixes its highest possible authority')
    .addOption(new Option('--kind <kind>', 'principal kind').choices([...PRINCIPAL_KINDS]).makeOptionMandatory())
    .requiredOption('--domain <domain>', 'independence domain (administrative domain / upstream provider)')
    .addOption(new Option('--max-authority <authority>', "ceiling (default: the kind's ceiling)").choices([...AUTHORITIES]))
    .action(
      act(state, async (ctx, id: string, o: { kind: (typeof PRINCIPAL_KINDS)[number]; domain: string; maxAuthority?: (typeof AUTHORITIES)[number] }) => {
        const tenant = requireTenant(ctx);
        const p = await withMemory(ctx, (mem) => mem.registerPrincipal({ tenant, id, kind: o.kind, domain: o.domain, ...(o.maxAuthority !== undefined ? { maxAuthority: o.maxAuthority } : {}) }));
        ctx.emit(p, () => `added principal ${p.id}: kind ${p.kind}, max authority ${p.maxAuthority}, domain ${p.domain} (tenant ${p.tenant})`);
      }),
    );
  principal
    .command('list')
    .description("list the tenant's principals")
    .action(
      act(state, async (ctx) => {
        const tenant = requireTenant(ctx);
        const ps = await withMemory(ctx, (mem) => mem.listPrincipals({ tenant }));
        ctx.emit(ps, () => formatPrincipals(ps));
      }),
    );

  program
    .command('write')
    .description('write a memory; its origin authority is decided by the store from principal and source')
    .requiredOption('--scope <scope>', 'scope of the record')
    .requiredOption('--principal <id>', 'the writing principal')
    .option('--content <text>', 'the text (else --file, else stdin)')
    .option('--file <path>', 'read the text from a file')
    .option('--source <ref>', 'where the text came from (URL, message id, file path…); default: the principal itself')
    .option('--source-at <iso>', 'when the source said it (ISO-8601)')
    .option('--session <id>', 'session the write happens in')
    .option('--expires-at <iso>', 'retention: when the record expires (ISO-8601)')
    .option('--reason <text>', 'write reason, kept in the audit log')
    .action(
      act(state, async (ctx, o: { scope: string; principal: string; content?: string; file?: string; source?: string; sourceAt?: string; session?: string; expiresAt?: string; reason?: string }) => {
        const tenant = requireTenant(ctx);
        const content = await readContent(o);
        const w = await withMemory(ctx, (mem) =>
          mem.write({
            tenant,
            scope: o.scope,
            principal: o.principal,
            content,
            ...(o.source !== undefined ? { source: o.source } : {}),
            ...(o.sourceAt !== undefined ? { sourceAt: o.sourceAt } : {}),
            ...(o.session !== undefined ? { session: o.session } : {}),
            ...(o.expiresAt !== undefined ? { expiresAt: o.expiresAt } : {}),
            ...(o.reason !== undefined ? { reason: o.reason } : {}),
          }),
        );
        ctx.emit(w, () => formatWrite(w));
      }),
    );

  program
    .command('derive')
    .description('derive a record (summary, extraction, rewrite…) from others; taint is the minimum over every input')
    .option('--from <ids...>', 'declared input record ids (repeatable, or comma-separated)', commaList)
    .addOption(new Option('--transform <t>', 'derivation transform').choices([...TRANSFORMS]).makeOptionMandatory())
    .requiredOption('--principal <id>', 'the deriving principal')
    .option('--content <text>', 'the derived text (else --file, else stdin)')
    .option('--file <path>', 'read the derived text from a file')
    .option('--scope <scope>', "scope (default: the first input's scope; required with no inputs)")
    .option('--session <id>', 'session: every record read in it is an input unless --narrow-inputs is proven')
    .option('--narrow-inputs', 'claim the text was extracted verbatim from the declared inputs only (checked)')
    .option('--source <ref>', 'source reference of the derivation')
    .option('--expires-at <iso>', 'retention: when the record expires (ISO-8601)')
    .option('--reason <text>', 'reason, kept in the audit log')
    .action(
      act(state, async (ctx, o: { from?: string[]; transform: (typeof TRANSFORMS)[number]; principal: string; content?: string; file?: string; scope?: string; session?: string; narrowInputs?: boolean; source?: string; expiresAt?: string; reason?: string }) => {
        const tenant = requireTenant(ctx);
        const content = await readContent(o);
        const r = await withMemory(ctx, (mem) =>
          mem.derive({
            tenant,
            from: o.from ?? [],
            transform: o.transform,
            principal: o.principal,
            content,
            ...(o.scope !== undefined ? { scope: o.scope } : {}),
            ...(o.session !== undefined ? { session: o.session } : {}),
            ...(o.narrowInputs === true ? { narrowInputs: true } : {}),
            ...(o.source !== undefined ? { source: o.source } : {}),
            ...(o.expiresAt !== undefined ? { expiresAt: o.expiresAt } : {}),
            ...(o.reason !== undefined ? { reason: o.reason } : {}),
          }),
        );
        ctx.emit(r, () => formatRecord(r));
      }),
    );

  program
    .command('get <id>')
    .description('show one record with its action authority; with --session it counts as read there')
    .option('--session <id>', 'mark the record as read in this session')
    .action(
      act(state, async (ctx, id: string, o: { session?: string }) => {
        const tenant = requireTenant(ctx);
        const v = await withMemory(ctx, (mem) => mem.get({ tenant, id, ...(o.session !== undefined ? { session: o.session } : {}) }));
        ctx.emit(v, () => formatRecord(v));
      }),
    );

  program
    .command('search <query>')
    .description('full-text search in one scope; with --session the hits count as read there')
    .requiredOption('--scope <scope>', 'scope to search')
    .option('--limit <n>', 'at most n hits (default 10)', positiveInt)
    .option('--session <id>', 'mark hits as read in this session')
    .action(
      act(state, async (ctx, query: string, o: { scope: string; limit?: number; session?: string }) => {
        const tenant = requireTenant(ctx);
        const hits = await withMemory(ctx, (mem) => mem.search({ tenant, scope: o.scope, query, ...(o.limit !== undefined ? { limit: o.limit } : {}), ...(o.session !== undefined ? { session: o.session } : {}) }));
        ctx.emit(hits, () => formatHits(hits));
      }),
    );

  program
    .command('list')
    .description('list records, newest first')
    .option('--scope <scope>', 'only this scope')
    .option('--include-deleted', 'include deleted records (content erased)')
    .option('--limit <n>', 'at most n records (default 100)', positiveInt)
    .action(
      act(state, async (ctx, o: { scope?: string; includeDeleted?: boolean; limit?: number }) => {
        const tenant = requireTenant(ctx);
        const rs = await withMemory(ctx, (mem) => mem.list({ tenant, ...(o.scope !== undefined ? { scope: o.scope } : {}), ...(o.includeDeleted === true ? { includeDeleted: true } : {}), ...(o.limit !== undefined ? { limit: o.limit } : {}) }));
        ctx.emit(rs, () => formatRecords(rs));
      }),
    );

  program
    .command('corroborate <recordId>')
    .description('record that a principal corroborates a record; says whether it counts')
    .requiredOption('--principal <id>', 'the corroborating principal')
    .requiredOption('--evidence <ref>', 'evidence: a source ref, or memory:<id> of its own record')
    .action(
      act(state, async (ctx, recordId: string, o: { principal: string; evidence: string }) => {
        const tenant = requireTenant(ctx);
        const c = await withMemory(ctx, (mem) => mem.corroborate({ tenant, recordId, principal: o.principal, evidence: o.evidence }));
        ctx.emit(c, () => formatCorroboration(c));
      }),
    );

  program
    .command('delete <id>')
    .description('delete a record: erase its content and index entries, keep its hash and the audit chain')
    .option('--principal <id>', 'who deletes')
    .option('--reason <text>', 'why (kept in the audit log)')
    .action(
      act(state, async (ctx, id: string, o: { principal?: string; reason?: string }) => {
        const tenant = requireTenant(ctx);
        const r = await withMemory(ctx, (mem) => mem.delete({ tenant, id, ...(o.principal !== undefined ? { principal: o.principal } : {}), ...(o.reason !== undefined ? { reason: o.reason } : {}) }));
        ctx.emit(r, () => formatDeleted(r));
      }),
    );

  program
    .command('lineage <id>')
    .description('show the lineage of a record down to its roots (tree, or Graphviz DOT)')
    .addOption(new Option('--format <f>', 'output format').choices(['tree', 'dot']).default('tree'))
    .action(
      act(state, async (ctx, id: string, o: { format: 'tree' | 'dot' }) => {
        const tenant = requireTenant(ctx);
        const g = await withMemory(ctx, (mem) => mem.lineageGraph({ tenant, id }));
        ctx.emit(g, () => (o.format === 'dot' ? formatLineageDot(g, id) : formatLineageTree(g, id)));
      }),
    );
}
