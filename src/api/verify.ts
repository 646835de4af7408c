/**
 * Audit verification (docs/design.md § Audit log): each tenant's hash chain, its signed checkpoints,
 * and every row that can grant authority or identity checked against the entry that recorded it.
 * The server runs it for a tenant's tokens (HTTP and MCP): each pass over the chain, the records
 * and the session logs yields to the event loop every few milliseconds (api/yielder.ts), so one
 * verification of a large store never holds every other request behind it.
 */
import { type AuditEntry, ChainVerifier, type ChainVerdict, type Checkpoint, checkpointSignatureValid, entryHash } from '../core/audit.js';
import { ADMIN_CHAIN, TOKEN_OPS, type TokenProblem, principalMatchesEntries, tokenVerdict } from '../core/identity.js';
import type { MemoryRecord, SessionRef } from '../core/types.js';
import type { StorageDriver } from '../store/driver.js';
import { corroborationMatchesEntry, recordMatchesEntry } from '../core/row-match.js';
import { auditEntriesAt } from './audit-entries.js';
import { SessionLogs } from './session-logs.js';
import { type SessionLogProblem, sessionLogProblems } from './verify-sessions.js';
import { yielder } from './yielder.js';

export type RecordProblem =
  | 'no_audit_entry'
  | 'row_differs_from_audit'
  | 'row_missing'
  | 'erase_missing'
  | 'erased_without_delete'
  | 'corroboration_not_in_audit'
  | 'confirmation_uses_differ_from_audit'
  // a record written in a session whose session read log no longer hashes to what its entry holds
  | 'session_log_differs_from_audit'
  // a session log entry that re-folding the log does not give, or a record above its session context (api/verify-sessions.ts)
  | SessionLogProblem
  // identity rows (core/identity.ts): id `principal:<id>` or the token id
  | 'principal_not_in_audit'
  | 'principal_row_missing'
  | `token_${TokenProblem}`
  | 'token_row_missing';
export type CheckpointProblem = 'bad_signature' | 'chain_shorter_than_checkpoint' | 'hash_differs_from_checkpoint';

/** Verification result for one tenant. */
export interface TenantAuditReport {
  readonly tenant: string;
  readonly ok: boolean;
  readonly chain: ChainVerdict;
  /** the newest checkpoint compared (from the database or kept outside it), if any. */
  readonly checkpoint: { readonly seq: number; readonly ok: boolean; readonly problem?: CheckpointProblem } | null;
  readonly records: { readonly checked: number; readonly bad: ReadonlyArray<{ readonly id: string; readonly problem: RecordProblem }> };
  /** human-readable summary naming the first problem. */
  readonly message: string;
}

export interface AuditReport {
  readonly ok: boolean;
  readonly tenants: readonly TenantAuditReport[];
}

/** Rows read per query: a page is read and decoded in one stretch, so it stays short (a few ms). */
const PAGE = 200;

/**
 * Verify each tenant's audit chain (docs/design.md § Audit log), its newest signed checkpoint (which
 * must be signed by `trustedPublicKey` when given: SPKI DER, base64), and
 * the store's rows against the chain: every record row must match the entry that created it,
 * every created record must still have a row, and erasures must match delete entries; every
 * principal row must match its `principal` registration and every token row its `token_*`
 * entries (admin tokens: the `(admin)` chain), and every registered principal or issued token
 * must still have its row.
 */
export async function verifyStore(driver: StorageDriver, tenant: string | undefined, external: readonly Checkpoint[], trustedPublicKey?: string): Promise<AuditReport> {
  const tenants = tenant !== undefined ? [tenant] : [...new Set([...(await driver.tenants()), ...external.map((c) => c.tenant)])].sort();
  const reports: TenantAuditReport[] = [];
  for (const t of tenants)
    reports.push(
      await verifyTenant(
        driver,
        t,
        external.filter((c) => c.tenant === t),
        trustedPublicKey,
      ),
    );
  return { ok: reports.every((r) => r.ok), tenants: reports };
}

/** What one pass over a tenant's chain found: the verdict, and the entries the rows are checked against. */
interface ChainRead {
  readonly chain: ChainVerdict;
  /** record id → seq of the write/derive entry that created it. */
  readonly created: Map<string, number>;
  /** ids of records a delete entry names. */
  readonly deleted: Set<string>;
  /** confirmation id → uses recorded by decide entries. */
  readonly uses: Map<string, number>;
  readonly corroborateEntries: Map<number, AuditEntry>;
  /**
   * the hash of each write/derive entry, by seq: the entries themselves are read again a page of
   * records at a time, and must hash to what the chain held (a store's entries would not fit in
   * memory together: about 2 KB each).
   */
  readonly hashes: Map<number, string>;
}

