/**
 * The write budget of external principals (pure bookkeeping, no I/O): each external principal of
 * a tenant may store content of at most `maxBytes` per record, and at most `recordsPerMinute`
 * records and `bytesPerMinute` bytes of content per minute (token buckets refilled evenly over
 * the minute). Storing and indexing a large record blocks the process, and each one stays on
 * disk: without a budget one external token could stall every tenant and fill the disk. Agents,
 * tools, people and the application are not limited here (only by `maxContentChars`). Used by
 * POST /v1/memories, POST /v1/derivations (routes/memories.ts) and the MCP tools `remember` and
 * `derive` alike.
 *
 * Reads store rows too: a read in a session the principal has not used before creates the session
 * (charged as one record and {@link SESSION_BYTES}), and each hit returned marks a read (charged
 * {@link READ_MARK_BYTES}); see {@link WriteBudget.admitReads}. Used by POST /v1/memories/search
 * and GET /v1/memories/{id} with a `session`, and the MCP tools `recall` and `get_memory`.
 *
 * May import: ./errors.js, ./token-buckets.js, ./config.js types, core types.
 */
import type { Principal } from '../core/types.js';
import type { ServerConfig } from './config.js';
import { HttpError } from './errors.js';
import { TokenBuckets } from './token-buckets.js';

/** Bytes of the write budget a new session costs (beside one record). */
export const SESSION_BYTES = 256;
/** Bytes of the write budget one read mark costs (one hit returned or record read in a session). */
export const READ_MARK_BYTES = 64;
/** Most records an external principal may ask one search or listing for. */
export const EXTERNAL_PAGE_LIMIT = 100;
/** Sessions remembered as already used (and paid for), over all principals; the oldest are forgotten first (and paid for again). */
const KNOWN_SESSIONS = 100_000;

/** The write budgets of external principals, keyed by tenant and principal. */
export class WriteBudget {
  private readonly records: TokenBuckets;
  private readonly bytes: TokenBuckets;
  private readonly maxBytes: number;
  private readonly sessions = new Map<string, true>();

  /**
   * @param config `externalMaxContentBytes`, `externalWritesPerMinute`, `externalWriteBytesPerMinute`.
   * @param now the clock in milliseconds (tests pass their own).
   */
  constructor(config: Pick<ServerConfig, 'externalMaxContentBytes' | 'externalWritesPerMinute' | 'externalWriteBytesPerMinute'>, now: () => number = Date.now) {
    this.maxBytes = config.externalMaxContentBytes;
    this.records = new TokenBuckets(config.externalWritesPerMinute, now);
    this.bytes = new TokenBuckets(config.externalWriteBytesPerMinute, now);
  }

  /**
   * Count one record of `content` written by `principal` of `tenant`; nothing for principals
   * that are not `external` (nor for the admin token: `principal` null).
   *
   * @throws HttpError `CONTENT_TOO_LONG` (413) when the content's UTF-8 size is over
   *   `externalMaxContentBytes`; details `{field: 'content', length, max, unit: 'bytes'}`.
   * @throws HttpError `RATE_LIMITED` (429) when the principal has used its records or bytes of
   *   the minute; details `{tenant, principal, perMinute, unit, retryAfterSeconds}` (the server
   *   also sends `Retry-After`). A refused write uses none of the budget.
   */
  admit(tenant: string, principal: Pick<Principal, 'id' | 'kind'> | null, content: string): void {
    if (principal === null || principal.kind !== 'external') return;
    const size = Buffer.byteLength(content, 'utf8');
    if (size > this.maxBytes) {
      throw new HttpError(413, 'CONTENT_TOO_LONG', `content is ${size} bytes; an external principal may store at most ${this.maxBytes} bytes per record`, {
        field: 'content',
        length: size,
        max: this.maxBytes,
        unit: 'bytes',
      });
    }
    const key = `${tenant}\u0000${principal.id}`;
    const wait = this.records.take(key);
    if (wait !== null) throw this.limited(tenant, principal.id, this.records.capacity, 'records', wait);
    const waitBytes = this.bytes.take(key, size);
    if (waitBytes === null) return;
    this.records.refund(key);
    throw this.limited(tenant, principal.id, this.bytes.capacity, 'bytes', waitBytes);
  }

