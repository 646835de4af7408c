/**
 * Row ↔ value mapping shared by the storage drivers. Both schemas use the same table and column
 * names (SQLite `sqlite/schema.ts`, PostgreSQL `postgres/schema.ts`), so one set of mappers reads
 * either; numbers may arrive as strings (PostgreSQL bigint) and are converted with `Number`.
 */
import type { AuditEntry, AuditOp, Checkpoint } from '../core/audit.js';
import type { Authority } from '../core/authority.js';
import { type SessionLogEntry, withSessionEdges } from '../core/session.js';
import type { ReviewNoteRow, TokenRow } from './driver.js';
import type { Channel, Claim, Confirmation, Corroboration, DerivationEdge, EdgeKind, MemoryRecord, Principal, PrincipalKind, SessionRef, Taint, Transform } from '../core/types.js';

/** A database row keyed by column name. */
export type Row = Record<string, unknown>;
export const str = (v: unknown): string => String(v);
export const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

export function toRecord(row: Row, edges: DerivationEdge[], now?: string): MemoryRecord {
  const expiresAt = strOrNull(row.expires_at);
  const stored = str(row.status) as 'active' | 'deleted';
  const status = stored === 'active' && expiresAt !== null && now !== undefined && expiresAt <= now ? 'expired' : stored;
  return {
    formatVersion: 1,
    id: str(row.id),
    tenant: str(row.tenant),
    scope: str(row.scope),
    content: strOrNull(row.content),
    contentHash: str(row.content_hash),
    createdAt: str(row.created_at),
    expiresAt,
    origin: {
      authority: str(row.origin_authority) as Authority,
      principalId: str(row.origin_principal),
      sourceRef: str(row.origin_source),
      writtenAt: str(row.origin_written_at),
    },
    derivedFrom: edges,
    taint: {
      lowestAuthority: str(row.taint_lowest) as Authority,
      channels: JSON.parse(str(row.taint_channels)) as Channel[],
      sources: JSON.parse(str(row.taint_sources)) as string[],
      oldestSourceAt: str(row.taint_oldest_source_at),
    },
    ...(row.session_context === null || row.session_context === undefined ? {} : { sessionContext: JSON.parse(str(row.session_context)) as SessionRef }),
    ...(row.claims === null || row.claims === undefined ? {} : { claims: JSON.parse(str(row.claims)) as Claim[] }),
    ...(row.version_of === null || row.version_of === undefined ? {} : { version: { of: str(row.version_of), supersedes: str(row.supersedes) } }),
    audit: { policyVersion: str(row.policy_version), writeReason: str(row.write_reason), seq: Number(row.audit_seq) },
    status,
  };
}

export const toPrincipal = (r: Row): Principal => ({
  tenant: str(r.tenant),
  id: str(r.id),
  kind: str(r.kind) as PrincipalKind,
  maxAuthority: str(r.max_authority) as Authority,
  domain: str(r.domain),
  createdAt: str(r.created_at),
});

export const toCorroboration = (r: Row): Corroboration => ({
  id: str(r.id),
  tenant: str(r.tenant),
  recordId: str(r.record_id),
  principalId: str(r.principal_id),
  authority: str(r.authority) as Authority,
  domain: str(r.domain),
  evidenceRef: str(r.evidence_ref),
  at: str(r.at),
  auditSeq: Number(r.audit_seq),
});

export const toConfirmation = (r: Row): Confirmation => ({
  id: str(r.id),
  tenant: str(r.tenant),
  principalId: str(r.principal_id),
  actionType: str(r.action_type),
  resource: strOrNull(r.resource),
  argsHash: str(r.args_hash),
  args: r.args === null ? null : (JSON.parse(str(r.args)) as Record<string, unknown>),
  memoryIds: r.memory_ids === null ? null : (JSON.parse(str(r.memory_ids)) as string[]),
  expiresAt: str(r.expires_at),
  maxUses: Number(r.max_uses),
  createdAt: str(r.created_at),
  // absent when NULL (the default): a confirmation made without `usableBy` reads back as it was made
  ...(r.usable_by === null || r.usable_by === undefined ? {} : { usableBy: JSON.parse(str(r.usable_by)) as string[] }),
  auditSeq: Number(r.audit_seq),
});

export const toAudit = (r: Row): AuditEntry => ({
  tenant: str(r.tenant),
  seq: Number(r.seq),
  prevHash: str(r.prev_hash),
  op: str(r.op) as AuditOp,
  payload: JSON.parse(str(r.payload)) as Record<string, unknown>,
  policyVersion: str(r.policy_version),
  hash: str(r.hash),
});

export const toCheckpoint = (r: Row): Checkpoint => ({
  formatVersion: 1,
  tenant: str(r.tenant),
  seq: Number(r.seq),
  hash: str(r.hash),
  at: str(r.at),
  publicKey: str(r.public_key),
  signature: str(r.signature),
});

/**
 * The search words of a free-text query: NFKC-normalised runs of letters and digits, at most 64,
 * deduplicated (no operator of any query language gets through).
 */
