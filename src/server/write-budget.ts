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
 * External principals read nothing (server/exposure.ts), so their reads cost no budget here.
 *
 * May import: ./errors.js, ./token-buckets.js, ./config.js types, core types.
 */
import type { Principal } from '../core/types.js';
import type { ServerConfig } from './config.js';
import { HttpError } from './errors.js';
import { TokenBuckets } from './token-buckets.js';

/** The write budgets of external principals, keyed by tenant and principal. */
export class WriteBudget {
  private readonly records: TokenBuckets;
  private readonly bytes: TokenBuckets;
  private readonly maxBytes: number;

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

  private limited(tenant: string, principal: string, perMinute: number, unit: 'records' | 'bytes', retryAfterSeconds: number): HttpError {
    return new HttpError(
      429,
      'RATE_LIMITED',
      `external principal ${JSON.stringify(principal)} may write ${perMinute} ${unit} of memory per minute and has used them: retry in ${retryAfterSeconds} s`,
      { tenant, principal, perMinute, unit, retryAfterSeconds },
    );
  }
}
