/**
 * The ungated baseline of the performance suite: the same SQLite driver, schema, pragmas and
 * FTS5 index as memauth, driven directly — no principals, no origin or taint computation, no
 * audit chain, no provenance verification, no decision logic. What an ordinary memory store
 * does for the same workload: insert the row and its index entry, search with the same SQL,
 * and for an action read the memories it depends on and log that it happened.
 */
import { randomUUID } from 'node:crypto';
import type { OpTiming } from '../src/api/memory.js';
import type { Decision, DerivationEdge, MemoryRecord } from '../src/core/types.js';
import type { SearchHit, StorageTx } from '../src/store/driver.js';
import { SqliteDriver, type SqliteOptions } from '../src/store/sqlite/driver.js';
import type { SqliteVectorIndex } from '../src/store/sqlite/vector-index.js';

const newId = (prefix: string): string => `${prefix}_${randomUUID().replace(/-/g, '')}`;

/** A record row with placeholder provenance: the columns exist in the schema, nothing is computed for them. */
function plainRecord(tenant: string, scope: string, content: string, writer: string, edges: DerivationEdge[], at: string): MemoryRecord {
  return {
    formatVersion: 1,
    id: newId('mem'),
    tenant,
    scope,
    content,
    contentHash: '',
    createdAt: at,
    expiresAt: null,
    origin: { authority: 'external_untrusted', principalId: writer, sourceRef: '', writtenAt: at },
    derivedFrom: edges,
    taint: { lowestAuthority: 'external_untrusted', channels: [], sources: [], oldestSourceAt: at },
    audit: { policyVersion: 'baseline', writeReason: 'write', seq: 0 },
    status: 'active',
  };
}

/**
 * The ungated store. Every method is one transaction on the same driver memauth uses. Like
 * memauth's, its optional timing hook reports `written` from inside the transaction body (and,
 * for an action, `decided` once its dependencies are read) and `done` after the COMMIT.
 */
export class BaselineStore {
  readonly driver: SqliteDriver;
  private readonly onTiming: ((t: OpTiming) => void) | undefined;

  private constructor(driver: SqliteDriver, onTiming?: (t: OpTiming) => void) {
    this.driver = driver;
    this.onTiming = onTiming;
  }

  /** Open (or create) a baseline store with the same driver options as memauth. */
  static open(opts: SqliteOptions, onTiming?: (t: OpTiming) => void): BaselineStore {
    return new BaselineStore(SqliteDriver.open(opts), onTiming);
  }

  /** A start time for the timing hook, taken when an operation is called (as memauth's is), or 0n. */
  private t0(): bigint {
    return this.onTiming ? process.hrtime.bigint() : 0n;
  }

  /**
   * Run `body` in one transaction. Timed like memauth's operations: `beforeNs` from the call
   * (`t0`) to the body's start — the queue, the group commit's SAVEPOINT (where FTS5 flushes the
   * previous transaction's index data) — and `bodyNs` from there.
   */
  private async timed<T>(op: OpTiming['op'], tenant: string, t0: bigint, body: (mark: (phase: 'decided' | 'written') => void, tx: StorageTx) => Promise<T>): Promise<T> {
    const report = this.onTiming;
    if (!report) return this.driver.transaction(tenant, (tx) => body(() => undefined, tx));
    let beforeNs = 0;
    let tb0 = 0n;
    let tb1 = 0n;
    const out = await this.driver.transaction(tenant, async (tx) => {
      tb0 = process.hrtime.bigint();
      beforeNs = Number(tb0 - t0);
      const v = await body((phase) => report({ op, phase, beforeNs, bodyNs: Number(process.hrtime.bigint() - tb0) }), tx);
      tb1 = process.hrtime.bigint();
      return v;
    });
    report({ op, phase: 'done', beforeNs, bodyNs: Number(tb1 - tb0) });
    return out;
  }

