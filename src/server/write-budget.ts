/**
 * The write budget of channel principals (pure bookkeeping, no I/O): each `external` or `tool`
 * principal of a tenant may store content of at most `maxBytes` per record, and at most
 * `recordsPerMinute` records and `bytesPerMinute` bytes of content per minute (token buckets
 * refilled evenly over the minute), with limits of its own kind (`external…` and `tool…` in the
 * server config). Storing and indexing a large record blocks the process, tracing an action's
 * values through it costs every later decision of the session, and each one stays on disk:
 * without a budget one token carrying others' text could stall every tenant and fill the disk.
 * Agents, people and the application are not limited here (only by `maxContentChars`). Used by
 * POST /v1/memories, POST /v1/derivations, POST /v1/memories/{id}/versions (routes/memories.ts)
 * and the MCP tools `remember`, `summarize_into_memory` and `supersede_memory` alike; and by POST
 * /v1/corroborations (routes/gate.ts): a corroboration is a stored row and an audit entry too (a
 * refused one, an audit entry), so each counts as a record, its evidence as its bytes.
 *
 * A read in a session writes too: every record it marks read is a row of the session's read log,
 * kept on disk and re-folded by every audit verification. So the records an external or tool
 * principal marks read count against its kind's `…ReadsPerMinute` ({@link WriteBudget.reading}),
 * each request at least one (it opens or touches a session: a fresh session per request costs the
 * same). Used by POST /v1/memories/search and GET /v1/memories/{id} (routes/memories.ts) and the MCP
 * tools `recall` and `get_memory`. External principals are refused every read (server/exposure.ts)
 * before it is counted; their budget is there should a read ever be open to them.
 *
 * May import: ./errors.js, ./token-buckets.js, ./config.js types, core types, api result types.
 */
import type { SearchResult } from '../api/search.js';
import type { RecordView } from '../api/views.js';
import type { Principal } from '../core/types.js';
import type { ServerConfig } from './config.js';
import { HttpError } from './errors.js';
import { TokenBuckets } from './token-buckets.js';

/** The principal kinds with a budget: channels that carry text the tenant did not write. */
export type BudgetedKind = 'external' | 'tool';

type Limits = Pick<
  ServerConfig,
  | 'externalMaxContentBytes'
  | 'externalWritesPerMinute'
  | 'externalWriteBytesPerMinute'
  | 'externalReadsPerMinute'
  | 'toolMaxContentBytes'
  | 'toolWritesPerMinute'
  | 'toolWriteBytesPerMinute'
  | 'toolReadsPerMinute'
>;

interface KindBudget {
  readonly maxBytes: number;
  readonly records: TokenBuckets;
  readonly bytes: TokenBuckets;
  /** records marked read in a session (rows of its read log). */
  readonly reads: TokenBuckets;
}

/** The write budgets of external and tool principals, keyed by tenant and principal. */
export class WriteBudget {
  private readonly kinds: ReadonlyMap<string, KindBudget>;

  /**
   * @param config the `external…` and `tool…` limits (bytes per record; records, bytes and reads per minute).
   * @param now the clock in milliseconds (tests pass their own).
   */
  constructor(config: Limits, now: () => number = Date.now) {
    this.kinds = new Map<BudgetedKind, KindBudget>([
      [
        'external',
        {
          maxBytes: config.externalMaxContentBytes,
          records: new TokenBuckets(config.externalWritesPerMinute, now),
          bytes: new TokenBuckets(config.externalWriteBytesPerMinute, now),
          reads: new TokenBuckets(config.externalReadsPerMinute, now),
        },
      ],
      [
        'tool',
        {
          maxBytes: config.toolMaxContentBytes,
          records: new TokenBuckets(config.toolWritesPerMinute, now),
          bytes: new TokenBuckets(config.toolWriteBytesPerMinute, now),
          reads: new TokenBuckets(config.toolReadsPerMinute, now),
        },
      ],
    ]);
  }

