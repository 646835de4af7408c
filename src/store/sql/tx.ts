/**
 * The transaction object both SQL drivers hand to `transaction(tenant, fn)`: the shared reads of
 * {@link SqlReader} plus the port's writes ({@link StorageTx}), each one statement of
 * ./statements.ts. A driver subclasses it only for what its engine adds to a write (SQLite:
 * its FTS5 index entries). It refuses use once its transaction has ended.
 *
 * May import: core, ../driver.js, ../rows.js, ./dialect.js, ./statements.js, ./reader.js.
 */
import type { AuditEntry, Checkpoint } from '../../core/audit.js';
import type { SessionLogEntry } from '../../core/session.js';
import type { Confirmation, Corroboration, Decision, MemoryRecord, Principal } from '../../core/types.js';
import type { StorageTx, TokenRow } from '../driver.js';
import { type Row, str } from '../rows.js';
import { type Stmt, chunks } from './dialect.js';
import { SqlReader } from './reader.js';
import * as S from './statements.js';

/** {@link StorageTx} over shared statements, valid until {@link end}. */
export class SqlTx extends SqlReader implements StorageTx {
  private ended = false;

  /** Called by the driver when the transaction commits or rolls back: every later call throws. */
  end(): void {
    this.ended = true;
  }

  protected override check(): void {
    if (this.ended) throw new Error('memauth internal: a transaction was used after it ended');
  }

  /** Run statements as one step. */
  protected async write(...stmts: ReadonlyArray<Stmt | null>): Promise<void> {
    this.check();
    await this.exec.run(stmts);
  }

  async putPolicyText(version: string, text: string, at: string): Promise<void> {
    await this.write(S.insertPolicy(this.dialect, version, text, at));
  }

  async insertPrincipal(p: Principal): Promise<void> {
    await this.write(S.insertPrincipal(this.dialect, p));
  }

  async insertRecord(r: MemoryRecord): Promise<void> {
    await this.write(S.insertRecord(this.dialect, r), ...S.insertDerivations(this.dialect, r));
  }

  async eraseRecord(tenant: string, id: string, at: string): Promise<void> {
    await this.write(S.eraseRecord(this.dialect, tenant, id, at));
  }

  async insertCorroboration(c: Corroboration, auditSeq: number): Promise<void> {
    await this.write(S.insertCorroboration(this.dialect, c, auditSeq));
  }

  async insertConfirmation(c: Confirmation, auditSeq: number): Promise<void> {
    await this.write(S.insertConfirmation(this.dialect, c, auditSeq));
  }

  async insertConfirmationUse(tenant: string, confirmationId: string, decisionId: string, at: string): Promise<void> {
    await this.write(S.insertConfirmationUse(this.dialect, tenant, confirmationId, decisionId, at));
  }

  async ensureSession(tenant: string, sessionId: string, at: string, owner: string | null = null): Promise<string | null> {
    await this.write(S.insertSession(this.dialect, tenant, sessionId, at, owner));
    return (await this.sessionOwner(tenant, sessionId))?.owner ?? null;
  }

  async appendSessionLog(tenant: string, sessionId: string, entries: readonly SessionLogEntry[], at: string): Promise<void> {
    if (entries.length === 0) return;
    await this.write(...S.insertSessionLog(this.dialect, tenant, sessionId, entries, at));
  }

  async insertDecision(d: Decision): Promise<void> {
    await this.write(S.insertDecision(this.dialect, d));
  }

  async appendAudit(e: AuditEntry): Promise<void> {
    await this.write(S.appendAudit(this.dialect, e));
  }

  async insertCheckpoint(c: Checkpoint): Promise<void> {
    await this.write(S.insertCheckpoint(this.dialect, c));
  }

  async putToken(t: TokenRow): Promise<void> {
    await this.write(S.insertToken(this.dialect, t));
  }

  async markTokenRevoked(id: string, at: string): Promise<boolean> {
    // PostgreSQL's row lock makes two concurrent revocations (or rotations) of one token exclusive
    const [row] = await this.rows(S.tokenRevokedAt(this.dialect, id));
    if (!row || row.revoked_at !== null) return false;
    await this.write(S.revokeToken(this.dialect, id, at));
    return true;
  }

  async ensureTenantContentKey(tenant: string, keyHex: string | (() => string), at: string): Promise<string> {
    // after a tenant's first write the key exists: one read, no write and no fresh random key
    const known = await this.tenantContentKey(tenant);
    if (known !== null) return known;
    await this.write(S.insertTenantKey(this.dialect, tenant, typeof keyHex === 'function' ? keyHex() : keyHex, at));
    const [row] = await this.rows(S.tenantContentKey(this.dialect, tenant));
    return str((row as Row).content_key);
  }
}
