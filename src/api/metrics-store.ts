/**
 * What the metrics (api/metrics.ts, api/metrics-series.ts) read of a tenant's store: its records,
 * principals and corroborations, each checked against its audit entry (core/row-match.ts), the
 * provenance bundle the gate would see, the decisions of a time window, and the replays of a
 * sample of them. Imports from src/core, src/store's port, and api/ modules below the facade.
 */
import type { AuditEntry } from '../core/audit.js';
import { MemauthError } from '../core/errors.js';
import type { FactsBundle, RecordFacts } from '../core/facts.js';
import { corroborationMatchesEntry, recordMatchesEntry } from '../core/row-match.js';
import { TIERS, type Corroboration, type Decision, type MemoryRecord, type PrincipalKind } from '../core/types.js';
import type { StorageDriver } from '../store/driver.js';
import { principals as verifiedPrincipals } from './principals.js';
import { replayDecisions } from './replay.js';
import { SessionLogs } from './session-logs.js';
import { yielder } from './yielder.js';

/** What the metrics read of a tenant's store besides its decisions (verified against the log). */
export interface StoreView {
  readonly records: Map<string, MemoryRecord>;
  readonly verified: Set<string>;
  readonly domains: Map<string, string>;
  /** each registered principal's kind (principals whose row matches its registration entry). */
  readonly kinds: Map<string, PrincipalKind>;
  readonly allCorroborations: readonly Corroboration[];
  readonly corroborationVerified: Set<string>;
  readonly facts: Map<string, RecordFacts>;
  readonly bundle: FactsBundle;
}

/** Evenly spaced sample of `n` items (all when `n` is `all` or ≥ length), order kept. */
export function sample<T>(items: readonly T[], n: number | 'all'): T[] {
  if (n === 'all' || n >= items.length) return [...items];
  if (n <= 0) return [];
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push(items[Math.floor((i * items.length) / n)] as T);
  return out;
}

/** The decisions taken in [since, until) (either bound optional), in log order. */
export function inWindow(all: readonly Decision[], since: string | undefined, until: string | undefined): Decision[] {
  return all.filter((d) => (since === undefined || d.at >= since) && (until === undefined || d.at < until)).sort((a, b) => a.auditSeq - b.auditSeq);
}

/** The ids of the decisions replayed: an evenly spaced sample of `replaySample` per tier. */
export function replayIds(decisions: readonly Decision[], replaySample: number | 'all'): string[] {
  return TIERS.flatMap((tier) =>
    sample(
      decisions.filter((d) => d.tier === tier),
      replaySample,
    ),
  ).map((d) => d.id);
}

/** Replay `ids` in one pass over the audit log; a replay that throws maps to null (a mismatch). */
export async function replayAll(driver: StorageDriver, tenant: string, ids: readonly string[]): Promise<Map<string, { matches: boolean } | null>> {
  return new Map([...(await replayDecisions(driver, tenant, ids))].map(([id, r]) => [id, r instanceof MemauthError ? null : r]));
}

/** Load the tenant's records, principals and corroborations, each checked against its audit entry. */
export async function loadStore(driver: StorageDriver, tenant: string): Promise<StoreView> {
  const records = new Map<string, MemoryRecord>();
  // a record written in a session with its session context spelled out as edges (api/session-logs.ts)
  const sessions = new SessionLogs();
  for (let offset = 0; ; offset += 1000) {
    const page = await driver.listRecords(tenant, { limit: 1000, offset, includeDeleted: true });
    for (const r of await sessions.loadExpanded(driver, tenant, page)) records.set(r.id, r);
    if (page.length < 1000) break;
  }
  // only principal rows that match their registration entry (as at the gate)
  const principals = await verifiedPrincipals.list(driver, tenant);
  const domains = new Map(principals.map((p) => [p.id, p.domain]));
  const kinds = new Map(principals.map((p) => [p.id, p.kind]));
  const entryAt = async (seq: number): Promise<AuditEntry | undefined> => (await driver.auditRange(tenant, seq, seq))[0];
  const verified = new Set<string>();
  const contentKey = await driver.tenantContentKey(tenant);
  const pause = yielder();
  for (const r of records.values()) {
    const e = await entryAt(r.audit.seq);
    const stored = sessions.original(r);
    if (e && recordMatchesEntry(stored, e, contentKey) && sessions.matches(stored)) verified.add(r.id);
    await pause();
  }
  const allCorroborations = await driver.corroborationsFor(tenant, [...records.keys()]);
  const corroborationVerified = new Set<string>();
  for (const c of allCorroborations) {
    const e = c.auditSeq === undefined ? undefined : await entryAt(c.auditSeq);
    if (e && corroborationMatchesEntry(c, e)) corroborationVerified.add(c.id);
    await pause();
  }
  const { facts, bundle } = gateBundle(records, verified, domains, allCorroborations, corroborationVerified);
  return { records, verified, domains, kinds, allCorroborations, corroborationVerified, facts, bundle };
}

/** The provenance bundle the gate would see (verified rows only). */
function gateBundle(
  records: ReadonlyMap<string, MemoryRecord>,
  verified: ReadonlySet<string>,
  domains: Map<string, string>,
  allCorroborations: readonly Corroboration[],
  corroborationVerified: ReadonlySet<string>,
): { facts: Map<string, RecordFacts>; bundle: FactsBundle } {
  const facts = new Map<string, RecordFacts>();
  for (const r of records.values()) {
    facts.set(r.id, {
      id: r.id,
      lowestAuthority: r.taint.lowestAuthority,
      originPrincipal: r.origin.principalId,
      status: r.status === 'deleted' ? 'deleted' : 'active',
      expiresAt: r.expiresAt,
      derivedFrom: r.derivedFrom,
      verified: verified.has(r.id),
    });
  }
  const byRecord = new Map<string, Corroboration[]>();
  for (const c of allCorroborations) {
    if (!corroborationVerified.has(c.id)) continue;
    byRecord.set(c.recordId, [...(byRecord.get(c.recordId) ?? []), c]);
  }
  return { facts, bundle: { records: facts, domains, corroborations: byRecord } };
}
