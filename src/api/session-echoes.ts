/**
 * The echo check of a write in a session (docs/design.md § Derivation and taint: recalled text
 * re-ingested resolves to the original record), at a cost that does not grow with the session: the
 * facade keeps, per session, an index of the texts of its read log (core/echo-index.ts), extended
 * from the log as stored — only by the entries appended since it last looked, so reads logged by
 * another process are found too — and hands the echo check (core/echo.ts) only the records the
 * index names, read as they are now. The index is trusted only for the log prefix whose running
 * hash it computed itself: any other log (cut, rolled back, altered) is indexed again from its
 * start. Imports from src/core, src/store's port and api/ modules below the facade.
 */
import { EchoIndex } from '../core/echo-index.js';
import { type EchoCandidate, findEchoes } from '../core/echo.js';
import { EMPTY_LOG_HASH, type SessionLogEntry, logHash } from '../core/session.js';
import type { MemoryRecord } from '../core/types.js';
import type { StorageReader } from '../store/driver.js';
import { touch } from './session-logs.js';

/** Sessions whose index a facade keeps at most (the least recently used is dropped). */
const MAX_INDEXES = 64;

/** The text, in UTF-16 units, a facade's indexes hold at most together (beyond it the least recently used are dropped; an index larger alone is not kept). */
const MAX_WEIGHT = 32 * 1024 * 1024;

/** Log entries read per statement when an index is extended. */
const PAGE = 1000;

/** An index with the log prefix it holds: `index.size` entries whose running hash is `hash`. */
interface Indexed {
  readonly index: EchoIndex;
  readonly hash: string;
}

/** Per session, the index of its read log's texts (see the module header). */
export class SessionEchoes {
  private readonly indexes = new Map<string, Indexed>();

  /** @param maxWeight - the text the indexes hold at most together, in UTF-16 units (default {@link MAX_WEIGHT}). */
  constructor(private readonly maxWeight = MAX_WEIGHT) {}

  /**
   * Which records read in `session` (whose log's head is `head`; null: nothing read) `content`
   * repeats — what `findEchoes(content, <every record of the log>)` returns.
   * @returns `exact` and `contained` as findEchoes gives them (core/echo.ts).
   */
  async find(src: StorageReader, tenant: string, session: string | undefined, head: SessionLogEntry | null, content: string): Promise<{ exact: MemoryRecord | null; contained: MemoryRecord[] }> {
    if (session === undefined || head === null) return { exact: null, contained: [] };
    const ids = (await this.indexOf(src, tenant, session, head)).candidates(content);
    return findEchoes<MemoryRecord & EchoCandidate>(content, ids.length === 0 ? [] : await src.getRecords(tenant, ids));
  }

  /** How many sessions have an index kept (for tests). */
  get kept(): number {
    return this.indexes.size;
  }

  /** Drop the least recently used indexes while they hold more than `maxWeight` together. */
  private shed(): void {
    let weight = 0;
    for (const v of this.indexes.values()) weight += v.index.weight;
    for (const [k, v] of this.indexes) {
      if (weight <= this.maxWeight) return;
      weight -= v.index.weight;
      this.indexes.delete(k);
    }
  }

  /**
   * Note that `entries` (with their records in `records`) were appended to `session`'s log after
   * `prev` (null: the log was empty): a kept index holding exactly the log up to `prev` takes them
   * without reading them back. Each is checked again against the log's head at the next look-up
   * (a transaction rolled back leaves a head the index's hash does not match: it is built again).
   */
  appended(tenant: string, session: string, prev: SessionLogEntry | null, entries: readonly SessionLogEntry[], records: ReadonlyMap<string, MemoryRecord>): void {
    const k = JSON.stringify([tenant, session]);
    const known = this.indexes.get(k);
    const last = entries[entries.length - 1];
    if (known === undefined || last === undefined || known.index.size !== (prev?.ord ?? 0) || known.hash !== (prev?.hash ?? EMPTY_LOG_HASH)) return;
    let hash = known.hash;
    for (const e of entries) hash = logHash(hash, e.recordId);
    if (hash !== last.hash || known.index.size + entries.length !== last.ord) {
      this.indexes.delete(k);
      return;
    }
    for (const e of entries) known.index.add(e.recordId, records.get(e.recordId)?.content ?? null);
    this.indexes.set(k, { index: known.index, hash });
    this.shed();
  }

  /** The index of `session`'s log up to `head`: the one kept, extended when the log only grew since; else built from the start. */
  private async indexOf(src: StorageReader, tenant: string, session: string, head: SessionLogEntry): Promise<EchoIndex> {
    const k = JSON.stringify([tenant, session]);
    const known = this.indexes.get(k);
    let got = known !== undefined && known.index.size <= head.ord ? await extend(src, tenant, session, known, head) : null;
    got ??= await extend(src, tenant, session, { index: new EchoIndex(), hash: EMPTY_LOG_HASH }, head);
    if (got === null) {
      // the stored log does not hash to its head (changed outside the API): its records as they are, not kept
      this.indexes.delete(k);
      return ((await extend(src, tenant, session, { index: new EchoIndex(), hash: EMPTY_LOG_HASH }, null)) as Indexed).index;
    }
    touch(this.indexes, k, got, MAX_INDEXES);
    this.shed();
    return got.index;
  }
}

/**
 * `from` extended with `session`'s log entries after its prefix up to `head` (null: the whole
 * log, whatever its hash). The entries and their records are read first; the index is changed
 * only if they continue its prefix to `head`'s hash and nobody extended it meanwhile.
 * @returns the extended index with its hash; null when the entries do not end in `head`'s hash
 *   or the index changed meanwhile.
 */
async function extend(src: StorageReader, tenant: string, session: string, from: Indexed, head: SessionLogEntry | null): Promise<Indexed | null> {
  const start = from.index.size;
  const adds: Array<[string, string | null]> = [];
  let hash = from.hash;
  for (let ord = start; head === null || ord < head.ord;) {
    const page = (await src.sessionLogAfter(tenant, { sessionId: session, ord }, head === null ? PAGE : Math.min(head.ord - ord, PAGE))).filter((e) => e.sessionId === session);
    if (page.length === 0) break;
    const recs = new Map((await src.getRecords(tenant, [...new Set(page.map((e) => e.recordId))])).map((r) => [r.id, r]));
    for (const e of page) {
      if (e.ord !== ord + 1 && head !== null) return null;
      ord = e.ord;
      hash = logHash(hash, e.recordId);
      adds.push([e.recordId, recs.get(e.recordId)?.content ?? null]);
    }
  }
  if (head !== null && (hash !== head.hash || start + adds.length !== head.ord)) return null;
  const index = from.index.size === start ? from.index : null;
  if (index === null) return null;
  for (const [id, content] of adds) index.add(id, content);
  return { index, hash };
}
