/**
 * Rows versus the audit entries that recorded them (docs/design.md § Audit log: every row that can
 * grant authority or identity is checked against the chain): does a record, decision,
 * corroboration or confirmation row hold exactly what its `write`/`derive`, `decide`,
 * `corroborate` or `confirm` entry recorded? A row inserted or altered outside the API does not.
 * Used by the facade's fact loading (api/provenance.ts), `memauth audit verify` (api/verify.ts)
 * and the metrics (api/metrics-store.ts). Pure: no I/O; imports only from src/core.
 */
import type { AuditEntry } from './audit.js';
import { hashCanonical } from './canonical.js';
import { hashedBody } from './claims.js';
import { contentHashMatches } from './content-hash.js';
import type { Confirmation, Corroboration, Decision, MemoryRecord } from './types.js';

/**
 * Does a record row match the write/derive audit entry that created it? A keyed content hash
 * (src/core/content-hash.ts) is checked against the content with `contentKey`, the tenant's key
 * (without it, a record with content and a keyed hash does not match).
 */
export function recordMatchesEntry(r: MemoryRecord, e: AuditEntry, contentKey?: string | null): boolean {
  if (e.op !== 'write' && e.op !== 'derive') return false;
  const p = e.payload as Record<string, unknown>;
  if (p.refused !== undefined || p.recordId !== r.id || p.contentHash !== r.contentHash || p.scope !== r.scope) return false;
  if ((p.expiresAt ?? null) !== r.expiresAt || p.createdAt !== r.createdAt) return false;
  if (hashCanonical(p.origin) !== hashCanonical(r.origin) || hashCanonical(p.taint) !== hashCanonical(r.taint) || hashCanonical(p.derivedFrom) !== hashCanonical(r.derivedFrom)) return false;
  // a record written in a session refers to its context once (core/session.ts); older entries have no such field
  if (hashCanonical(p.sessionContext ?? null) !== hashCanonical(r.sessionContext ?? null)) return false;
  // a version written by supersede names its chain and the version it replaced (core/versions.ts)
  if (hashCanonical(p.version ?? null) !== hashCanonical(r.version ?? null)) return false;
  if (p.writeReason !== r.audit.writeReason || e.policyVersion !== r.audit.policyVersion) return false;
  // typed claims: the entry holds their count (absent: none); their values are covered by the content hash; erased with the content
  if (r.content !== null && (p.claimCount ?? 0) !== (r.claims?.length ?? 0)) return false;
  if (r.content === null && r.claims !== undefined) return false;
  if (r.content !== null && !contentHashMatches(hashedBody(r.content, r.claims), r.contentHash, contentKey)) return false;
  return true;
}

/**
 * Does a decision row match the `decide` audit entry that recorded it? Every field the entry holds
 * (the per-dependency authorities are not in it: replay recomputes them from the log).
 */
export function decisionMatchesEntry(d: Decision, e: AuditEntry): boolean {
  const p = e.payload as Record<string, unknown>;
  if (e.op !== 'decide' || p.refused !== undefined || p.decisionId !== d.id || e.seq !== d.auditSeq || e.policyVersion !== d.policyVersion) return false;
  if (
    p.outcome !== d.outcome ||
    p.at !== d.at ||
    (p.sessionId ?? null) !== d.sessionId ||
    (p.requester ?? null) !== (d.requester ?? null) ||
    p.argsHash !== d.argsHash ||
    p.tier !== d.tier ||
    p.mode !== d.mode ||
    (p.confirmationId ?? null) !== d.confirmationId
  )
    return false;
  const deps = d.dependencies.map((x) => ({ memoryId: x.memoryId, why: x.why }));
  return (
    hashCanonical(p.action) === hashCanonical(d.action) &&
    hashCanonical(p.reasons) === hashCanonical(d.reasons) &&
    hashCanonical(p.values) === hashCanonical(d.values) &&
    hashCanonical(p.intent ?? null) === hashCanonical(d.intent ?? null) &&
    (p.contextWaived ?? null) === (d.contextWaived ?? null) &&
    hashCanonical(p.dependencies) === hashCanonical(deps)
  );
}

/** Does a corroboration row match its `corroborate` audit entry? */
export function corroborationMatchesEntry(c: Corroboration, e: AuditEntry): boolean {
  const p = e.payload as Record<string, unknown>;
  return (
    e.op === 'corroborate' &&
    p.refused === undefined &&
    p.corroborationId === c.id &&
    p.recordId === c.recordId &&
    p.principalId === c.principalId &&
    p.authority === c.authority &&
    p.domain === c.domain &&
    p.evidenceRef === c.evidenceRef &&
    p.at === c.at
  );
}

/** Does a confirmation row match its `confirm` audit entry? */
export function confirmationMatchesEntry(c: Confirmation, e: AuditEntry): boolean {
  const p = e.payload as { refused?: unknown; confirmation?: unknown };
  if (e.op !== 'confirm' || p.refused !== undefined || typeof p.confirmation !== 'object' || p.confirmation === null) return false;
  return confirmationPayloadMatches(c, p.confirmation);
}

/** A confirmation row without its audit seq, `usableBy` left out when it is the default (as older entries recorded it). */
function comparable(c: Record<string, unknown>): Record<string, unknown> {
  const { auditSeq: _seq, usableBy, ...rest } = c;
  return usableBy === undefined || usableBy === null ? rest : { ...rest, usableBy };
}

/** Does a confirmation row equal the confirmation its `confirm` audit entry recorded? */
export function confirmationPayloadMatches(c: Confirmation, recorded: object): boolean {
  return hashCanonical(comparable(recorded as Record<string, unknown>)) === hashCanonical(comparable({ ...c }));
}
