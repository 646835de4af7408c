/**
 * The audit log's pure core (docs/design.md § Audit log): operations, the hash of an entry, the next
 * entry of a tenant's chain, chain verification, and signed checkpoints. No I/O: the stores persist
 * what this computes.
 */
import { createPrivateKey, createPublicKey, sign as edSign, verify as edVerify, type KeyObject } from 'node:crypto';
import { canonicalJson, canonicalJsonOfPlain, hashCanonical, sha256Hex } from './canonical.js';

/**
 * Audit operations (docs/design.md § Audit log), plus `principal` (registrations), `session`, and the
 * token operations `token_issue`, `token_rotate`, `token_revoke` (see core/identity.ts).
 */
export const AUDIT_OPS = ['principal', 'policy', 'session', 'write', 'derive', 'corroborate', 'confirm', 'decide', 'delete', 'token_issue', 'token_rotate', 'token_revoke'] as const;
export type AuditOp = (typeof AUDIT_OPS)[number];

/** One link of a tenant's hash chain. `hash = SHA-256(canonical JSON of {seq, prevHash, op, payload, policyVersion})`. */
export interface AuditEntry {
  readonly tenant: string;
  readonly seq: number;
  readonly prevHash: string;
  readonly op: AuditOp;
  readonly payload: Readonly<Record<string, unknown>>;
  readonly policyVersion: string;
  readonly hash: string;
}

/** Format version of the hashed structure; pinned by a golden fixture test. */
export const AUDIT_FORMAT_VERSION = 1;

/** The chain's first `prevHash`: bound to the tenant so a chain cannot be moved between tenants. */
export function genesisHash(tenant: string): string {
  return hashCanonical({ memauth: 'audit-genesis', formatVersion: AUDIT_FORMAT_VERSION, tenant });
}

/** Hash of an entry's hashed fields (RFC 8785 canonical JSON, SHA-256 hex). */
export function entryHash(e: Pick<AuditEntry, 'seq' | 'prevHash' | 'op' | 'payload' | 'policyVersion'>): string {
  return hashCanonical({ seq: e.seq, prevHash: e.prevHash, op: e.op, payload: e.payload, policyVersion: e.policyVersion });
}

/** JSON text of entries' payloads, for the ones {@link nextEntry} already serialised. */
const payloadTexts = new WeakMap<AuditEntry, string>();

/**
 * The JSON text to store for an entry's payload: the canonical JSON {@link nextEntry} hashed
 * (so it is serialised once), else `JSON.stringify`. Both parse back to the same value.
 */
export function payloadJson(e: AuditEntry): string {
  return payloadTexts.get(e) ?? JSON.stringify(e.payload);
}

/** Build the next entry after `head` (or the genesis when `head` is null). */
export function nextEntry(tenant: string, head: { seq: number; hash: string } | null, op: AuditOp, payload: Record<string, unknown>, policyVersion: string): AuditEntry {
  const seq = head ? head.seq + 1 : 1;
  const prevHash = head ? head.hash : genesisHash(tenant);
  // plain JSON data (what the facade builds): stored as it is, hashed as its JSON text will be
  // read back; that text is the payload's canonical JSON, serialised once for both
  const text = canonicalJsonOfPlain(payload);
  const qOp = canonicalJsonOfPlain(op);
  const qVersion = canonicalJsonOfPlain(policyVersion);
  const qPrev = canonicalJsonOfPlain(prevHash);
  const qSeq = canonicalJsonOfPlain(seq);
  if (text !== null && qOp !== null && qVersion !== null && qPrev !== null && qSeq !== null) {
    // the canonical JSON of { seq, prevHash, op, payload, policyVersion }: keys in UTF-16 order
    const hashed = `{"op":${qOp},"payload":${text},"policyVersion":${qVersion},"prevHash":${qPrev},"seq":${qSeq}}`;
    const e: AuditEntry = { tenant, seq, prevHash, op, payload, policyVersion, hash: sha256Hex(hashed) };
    payloadTexts.set(e, text);
    return e;
  }
  // hash exactly what is stored: the JSON round trip drops what JSON cannot hold
  const stored = JSON.parse(JSON.stringify(payload)) as Record<string, unknown>;
  const e = { tenant, seq, prevHash, op, payload: stored, policyVersion };
  return { ...e, hash: entryHash(e) };
}

export type ChainProblem = 'seq_gap' | 'prev_hash_mismatch' | 'hash_mismatch' | 'unknown_op' | 'tenant_mismatch';