async function verifyTenant(driver: StorageDriver, tenant: string, external: readonly Checkpoint[], trustedPublicKey: string | undefined): Promise<TenantAuditReport> {
  const read = await readChain(driver, tenant);
  const chain = read.chain;
  const checkpoint = await checkpointVerdict(driver, tenant, external, trustedPublicKey, chain);
  const { checked, bad } = await rowProblems(driver, tenant, read);
  bad.push(...(await identityProblems(driver, tenant)));
  const ok = chain.ok && (checkpoint?.ok ?? true) && bad.length === 0;
  let message = `tenant ${tenant}: ${chain.entries} entries verified`;
  if (!chain.ok) message = `tenant ${tenant}: audit chain broken at entry ${chain.firstBadSeq} (${chain.problem})`;
  else if (checkpoint && !checkpoint.ok) message = `tenant ${tenant}: checkpoint at entry ${checkpoint.seq} fails (${checkpoint.problem})`;
  else if (bad[0])
    message = `tenant ${tenant}: ${/^(principal|token|session_log_entry)_/.test(bad[0].problem) ? 'row' : 'record'} ${bad[0].id}: ${bad[0].problem}${bad.length > 1 ? ` (+${bad.length - 1} more)` : ''}`;
  if (bad.some((b) => b.problem === 'token_no_audit_entry'))
    message += '; a token with no audit entry was inserted outside memauth or issued before tokens were audited (check memauth token list, then memauth token adopt)';
  return { tenant, ok, chain, checkpoint, records: { checked, bad }, message };
}

/** Verify the tenant's chain page by page up to its first bad entry, noting what rows are checked against. */
async function readChain(driver: StorageDriver, tenant: string): Promise<ChainRead> {
  const v = new ChainVerifier(tenant);
  const head = await driver.auditHead(tenant);
  const created = new Map<string, number>();
  const deleted = new Set<string>();
  const uses = new Map<string, number>();
  const corroborateEntries = new Map<number, AuditEntry>();
  const hashes = new Map<number, string>();
  const pause = yielder();
  for (let from = 1; head && from <= head.seq; from += PAGE) {
    const page = await driver.auditRange(tenant, from, from + PAGE - 1);
    let stop = false;
    for (const e of page) {
      await pause();
      if (!v.push(e)) {
        stop = true;
        break;
      }
      const p = e.payload as Record<string, unknown>;
      if ((e.op === 'write' || e.op === 'derive') && p.refused === undefined && typeof p.recordId === 'string') {
        created.set(p.recordId, e.seq);
        hashes.set(e.seq, e.hash);
      }
      if (e.op === 'delete' && typeof p.recordId === 'string') deleted.add(p.recordId);
      if (e.op === 'corroborate' && p.refused === undefined) corroborateEntries.set(e.seq, e);
      if (e.op === 'confirm' && p.refused === undefined) {
        const id = (p.confirmation as { id?: unknown } | undefined)?.id;
        if (typeof id === 'string' && !uses.has(id)) uses.set(id, 0);
      }
      if (e.op === 'decide' && typeof p.confirmationId === 'string') uses.set(p.confirmationId, (uses.get(p.confirmationId) ?? 0) + 1);
    }
    if (stop) break;
  }
  return { chain: v.verdict(), created, deleted, uses, corroborateEntries, hashes };
}

/** The newest checkpoint (external or stored) checked against its signature and the chain; null without one. */
async function checkpointVerdict(
  driver: StorageDriver,
  tenant: string,
  external: readonly Checkpoint[],
  trustedPublicKey: string | undefined,
  chain: ChainVerdict,
): Promise<TenantAuditReport['checkpoint']> {
  const dbCp = await driver.latestCheckpoint(tenant);
  const cps = [...external, ...(dbCp ? [dbCp] : [])].sort((a, b) => b.seq - a.seq);
  const newest = cps[0];
  if (!newest) return null;
  let problem: CheckpointProblem | undefined;
  // signed by the store's own key when it is known: a checkpoint anyone can sign proves nothing
  if (!checkpointSignatureValid(newest, trustedPublicKey)) problem = 'bad_signature';
  else if (!chain.ok) problem = undefined;
  else if ((chain.head?.seq ?? 0) < newest.seq) problem = 'chain_shorter_than_checkpoint';
  else {
    const [e] = await driver.auditRange(tenant, newest.seq, newest.seq);
    if (!e || e.hash !== newest.hash) problem = 'hash_differs_from_checkpoint';
  }
  return problem ? { seq: newest.seq, ok: false, problem } : { seq: newest.seq, ok: true };
}