  /**
   * Count one record of `content` (and its typed `claims`, as their JSON) written by `principal` of `tenant`; nothing for principals
   * of other kinds (nor for the admin token: `principal` null).
   *
   * @throws HttpError `CONTENT_TOO_LONG` (413) when the content's UTF-8 size is over its kind's
   *   `…MaxContentBytes`; details `{field: 'content', length, max, unit: 'bytes'}`.
   * @throws HttpError `RATE_LIMITED` (429) when the principal has used its records or bytes of
   *   the minute; details `{tenant, principal, perMinute, unit, retryAfterSeconds}` (the server
   *   also sends `Retry-After`). A write refused here uses none of the budget (one refused later by {@link storing}, for what it stores besides its content, keeps what this took).
   */
  admit(tenant: string, principal: Pick<Principal, 'id' | 'kind'> | null, content: string, claims?: readonly unknown[]): void {
    const a = this.account(tenant, principal);
    if (a === null) return;
    const { b } = a;
    const who = a.principal;
    // the claims are stored with the content: they count as its bytes
    const size = Buffer.byteLength(content, 'utf8') + (claims === undefined || claims.length === 0 ? 0 : Buffer.byteLength(JSON.stringify(claims), 'utf8'));
    if (size > b.maxBytes) {
      throw new HttpError(413, 'CONTENT_TOO_LONG', `content and claims are ${size} bytes; a ${who.kind} principal may store at most ${b.maxBytes} bytes per record`, {
        field: 'content',
        length: size,
        max: b.maxBytes,
        unit: 'bytes',
      });
    }
    this.takeRecord(a, size);
  }

  /**
   * Before a decision, which will store bytes ({@link storing}): refused while the principal's
   * byte budget is spent, before anything is decided. Takes one byte.
   * @throws HttpError `RATE_LIMITED` (429), details `unit: 'bytes'`.
   */
  admitStoring(tenant: string, principal: Pick<Principal, 'id' | 'kind'> | null): void {
    const a = this.account(tenant, principal);
    if (a === null) return;
    const wait = a.b.bytes.take(a.key, 1);
    if (wait !== null) throw limited(tenant, a.principal, a.b.bytes.capacity, 'bytes', wait);
  }

  /**
   * Take the `bytes` a built decision or record is about to store besides the content {@link admit}
   * counted (a decision's row and audit entry; a record's audit entry and row metadata: origin,
   * taint, derivation edges) from the principal's byte budget — called by the `beforeRecord` of
   * `Memory.authorize`, `write`, `derive` and `supersede`, before anything of it is written, so
   * that calls in flight together cannot store more than the budget holds. Principals without a
   * budget (and the admin token) are not counted.
   * @param field - what is stored: `decision` or `record` (named in a refusal).
   * @throws HttpError `CONTENT_TOO_LONG` (413) when it alone is over a minute's bytes; details
   *   `{field, length, max, unit: 'bytes'}` (a decision: fewer values, a narrower session,
   *   `context: 'declared'`; a record: fewer inputs).
   * @throws HttpError `RATE_LIMITED` (429), details `unit: 'bytes'`, when the budget does not hold
   *   it now. Either way nothing of the call is recorded and nothing more is taken.
   */
  storing(tenant: string, principal: Pick<Principal, 'id' | 'kind'> | null, bytes: number, field: 'decision' | 'record' = 'decision'): void {
    const a = this.account(tenant, principal);
    if (a === null || bytes <= 0) return;
    const max = a.b.bytes.capacity;
    if (bytes > max) {
      const fewer = field === 'decision' ? "depend on fewer records (a narrower session, context 'declared') or pass fewer values" : 'derive from fewer records';
      const message = `the ${field} would store ${bytes} bytes besides its content; a ${a.principal.kind} principal may store at most ${max} bytes a minute: ${fewer}`;
      throw new HttpError(413, 'CONTENT_TOO_LONG', message, { field, length: bytes, max, unit: 'bytes' });
    }
    const wait = a.b.bytes.take(a.key, bytes);
    if (wait !== null) throw limited(tenant, a.principal, max, 'bytes', wait);
  }

  /**
   * Count one audited attempt (a refused confirmation or approval) of `principal` as one record
   * and `bytes` bytes of its write budget — no per-record size cap: the attempt stores an audit
   * entry, not the content. Principals without a budget are not counted.
   * @throws HttpError `RATE_LIMITED` (429), details `unit: 'records' | 'bytes'`; nothing is used then.
   */
  admitAttempt(tenant: string, principal: Pick<Principal, 'id' | 'kind'> | null, bytes: number): void {
    const a = this.account(tenant, principal);
    if (a !== null) this.takeRecord(a, Math.min(bytes, a.b.bytes.capacity));
  }

