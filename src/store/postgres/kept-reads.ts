/**
 * Reads a group-commit batch (./group-commit.ts, ./batch-exec.ts) keeps and answers again from
 * memory, and the reads it sends together in one round trip because the next ones nearly always
 * follow.
 *
 * What is kept, and why a kept answer is the one PostgreSQL would give: while the batch holds its
 * tenant's lock nobody else writes that tenant's rows (./driver.ts), so only the batch's own
 * statements can change them, and any statement other than a read or an append to `audit` or
 * `decisions` forgets everything ({@link KeptReads.forget}; ./batch-exec.ts decides), as does a
 * job that fails.
 * - Records by id, their derivation edges and corroborations, and the ids of versions of chains
 *   (they change only when a record, edge or corroboration is written).
 * - Audit entries by seq (append-only: an entry never changes once written).
 * - The tenant's unexpired confirmations, read once (up to {@link LIVE_MAX}) for the first
 *   look-up of any action: a look-up for one action type, argument hash and `now` at or after the
 *   time they were read is answered by filtering them — a confirmation unexpired then may have
 *   expired since, never the other way round. Confirmations are append-only; a new one is an
 *   INSERT, which forgets.
 *
 * Read together: asking for records by id also reads, in the same round trip, their derivation
 * edges, corroborations, versions and audit entries (what verifying a dependency reads next).
 *
 * May import: ../rows.js, ../sql/*.
 */
import type { Row } from '../rows.js';
import { type Stmt, postgresDialect } from '../sql/dialect.js';
import * as S from '../sql/statements.js';

const d = postgresDialect;
/** The text of a read of records by id ({@link S.recordsById}). */
export const RECORDS = S.recordsById(d, '', ['']).text;
/** Reads kept whole, by text and values. */
const KEPT = new Set([RECORDS, S.derivationsOf(d, ['']).text, S.corroborations(d, '', ['']).text, S.versionIds(d, '', ['']).text]);
const AUDIT_AT = S.auditAt(d, '', [0]).text;
/** The text of a look-up of an action's confirmations ({@link S.confirmations}). */
export const CONFIRMATIONS = S.confirmations(d, '', '', '', '').text;

/** At most this many unexpired confirmations of a tenant are kept; with more, each look-up is asked on its own. */
export const LIVE_MAX = 256;

/** The tenant's unexpired confirmations at `now`, ordered as {@link S.confirmations} orders them (index confirmations_live). */
export const liveConfirmations = (tenant: string, now: string): Stmt => ({
  text: `SELECT * FROM confirmations WHERE tenant = $1 AND expires_at > $2 ORDER BY created_at, id LIMIT ${LIVE_MAX + 1}`,
  values: [tenant, now],
});
const LIVE = liveConfirmations('', '').text;

/** The audit entries of the records `ids` of `tenant`, by seq. */
const auditOfRecords = (tenant: string, ids: readonly string[]): Stmt => ({
  text: 'SELECT * FROM audit WHERE tenant = $1 AND seq IN (SELECT audit_seq FROM records WHERE tenant = $1 AND id = ANY($2::text[])) ORDER BY seq',
  values: [tenant, ids],
});
const AUDIT_OF_RECORDS = auditOfRecords('', ['']).text;

/** A statement as a map key: its text and values (two statements with equal keys read the same rows). */
export const stmtKey = (s: Stmt): string => s.text + JSON.stringify(s.values);

/** PostgreSQL's order of text in the "C" collation: by UTF-8 bytes. */
const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/**
 * A read of the records `ids` of `tenant` and what verifying them reads next: their derivation
 * edges, corroborations, versions and audit entries. The records are asked for by `ids` as given
 * (so the read is kept under the caller's statement); the rest by the ids in order, as the
 * records come back and as what follows names them.
 */
export function readsWithRecords(tenant: string, ids: readonly string[]): Stmt[] {
  const sorted = [...new Set(ids)].sort(byBytes);
  return [S.recordsById(d, tenant, ids), S.derivationsOf(d, sorted), S.corroborations(d, tenant, sorted), S.versionIds(d, tenant, sorted), auditOfRecords(tenant, sorted)];
}

/** The kept reads of one batch (see the module header). */
export class KeptReads {
  /** @param onMiss - told of each read of records or confirmations that was not kept (./prefetch.ts reads them with the next BEGIN). */
  constructor(private readonly onMiss?: (s: Stmt) => void) {}

  private readonly rows = new Map<string, readonly Row[]>();
  private readonly entries = new Map<string, Row>();
  private readonly confirmations = new Map<string, { readonly at: string; readonly rows: readonly Row[] }>();
  /** tenants with more than {@link LIVE_MAX} unexpired confirmations: their look-ups are asked one by one. */
  private readonly crowded = new Set<string>();

  /** The kept answer to `s`, or undefined when it must be asked. */
  get(s: Stmt): Row[] | undefined {
    if (s.text === CONFIRMATIONS) return this.liveAnswer(s);
    if (s.text === AUDIT_AT) return this.entriesAt(s);
    const hit = KEPT.has(s.text) ? this.rows.get(stmtKey(s)) : undefined;
    return hit === undefined ? undefined : [...hit];
  }

  /**
   * What to send for `s` when it is not kept: the reads to send together in one round trip (`s`
   * first, or what answers it), or none when `s` is asked on its own.
   */
  together(s: Stmt): Stmt[] {
    if (s.text !== CONFIRMATIONS && s.text !== RECORDS) return [];
    this.onMiss?.(s);
    if (s.text === CONFIRMATIONS) return this.crowded.has(String(s.values[0])) ? [] : [liveConfirmations(String(s.values[0]), String(s.values[3]))];
    return readsWithRecords(String(s.values[0]), s.values[1] as string[]);
  }

  /** Keep `rows`, the answer to `s` (ignored when `s` is not a read kept here). */
  keep(s: Stmt, rows: readonly Row[]): void {
    if (s.text === LIVE) {
      if (rows.length <= LIVE_MAX) this.confirmations.set(String(s.values[0]), { at: String(s.values[1]), rows: [...rows] });
      else this.crowded.add(String(s.values[0]));
    } else if (s.text === AUDIT_AT || s.text === AUDIT_OF_RECORDS) {
      for (const r of rows) this.entries.set(JSON.stringify([s.values[0], String(r.seq)]), r);
    } else if (KEPT.has(s.text)) this.rows.set(stmtKey(s), [...rows]);
  }

  /** Forget everything kept. */
  forget(): void {
    this.rows.clear();
    this.entries.clear();
    this.confirmations.clear();
    this.crowded.clear();
  }

  private liveAnswer(s: Stmt): Row[] | undefined {
    const [tenant, actionType, argsHash, now] = s.values.map(String) as [string, string, string, string];
    const kept = this.confirmations.get(tenant);
    if (kept === undefined || byBytes(now, kept.at) < 0) return undefined;
    return kept.rows.filter((r) => r.action_type === actionType && r.args_hash === argsHash && byBytes(String(r.expires_at), now) > 0);
  }

  private entriesAt(s: Stmt): Row[] | undefined {
    const [tenant, seqs] = s.values as [string, ReadonlyArray<number | string>];
    const unique = [...new Set(seqs.map(String))];
    const rows = unique.map((seq) => this.entries.get(JSON.stringify([tenant, seq])));
    if (rows.some((r) => r === undefined)) return undefined;
    return (rows as Row[]).sort((a, b) => Number(a.seq) - Number(b.seq));
  }
}
