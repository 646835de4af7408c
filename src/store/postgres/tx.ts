/**
 * The PostgreSQL transaction object: the shared {@link SqlTx} plus a memo of reads that cannot
 * change while the transaction holds its tenant's lock, shared by the logical transactions of one
 * group commit (./group-commit.ts). On PostgreSQL every read is a round trip under the tenant
 * lock; with the memo the second and later writes of a batch skip the principal, registration,
 * content-key, policy and chain-head reads.
 *
 * What is memoised, and why it stays true while the batch holds the lock (all of a tenant's rows
 * are written only under that tenant's lock, and audit entries, principals and content keys are
 * append-only — PostgreSQL triggers refuse updates):
 * - a principal row that exists; a tenant's content key once stored;
 * - audit entries by seq, and complete seq ranges (entries never change once appended);
 * - that the chain holds a policy version (only appends follow);
 * - the chain head, updated by every {@link PgTx.appendAudit} of the batch;
 * - audit entries naming a principal or token, dropped when the batch appends an entry of one
 *   of the ops asked for.
 * A logical transaction that rolls back to its SAVEPOINT clears the whole memo ({@link BatchMemo.clear}):
 * what it read or wrote may be gone.
 *
 * May import: core, ../driver.js, ../sql/*.
 */
import type { AuditEntry, AuditOp } from '../../core/audit.js';
import type { Principal } from '../../core/types.js';
import { SqlTx } from '../sql/tx.js';

type Naming = { readonly field: 'principalId' | 'tokenId'; readonly value: string } | null;

/** Reads of one batch (one PostgreSQL transaction holding one tenant's lock) that later logical transactions reuse. */
export class BatchMemo {
  readonly principals = new Map<string, Principal>();
  readonly contentKeys = new Map<string, string>();
  readonly policies = new Set<string>();
  readonly heads = new Map<string, { seq: number; hash: string } | null>();
  readonly entries = new Map<string, AuditEntry>();
  readonly naming = new Map<string, { readonly tenant: string; readonly ops: readonly AuditOp[]; readonly entries: AuditEntry[] }>();

  constructor(readonly hints: ReadHints | null = null) {}

  /** Forget everything (a logical transaction rolled back to its savepoint). */
  clear(): void {
    this.principals.clear();
    this.contentKeys.clear();
    this.policies.clear();
    this.heads.clear();
    this.entries.clear();
    this.naming.clear();
  }
}

/** The key of a memoised read: its parts as JSON (./prefetch.ts fills the memo under the same keys). */
export const memoKey = (...parts: ReadonlyArray<string | number>): string => JSON.stringify(parts);
const key = memoKey;

/** Where a transaction reports what it read, so that the next batch of its tenant can read it with its BEGIN (./prefetch.ts). */
export interface ReadHints {
  principal(tenant: string, id: string): void;
  policy(tenant: string, version: string): void;
}

/** {@link SqlTx} whose reads of append-only facts go through the batch's {@link BatchMemo}. */
export class PgTx extends SqlTx {
  private memo: BatchMemo = new BatchMemo();

  /** Share `memo` (the batch's) instead of this transaction's own. */
  useMemo(memo: BatchMemo): this {
    this.memo = memo;
    return this;
  }

  override async getPrincipal(tenant: string, id: string): Promise<Principal | null> {
    this.memo.hints?.principal(tenant, id);
    const k = key(tenant, id);
    const hit = this.memo.principals.get(k);
    if (hit !== undefined) return hit;
    const p = await super.getPrincipal(tenant, id);
    if (p !== null) this.memo.principals.set(k, p);
    return p;
  }

  override async tenantContentKey(tenant: string): Promise<string | null> {
    const hit = this.memo.contentKeys.get(tenant);
    if (hit !== undefined) return hit;
    const k = await super.tenantContentKey(tenant);
    if (k !== null) this.memo.contentKeys.set(tenant, k);
    return k;
  }

  override async ensureTenantContentKey(tenant: string, keyHex: string | (() => string), at: string): Promise<string> {
    // the key exists after a tenant's first write: one SELECT, not INSERT … ON CONFLICT then SELECT
    const known = await this.tenantContentKey(tenant);
    if (known !== null) return known;
    const k = await super.ensureTenantContentKey(tenant, keyHex, at);
    this.memo.contentKeys.set(tenant, k);
    return k;
  }

  override async auditHasPolicy(tenant: string, policyVersion: string): Promise<boolean> {
    const k = key(tenant, policyVersion);
    if (this.memo.policies.has(k)) return true;
    const has = await super.auditHasPolicy(tenant, policyVersion);
    if (has) {
      this.memo.policies.add(k);
      this.memo.hints?.policy(tenant, policyVersion);
    }
    return has;
  }

  override async auditHead(tenant: string): Promise<{ seq: number; hash: string } | null> {
    if (this.memo.heads.has(tenant)) return this.memo.heads.get(tenant) ?? null;
    const head = await super.auditHead(tenant);
    this.memo.heads.set(tenant, head);
    return head;
  }

  override async auditRange(tenant: string, fromSeq: number, toSeq: number): Promise<AuditEntry[]> {
    const cached: AuditEntry[] = [];
    for (let s = fromSeq; s <= toSeq; s++) {
      const e = this.memo.entries.get(key(tenant, s));
      if (e === undefined) break;
      cached.push(e);
    }
    if (toSeq >= fromSeq && cached.length === toSeq - fromSeq + 1) return cached;
    const got = await super.auditRange(tenant, fromSeq, toSeq);
    for (const e of got) this.memo.entries.set(key(tenant, e.seq), e);
    return got;
  }

  override async auditEntriesAt(tenant: string, seqs: readonly number[]): Promise<AuditEntry[]> {
    const hits = seqs.map((s) => this.memo.entries.get(key(tenant, s)));
    if (seqs.length > 0 && hits.every((e) => e !== undefined)) return [...new Map(hits.map((e) => [e.seq, e])).values()].sort((a, b) => a.seq - b.seq);
    const got = await super.auditEntriesAt(tenant, seqs);
    for (const e of got) this.memo.entries.set(key(tenant, e.seq), e);
    return got;
  }

  override async auditEntriesNaming(tenant: string, ops: readonly AuditOp[], name: Naming): Promise<AuditEntry[]> {
    const k = key(tenant, [...new Set(ops)].sort().join(','), name?.field ?? '', name?.value ?? '');
    const hit = this.memo.naming.get(k);
    if (hit !== undefined) return [...hit.entries];
    const entries = await super.auditEntriesNaming(tenant, ops, name);
    this.memo.naming.set(k, { tenant, ops: [...ops], entries: [...entries] });
    return entries;
  }

  /** Erase the record's content and, in the same transaction, every vector of it (src/store/postgres/vector-index.ts). */
  override async eraseRecord(tenant: string, id: string, at: string): Promise<void> {
    await super.eraseRecord(tenant, id, at);
    await this.rows({ text: 'DELETE FROM record_vectors WHERE tenant = $1 AND record_id = $2', values: [tenant, id] });
  }

  override async appendAudit(e: AuditEntry): Promise<void> {
    await super.appendAudit(e);
    this.memo.heads.set(e.tenant, { seq: e.seq, hash: e.hash });
    for (const [k, n] of this.memo.naming) if (n.tenant === e.tenant && n.ops.includes(e.op)) this.memo.naming.delete(k);
  }
}