  /** Insert a record and its FTS entry. */
  async write(input: { tenant: string; scope: string; principal: string; content: string }): Promise<MemoryRecord> {
    const t0 = this.t0();
    const r = plainRecord(input.tenant, input.scope, input.content, input.principal, [], new Date().toISOString());
    await this.timed('write', input.tenant, t0, async (mark, tx) => {
      await tx.insertRecord(r);
      mark('written');
    });
    return r;
  }

  /** Insert many records in one transaction (bulk loading). */
  async writeMany(tenant: string, items: ReadonlyArray<{ scope: string; principal: string; content: string }>): Promise<void> {
    const at = new Date().toISOString();
    await this.driver.transaction(tenant, async (tx) => {
      for (const i of items) await tx.insertRecord(plainRecord(tenant, i.scope, i.content, i.principal, [], at));
    });
  }

  /**
   * Insert a record and its vector in one transaction: the row, its FTS entry and the sqlite-vec
   * row written straight into `index` (no liveness check, no second transaction).
   */
  async writeWithVector(
    input: { tenant: string; scope: string; principal: string; content: string },
    index: SqliteVectorIndex,
    embedder: { id: string; dimensions: number },
    vector: Float32Array,
  ): Promise<MemoryRecord> {
    const r = plainRecord(input.tenant, input.scope, input.content, input.principal, [], new Date().toISOString());
    await this.driver.transaction(input.tenant, async (tx) => {
      await tx.insertRecord(r);
      index.upsert(input.tenant, embedder.id, embedder.dimensions, [{ recordId: r.id, scope: r.scope, contentHash: r.contentHash, vector }]);
    });
    return r;
  }

  /** Insert a record with derivation edges to `from` (no read of the inputs, no taint). */
  async derive(input: { tenant: string; scope: string; principal: string; from: readonly string[]; content: string }): Promise<MemoryRecord> {
    const t0 = this.t0();
    const edges: DerivationEdge[] = input.from.map((f) => ({ from: f, transform: 'summarize', kind: 'declared' }));
    const r = plainRecord(input.tenant, input.scope, input.content, input.principal, edges, new Date().toISOString());
    await this.timed('derive', input.tenant, t0, async (mark, tx) => {
      await tx.insertRecord(r);
      mark('written');
    });
    return r;
  }

  /** Full-text search: the driver's own SQL (BM25 over FTS5). */
  async search(input: { tenant: string; scope: string; query: string; limit?: number }): Promise<SearchHit[]> {
    return this.driver.search(input.tenant, input.scope, input.query, input.limit ?? 10, new Date().toISOString());
  }

  /** The in-process part of an ungated action: read the memories it depends on, build the log row. */
  async prepareAction(tenant: string, action: { type: string; args: Record<string, unknown> }, dependsOn: readonly string[]): Promise<Decision> {
    const deps = await this.driver.getRecords(tenant, dependsOn);
    return {
      formatVersion: 1,
      id: newId('dec'),
      tenant,
      sessionId: null,
      at: new Date().toISOString(),
      action,
      argsHash: '',
      tier: 'high',
      mode: 'enforce',
      outcome: 'allow',
      reasons: [],
      dependencies: deps.map((r) => ({ memoryId: r.id, why: ['declared'], lowestAuthority: r.taint.lowestAuthority, actionAuthority: r.taint.lowestAuthority, status: r.status })),
      values: [],
      confirmationId: null,
      policyVersion: 'baseline',
      auditSeq: 0,
    };
  }

  /** An ungated action, durably logged: read its dependencies and insert the action row, in one transaction. */
  async act(tenant: string, action: { type: string; args: Record<string, unknown> }, dependsOn: readonly string[]): Promise<Decision> {
    return this.timed('authorize', tenant, this.t0(), async (mark, tx) => {
      const d = await this.prepareAction(tenant, action, dependsOn);
      mark('decided');
      await tx.insertDecision(d);
      mark('written');
      return d;
    });
  }

  /** Close the driver. */
  async close(): Promise<void> {
    await this.driver.close();
  }
}