/** Record, corroboration and confirmation-use rows that do not match the chain, and records whose row is missing. */
async function rowProblems(driver: StorageDriver, tenant: string, read: ChainRead): Promise<{ checked: number; bad: Array<{ id: string; problem: RecordProblem }> }> {
  const { chain, created, deleted, uses, corroborateEntries } = read;
  const bad: Array<{ id: string; problem: RecordProblem }> = [];
  let checked = 0;
  const seen = new Set<string>();
  const contentKey = await driver.tenantContentKey(tenant);
  const sessions = new SessionLogs();
  // rows that match their entries, and those of them written in a session: the session logs are re-folded against them
  const matching = new Set<string>();
  const contexts: Array<Pick<MemoryRecord, 'id' | 'taint'> & { sessionContext: SessionRef }> = [];
  // keyset paging when the driver offers it (one pass), else OFFSET paging
  let after: string | null = null;
  const pause = yielder();
  for (let offset = 0; ; offset += PAGE) {
    const page: MemoryRecord[] = driver.listRecordsAfter ? await driver.listRecordsAfter(tenant, after, PAGE) : await driver.listRecords(tenant, { limit: PAGE, offset, includeDeleted: true });
    after = page[page.length - 1]?.id ?? after;
    await sessions.load(driver, tenant, page);
    const entries = await chainEntries(driver, tenant, read, page);
    for (const r of page) {
      await pause();
      checked += 1;
      seen.add(r.id);
      const seq = created.get(r.id);
      const entry = seq !== undefined ? entries.get(seq) : undefined;
      if (!entry) bad.push({ id: r.id, problem: 'no_audit_entry' });
      else if (!recordMatchesEntry(r, entry, contentKey) || r.audit.seq !== seq) bad.push({ id: r.id, problem: 'row_differs_from_audit' });
      else if (!sessions.matches(r)) bad.push({ id: r.id, problem: 'session_log_differs_from_audit' });
      else {
        matching.add(r.id);
        if (r.sessionContext !== undefined) contexts.push({ id: r.id, taint: r.taint, sessionContext: r.sessionContext });
        if (r.status === 'deleted' && !deleted.has(r.id)) bad.push({ id: r.id, problem: 'erased_without_delete' });
        else if (r.status !== 'deleted' && deleted.has(r.id)) bad.push({ id: r.id, problem: 'erase_missing' });
      }
    }
    if (page.length < PAGE) break;
  }
  if (chain.ok) for (const id of created.keys()) if (!seen.has(id)) bad.push({ id, problem: 'row_missing' });
  bad.push(...(await sessionLogProblems(driver, tenant, contexts, matching)));
  for (const c of await driver.corroborationsFor(tenant, [...seen])) {
    const e = c.auditSeq !== undefined ? corroborateEntries.get(c.auditSeq) : undefined;
    if (!e || !corroborationMatchesEntry(c, e)) bad.push({ id: c.id, problem: 'corroboration_not_in_audit' });
  }
  const stored = await driver.confirmationUses(tenant, [...uses.keys()]);
  for (const [id, n] of uses) if ((stored.get(id) ?? 0) !== n) bad.push({ id, problem: 'confirmation_uses_differ_from_audit' });
  return { checked, bad };
}

/**
 * The write/derive entries that created `page`'s records, read in one batch, by seq — only those
 * that are still what the chain walk verified (the same hash, and the entry hashes to it), so a
 * change made to the log while the check runs reads as a missing entry, never as a match.
 */
async function chainEntries(driver: StorageDriver, tenant: string, read: Pick<ChainRead, 'created' | 'hashes'>, page: readonly MemoryRecord[]): Promise<Map<number, AuditEntry>> {
  const known = page.filter((r) => read.created.has(r.id));
  const entries = await auditEntriesAt(driver, tenant, known, (r) => read.created.get(r.id) as number);
  for (const [seq, e] of entries) if (e.hash !== read.hashes.get(seq) || entryHash(e) !== e.hash) entries.delete(seq);
  return entries;
}

/**
 * Principal and token rows of `tenant` (or, for the `(admin)` chain, the admin tokens) that do
 * not match their audit entries, and entries whose row is missing (docs/design.md § Audit log).
 */
async function identityProblems(driver: StorageDriver, tenant: string): Promise<Array<{ id: string; problem: RecordProblem }>> {
  const bad: Array<{ id: string; problem: RecordProblem }> = [];
  const group = (entries: readonly AuditEntry[], field: string): Map<string, AuditEntry[]> => {
    const m = new Map<string, AuditEntry[]>();
    for (const e of entries) {
      const k = (e.payload as Record<string, unknown>)[field];
      if (typeof k !== 'string') continue;
      m.set(k, [...(m.get(k) ?? []), e]);
    }
    return m;
  };
  const regs = group(await driver.auditEntriesNaming(tenant, ['principal'], null), 'principalId');
  const rows = new Set<string>();
  for (const p of await driver.listPrincipals(tenant)) {
    rows.add(p.id);
    if (!principalMatchesEntries(p, regs.get(p.id) ?? [])) bad.push({ id: `principal:${p.id}`, problem: 'principal_not_in_audit' });
  }
  for (const [id, es] of regs) if (!rows.has(id) && es.some((e) => (e.payload as Record<string, unknown>).refused === undefined)) bad.push({ id: `principal:${id}`, problem: 'principal_row_missing' });
  const byToken = group(await driver.auditEntriesNaming(tenant, TOKEN_OPS, null), 'tokenId');
  const tokenIds = new Set<string>();
  for (const t of await driver.listTokens(tenant === ADMIN_CHAIN ? null : tenant)) {
    tokenIds.add(t.id);
    const v = tokenVerdict(t, byToken.get(t.id) ?? []);
    if (v.problem !== null) bad.push({ id: t.id, problem: `token_${v.problem}` });
  }
  for (const [id, es] of byToken) if (!tokenIds.has(id) && es.some((e) => e.op === 'token_issue')) bad.push({ id, problem: 'token_row_missing' });
  return bad;
}