  /**
   * Run `read`, a read in a session by `principal` of `tenant`, within its kind's reads per
   * minute; other principals (and the admin token: `principal` null) just run it. `most` reads
   * (at most the budget) are taken before it runs, so concurrent reads cannot overdraw together;
   * once it returns the account is settled to what it marked, at least one (the session it opened
   * or touched): the rest is given back, or a read that marked more owes it. A read that throws
   * costs one.
   *
   * @param most the records `read` may mark read (a search's `limit`; 1 for one record).
   * @param marked how many records `read`'s result marked read in the session.
   * @returns what `read` returns.
   * @throws HttpError `RATE_LIMITED` (429) before `read` runs when the principal's budget does not
   *   hold `most` reads; details `{tenant, principal, perMinute, unit: 'reads', retryAfterSeconds}`
   *   (the server also sends `Retry-After`). Nothing is read or stored then.
   */
  async reading<T>(tenant: string, principal: Pick<Principal, 'id' | 'kind'> | null, most: number, read: () => Promise<T>, marked: (result: T) => number): Promise<T> {
    const a = this.account(tenant, principal);
    if (a === null) return read();
    const { b, key } = a;
    const taken = Math.max(1, Math.min(most, b.reads.capacity));
    const wait = b.reads.take(key, taken);
    if (wait !== null) throw limited(tenant, a.principal, b.reads.capacity, 'reads', wait);
    let used = 1;
    try {
      const r = await read();
      used = Math.max(1, marked(r));
      return r;
    } finally {
      if (used < taken) b.reads.refund(key, taken - used);
      else if (used > taken) b.reads.charge(key, used - taken);
    }
  }

  /** The principal's budgets and bucket key, or null when its kind has none (or for the admin token). */
  private account(tenant: string, principal: Pick<Principal, 'id' | 'kind'> | null): Account | null {
    const b = principal === null ? undefined : this.kinds.get(principal.kind);
    return principal === null || b === undefined ? null : { b, key: `${tenant}\u0000${principal.id}`, tenant, principal };
  }

  /** Take one record and `bytes` bytes; a refusal takes neither. @throws HttpError `RATE_LIMITED` (429). */
  private takeRecord({ b, key, tenant, principal }: Account, bytes: number): void {
    const wait = b.records.take(key);
    if (wait !== null) throw limited(tenant, principal, b.records.capacity, 'records', wait);
    const waitBytes = b.bytes.take(key, bytes);
    if (waitBytes === null) return;
    b.records.refund(key);
    throw limited(tenant, principal, b.bytes.capacity, 'bytes', waitBytes);
  }
}

/** One principal's budgets and the key of its buckets. */
interface Account {
  readonly b: KindBudget;
  readonly key: string;
  readonly tenant: string;
  readonly principal: Pick<Principal, 'id' | 'kind'>;
}

function limited(tenant: string, principal: Pick<Principal, 'id' | 'kind'>, perMinute: number, unit: 'records' | 'bytes' | 'reads', retryAfterSeconds: number): HttpError {
  const what = unit === 'reads' ? `mark ${perMinute} records read in its sessions` : `write ${perMinute} ${unit} of memory`;
  return new HttpError(429, 'RATE_LIMITED', `${principal.kind} principal ${JSON.stringify(principal.id)} may ${what} per minute and has used them: retry in ${retryAfterSeconds} s`, {
    tenant,
    principal: principal.id,
    perMinute,
    unit,
    retryAfterSeconds,
  });
}

/** The records a search marked read in its session: its hits (a record once). */
export const markedBySearch = (r: Pick<SearchResult, 'hits'>): number => new Set(r.hits.map((h) => h.record.id)).size;

/** The records a read of one record marked read in its session: at most it and its chain's current versions. */
export const markedByGet = (v: Pick<RecordView, 'id' | 'versions'>): number => new Set([v.id, ...(v.versions?.current ?? [])]).size;