  /**
   * Charge a read by `principal` of `tenant` that marks at most `maxMarks` records read in
   * `session`, before it runs: a session this budget has not seen the principal use costs one
   * record and {@link SESSION_BYTES}, each possible mark {@link READ_MARK_BYTES}. Nothing for a
   * read without a session, nor for principals that are not `external` (nor the admin token).
   *
   * @returns `settle(marked)`, to call once the read is done with the number of records it
   *   returned (the unused marks are given back) — or with `null` when the read failed (all is
   *   given back, the session is not remembered).
   * @throws HttpError `INVALID_ARGUMENT` (400) when `maxMarks` is over {@link EXTERNAL_PAGE_LIMIT}
   *   (with or without a session); `RATE_LIMITED` (429), as {@link WriteBudget.admit}. Nothing is taken.
   */
  admitReads(tenant: string, principal: Pick<Principal, 'id' | 'kind'> | null, session: string | undefined, maxMarks: number): (marked: number | null) => void {
    if (principal === null || principal.kind !== 'external') return () => undefined;
    this.checkPage(principal, maxMarks);
    if (session === undefined) return () => undefined;
    const key = `${tenant}\u0000${principal.id}`;
    const sessionKey = `${key}\u0000${session}`;
    const fresh = !this.sessions.has(sessionKey);
    if (fresh) {
      const wait = this.records.take(key);
      if (wait !== null) throw this.limited(tenant, principal.id, this.records.capacity, 'records', wait);
    }
    const cost = maxMarks * READ_MARK_BYTES + (fresh ? SESSION_BYTES : 0);
    const waitBytes = this.bytes.take(key, cost);
    if (waitBytes !== null) {
      if (fresh) this.records.refund(key);
      throw this.limited(tenant, principal.id, this.bytes.capacity, 'bytes', waitBytes);
    }
    return (marked) => {
      if (marked === null) {
        if (fresh) this.records.refund(key);
        this.bytes.refund(key, cost);
        return;
      }
      this.bytes.refund(key, Math.max(0, maxMarks - marked) * READ_MARK_BYTES);
      this.sessions.delete(sessionKey);
      this.sessions.set(sessionKey, true);
      if (this.sessions.size > KNOWN_SESSIONS) this.sessions.delete(this.sessions.keys().next().value as string);
    };
  }

  /**
   * Refuse a search or listing of more than {@link EXTERNAL_PAGE_LIMIT} records by an external
   * principal (every record shown is work and response bytes; a read in a session also a mark).
   * @throws HttpError `INVALID_ARGUMENT` (400), details `{field: 'limit', max}`.
   */
  checkPage(principal: Pick<Principal, 'id' | 'kind'> | null, limit: number): void {
    if (principal === null || principal.kind !== 'external' || limit <= EXTERNAL_PAGE_LIMIT) return;
    throw new HttpError(400, 'INVALID_ARGUMENT', `limit: an external principal may ask for at most ${EXTERNAL_PAGE_LIMIT} records at once (asked ${limit})`, {
      field: 'limit',
      max: EXTERNAL_PAGE_LIMIT,
    });
  }

  /**
   * {@link WriteBudget.admitReads} around `run`: charged before it, settled after it with
   * `marked(result)` (or all given back when it throws).
   */
  async chargedRead<T>(tenant: string, principal: Pick<Principal, 'id' | 'kind'> | null, session: string | undefined, maxMarks: number, run: () => Promise<T>, marked: (r: T) => number): Promise<T> {
    const settle = this.admitReads(tenant, principal, session, maxMarks);
    let r: T;
    try {
      r = await run();
    } catch (e) {
      settle(null);
      throw e;
    }
    settle(marked(r));
    return r;
  }

  private limited(tenant: string, principal: string, perMinute: number, unit: 'records' | 'bytes', retryAfterSeconds: number): HttpError {
    return new HttpError(
      429,
      'RATE_LIMITED',
      `external principal ${JSON.stringify(principal)} may write ${perMinute} ${unit} of memory per minute and has used them: retry in ${retryAfterSeconds} s`,
      { tenant, principal, perMinute, unit, retryAfterSeconds },
    );
  }
}