export function searchTokens(text: string): string[] {
  const tokens = [...text.normalize('NFKC').matchAll(/[\p{L}\p{N}]+/gu)].map((m) => m[0]).filter((t) => t.length > 0);
  return [...new Set(tokens.slice(0, 64))];
}

export const toToken = (r: Row): TokenRow => ({
  id: str(r.id),
  tenant: strOrNull(r.tenant),
  principalId: strOrNull(r.principal_id),
  hash: str(r.hash),
  createdAt: str(r.created_at),
  revokedAt: strOrNull(r.revoked_at),
});

/** Corroborations in stored order: by time, then id (what every driver's `corroborationsFor` returns). */
export const byAtThenId = (a: Corroboration, b: Corroboration): number => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export const toReviewNote = (r: Row): ReviewNoteRow => ({
  id: str(r.id),
  tenant: str(r.tenant),
  decisionId: str(r.decision_id),
  verdict: 'rejected',
  by: str(r.by_principal),
  note: str(r.note),
  at: str(r.at),
});

/**
 * The lineage of `ids` (each record's derivation edges, for it and every ancestor in the tenant),
 * walked a generation at a time over `getRecords` (one call per generation). Ids that are not
 * records of the tenant are left out.
 */
export async function walkLineage(getRecords: (ids: readonly string[]) => Promise<readonly MemoryRecord[]>, ids: readonly string[]): Promise<Map<string, DerivationEdge[]>> {
  const out = new Map<string, DerivationEdge[]>();
  let frontier = [...new Set(ids)];
  while (frontier.length > 0) {
    const known = await getRecords(frontier.filter((id) => !out.has(id)));
    const next: string[] = [];
    for (const r of known) {
      out.set(r.id, [...r.derivedFrom]);
      for (const e of r.derivedFrom) if (!out.has(e.from)) next.push(e.from);
    }
    frontier = [...new Set(next)];
  }
  return out;
}

/** A `session_log` row as an entry (its summary is JSON). */
export function toLogEntry(row: Row): SessionLogEntry {
  return { ord: Number(row.ord), recordId: str(row.record_id), hash: str(row.hash), summary: JSON.parse(str(row.summary)) as Taint };
}

/**
 * A lineage map from the rows of a one-statement lineage walk (the drivers' recursive statements):
 * one row per (record, edge) in edge order, `from_id` NULL for a record without edges.
 */
export function lineageFromRows(rows: readonly Row[]): Map<string, DerivationEdge[]> {
  const out = new Map<string, DerivationEdge[]>();
  for (const row of rows) {
    const id = str(row.id);
    const list = out.get(id) ?? [];
    if (row.from_id !== null) list.push({ from: str(row.from_id), transform: str(row.transform) as Transform, kind: str(row.kind) as EdgeKind });
    out.set(id, list);
  }
  return out;
}

/**
 * A lineage (see {@link walkLineage}) with each record's session context spelled out: a record
 * that refers to its session's read log (`sessionContext`, core/session.ts) derives from every
 * record of the log's prefix, each a `session` edge — as when each edge was stored on its own.
 * The prefixes are read as the store holds them; whether one matches the hash its record refers to
 * is for the facade to judge (src/api/provenance.ts).
 *
 * @param base - the stored edges of `ids` and their ancestors (the driver's own walk).
 * @param getRecords - the records of the tenant among some ids.
 * @param prefixes - session logs' record ids, each up to a length (one batched read).
 */
export async function withSessionLineage(
  base: (ids: readonly string[]) => Promise<Map<string, DerivationEdge[]>>,
  getRecords: (ids: readonly string[]) => Promise<readonly MemoryRecord[]>,
  prefixes: (lengths: ReadonlyMap<string, number>) => Promise<Map<string, string[]>>,
  ids: readonly string[],
): Promise<Map<string, DerivationEdge[]>> {
  const out = await base(ids);
  const logs = new Map<string, string[]>();
  let todo = [...out.keys()];
  while (todo.length > 0) {
    const refs = (await getRecords(todo)).filter((r) => r.sessionContext !== undefined);
    // the logs this generation needs that are not read yet, in one batched read
    const want = new Map<string, number>();
    for (const r of refs) {
      const ref = r.sessionContext as SessionRef;
      if ((logs.get(ref.sessionId)?.length ?? -1) < ref.length) want.set(ref.sessionId, Math.max(want.get(ref.sessionId) ?? 0, ref.length));
    }
    if (want.size > 0) for (const [s, log] of await prefixes(want)) logs.set(s, log);
    const next = new Set<string>();
    for (const r of refs) {
      const ref = r.sessionContext as SessionRef;
      const edges = withSessionEdges(out.get(r.id) ?? r.derivedFrom, ref, logs.get(ref.sessionId) ?? []);
      out.set(r.id, edges);
      for (const e of edges) if (!out.has(e.from)) next.add(e.from);
    }
    todo = [];
    if (next.size === 0) break;
    for (const [k, v] of await base([...next])) {
      if (out.has(k)) continue;
      out.set(k, v);
      todo.push(k);
    }
  }
  return out;
}
