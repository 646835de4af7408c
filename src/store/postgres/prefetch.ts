/**
 * The reads a group-commit batch (./group-commit.ts) sends with its BEGIN, in the same round trip,
 * right after taking the tenant's lock: the chain head and the tenant's content key (nearly every
 * logical transaction reads both), whether the chain holds the policy versions this driver saw it
 * hold before, and the principal rows this driver was last asked for on the tenant with their
 * registration entries and each entry's successor (what `api/principals.ts` verifies a principal
 * row against). On a machine where a round trip costs a system call on each side, sending them
 * together is most of what a batch of a few calls costs.
 *
 * Nothing here changes what a transaction sees: the reads run in the batch's own transaction,
 * after its lock, at READ COMMITTED, exactly as the transaction's first calls would have run them,
 * and their answers go into the batch's {@link BatchMemo}, which already answers those calls and
 * forgets what an append changes (./tx.ts). The hints only choose what is worth reading; a hint
 * that is wrong costs one read whose answer nobody asks for.
 *
 * May import: core types, ../rows.js, ../sql/*, ./batch-exec.js (literals), ./kept-reads.js, ./tx.js.
 */
import type { AuditEntry } from '../../core/audit.js';
import { type Row, toAudit, toPrincipal } from '../rows.js';
import { type Stmt, postgresDialect } from '../sql/dialect.js';
import * as S from '../sql/statements.js';
import { renderStmt, sqlArrayLiteral } from './batch-exec.js';
import { CONFIRMATIONS, type KeptReads, RECORDS, liveConfirmations, readsWithRecords } from './kept-reads.js';
import { type BatchMemo, memoKey } from './tx.js';

/** Records asked for together at most this many at a time are read again with the next BEGIN. */
const RECORDS_MAX = 64;
/** At most this many lists of records per tenant are read with a BEGIN. */
const LISTS = 2;
/** Confirmations are read with a BEGIN as unexpired this long before it (ms): the calls of a batch took their `now` before it began. */
const CONFIRMATION_MARGIN_MS = 60_000;

/** At most this many principal ids and policy versions are remembered per tenant. */
const PER_TENANT = 8;
/** At most this many tenants are remembered (the oldest is forgotten first). */
const TENANTS = 4096;

/** A small most-recent-first list per tenant, bounded in tenants and per tenant. */
class Recent {
  private readonly byTenant = new Map<string, string[]>();

  note(tenant: string, value: string): void {
    if (value.includes('\u0000')) return;
    const list = this.byTenant.get(tenant);
    if (list !== undefined && list[0] === value) return;
    const next = [value, ...(list ?? []).filter((v) => v !== value)].slice(0, PER_TENANT);
    this.byTenant.delete(tenant);
    this.byTenant.set(tenant, next);
    if (this.byTenant.size > TENANTS) this.byTenant.delete(this.byTenant.keys().next().value as string);
  }

  of(tenant: string): readonly string[] {
    return this.byTenant.get(tenant) ?? [];
  }
}

/**
 * What one driver (one process) last read per tenant: the principal ids it was asked for, and the
 * policy versions the chain was found to hold. Process-local, bounded, never trusted: see the
 * module header.
 */
export class PrefetchHints {
  private readonly principals = new Recent();
  private readonly policies = new Recent();
  private readonly records = new Recent();
  private readonly confirmations = new Recent();

  /** A batch of the tenant asked for records or confirmations it had not kept (./kept-reads.ts). */
  readonly asked = (s: Stmt): void => {
    const tenant = String(s.values[0]);
    if (s.text === CONFIRMATIONS) this.confirmations.note(tenant, '');
    const ids = s.values[1];
    if (s.text === RECORDS && Array.isArray(ids) && ids.length <= RECORDS_MAX) this.records.note(tenant, JSON.stringify(ids));
  };

  /** A transaction of `tenant` asked for principal `id`. */
  principal(tenant: string, id: string): void {
    this.principals.note(tenant, id);
  }

  /** The chain of `tenant` holds policy `version`. */
  policy(tenant: string, version: string): void {
    this.policies.note(tenant, version);
  }