export interface ChainVerdict {
  readonly ok: boolean;
  readonly entries: number;
  readonly head: { readonly seq: number; readonly hash: string } | null;
  /** seq of the first entry that does not verify (or where one is missing). */
  readonly firstBadSeq?: number;
  readonly problem?: ChainProblem;
}

/**
 * Verify a tenant's chain, entries in stored order. Names the first broken entry: a changed
 * field (`hash_mismatch`), a removed or reordered entry (`seq_gap` / `prev_hash_mismatch`).
 * Truncation of the tail is invisible here by construction: compare with a signed checkpoint.
 */
/**
 * Incremental chain verifier: feed entries in stored order with {@link ChainVerifier.push}.
 * Names the first broken entry: a changed field (`hash_mismatch`), a removed or reordered
 * entry (`seq_gap` / `prev_hash_mismatch`). Truncation of the tail is invisible here by
 * construction: compare the head with a signed {@link Checkpoint}.
 */
export class ChainVerifier {
  private prev: string;
  private expected = 1;
  private count = 0;
  private head: { seq: number; hash: string } | null = null;
  private failure: { firstBadSeq: number; problem: ChainProblem } | null = null;

  constructor(private readonly tenant: string) {
    this.prev = genesisHash(tenant);
  }

  /** @returns false once the chain is broken (further entries are ignored). */
  push(e: AuditEntry): boolean {
    if (this.failure) return false;
    let problem: ChainProblem | null = null;
    if (e.tenant !== this.tenant) problem = 'tenant_mismatch';
    else if (e.seq !== this.expected) problem = 'seq_gap';
    else if (!(AUDIT_OPS as readonly string[]).includes(e.op)) problem = 'unknown_op';
    else if (e.prevHash !== this.prev) problem = 'prev_hash_mismatch';
    else if (entryHash(e) !== e.hash) problem = 'hash_mismatch';
    if (problem) {
      this.failure = { firstBadSeq: this.expected, problem };
      return false;
    }
    this.prev = e.hash;
    this.head = { seq: e.seq, hash: e.hash };
    this.expected += 1;
    this.count += 1;
    return true;
  }

  verdict(): ChainVerdict {
    return this.failure ? { ok: false, entries: this.count, head: this.head, ...this.failure } : { ok: true, entries: this.count, head: this.head };
  }
}

/** Verify a whole chain held in memory (see {@link ChainVerifier}). */
export function verifyChain(tenant: string, entries: Iterable<AuditEntry>): ChainVerdict {
  const v = new ChainVerifier(tenant);
  for (const e of entries) if (!v.push(e)) break;
  return v.verdict();
}

/** A signed statement of a chain's head: makes truncation detectable. */
export interface Checkpoint {
  readonly formatVersion: 1;
  readonly tenant: string;
  readonly seq: number;
  readonly hash: string;
  readonly at: string;
  /** Ed25519 public key, SPKI DER, base64. */
  readonly publicKey: string;
  /** Ed25519 signature over the canonical JSON of the other fields except `signature`, base64. */
  readonly signature: string;
}

function checkpointBody(c: Omit<Checkpoint, 'signature'>): Buffer {
  return Buffer.from(canonicalJson({ formatVersion: c.formatVersion, tenant: c.tenant, seq: c.seq, hash: c.hash, at: c.at, publicKey: c.publicKey }));
}

/** Sign a checkpoint of `head` with an Ed25519 private key (PEM). */
export function signCheckpoint(tenant: string, head: { seq: number; hash: string }, at: string, privateKeyPem: string): Checkpoint {
  const priv: KeyObject = createPrivateKey(privateKeyPem);
  const publicKey = createPublicKey(priv).export({ type: 'spki', format: 'der' }).toString('base64');
  const body = { formatVersion: 1 as const, tenant, seq: head.seq, hash: head.hash, at, publicKey };
  const signature = edSign(null, checkpointBody(body), priv).toString('base64');
  return { ...body, signature };
}

/** Verify a checkpoint's signature, optionally against an expected public key (SPKI DER base64). */
export function checkpointSignatureValid(c: Checkpoint, expectedPublicKey?: string): boolean {
  if (expectedPublicKey !== undefined && c.publicKey !== expectedPublicKey) return false;
  try {
    const pub = createPublicKey({ key: Buffer.from(c.publicKey, 'base64'), format: 'der', type: 'spki' });
    return edVerify(null, checkpointBody(c), pub, Buffer.from(c.signature, 'base64'));
  } catch {
    return false;
  }
}

/** Short display form of a hash. */
export function shortHash(h: string): string {
  return h.slice(0, 12);
}

export { sha256Hex };