  /** What to read after `BEGIN; <lock>; SAVEPOINT` for `tenant`, at `now` (ms since the epoch). */
  statements(tenant: string, now: number): Prefetch {
    const lists = this.records.of(tenant).slice(0, LISTS);
    const seeds = lists.flatMap((l) => readsWithRecords(tenant, JSON.parse(l) as string[]));
    if (this.confirmations.of(tenant).length > 0) seeds.push(liveConfirmations(tenant, new Date(now - CONFIRMATION_MARGIN_MS).toISOString()));
    return new Prefetch(tenant, this.principals.of(tenant), this.policies.of(tenant), seeds);
  }
}

/** One batch's prefetch: the SQL to send, and how to put the answers into its memo. */
export class Prefetch {
  constructor(
    readonly tenant: string,
    readonly principalIds: readonly string[],
    readonly policies: readonly string[],
    /** reads whose answers go to the batch's kept reads (./kept-reads.ts); left out when one cannot be rendered. */
    seeds: readonly Stmt[],
  ) {
    this.seeds = this.tenant.includes('\u0000') ? [] : seeds.filter((st) => renderStmt(st) !== null);
  }

  readonly seeds: readonly Stmt[];

  /** The statements as SQL texts, values inlined; none when the tenant cannot be written as a literal (it holds NUL, which PostgreSQL text cannot). */
  sql(): string[] {
    if (this.tenant.includes('\u0000')) return [];
    const d = postgresDialect;
    const t = this.tenant;
    const out = [render(S.auditHead(d, t)), render(S.tenantContentKey(d, t)), ...this.policies.map((v) => render(S.auditHasPolicy(d, t, v)))];
    if (this.principalIds.length > 0) {
      const tl = render({ text: '$1', values: [t] });
      const ids = sqlArrayLiteral(this.principalIds);
      const registrations = `SELECT seq FROM audit WHERE tenant = ${tl} AND op = 'principal' AND (payload::json ->> 'principalId') = ANY(${ids}::text[])`;
      out.push(
        `SELECT * FROM principals WHERE tenant = ${tl} AND id = ANY(${ids}::text[])`,
        `SELECT * FROM audit WHERE tenant = ${tl} AND seq IN (${registrations}) ORDER BY seq`,
        `SELECT * FROM audit WHERE tenant = ${tl} AND seq IN (SELECT seq + 1 FROM (${registrations}) AS r) ORDER BY seq`,
      );
    }
    return [...out, ...this.seeds.map(render)];
  }

  /**
   * Put the answers to {@link sql} (in order) into `memo`, keyed as the transaction's own reads
   * would have been (./tx.ts), and those of the seeds into `kept`.
   */
  apply(memo: BatchMemo, kept: KeptReads, answers: ReadonlyArray<readonly Row[]>): void {
    if (answers.length === 0) return;
    const t = this.tenant;
    const seeded = answers.length - this.seeds.length;
    this.seeds.forEach((st, i) => kept.keep(st, answers[seeded + i] ?? []));
    const [head, key, ...rest] = answers.slice(0, seeded);
    const h = head?.[0];
    memo.heads.set(t, h === undefined ? null : { seq: Number(h.seq), hash: String(h.hash) });
    const k = key?.[0];
    if (k !== undefined) memo.contentKeys.set(t, String(k.content_key));
    this.policies.forEach((v, i) => {
      if ((rest[i]?.length ?? 0) > 0) memo.policies.add(memoKey(t, v));
    });
    if (this.principalIds.length === 0) return;
    const [rows, registrations, successors] = rest.slice(this.policies.length);
    for (const r of rows ?? []) memo.principals.set(memoKey(t, String(r.id)), toPrincipal(r));
    const byId = new Map<string, AuditEntry[]>(this.principalIds.map((id) => [id, []]));
    for (const e of (registrations ?? []).map(toAudit)) {
      byId.get(String((e.payload as Record<string, unknown>).principalId))?.push(e);
      memo.entries.set(memoKey(t, e.seq), e);
    }
    for (const [id, entries] of byId) memo.naming.set(memoKey(t, 'principal', 'principalId', id), { tenant: t, ops: ['principal'], entries });
    for (const e of (successors ?? []).map(toAudit)) memo.entries.set(memoKey(t, e.seq), e);
  }
}

function render(s: Stmt): string {
  const sql = renderStmt(s);
  if (sql === null) throw new Error('memauth internal: a prefetch statement could not be rendered');
  return sql;
}
