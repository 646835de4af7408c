/**
 * A baseline for the performance suite: the reference monitor of the temporal memory
 * authorization paper (MEM-INV-Bench's `monitor.py`), re-stated in TypeScript so both run in one
 * process on the same workload. Everything lives in RAM: items with an action class bound at
 * write time from their origin, elevation only by two independent trusted corroborators, an
 * allow/deny check over the supporting items, and an append-only SHA-256 hash chain of every
 * write, elevation and decision (JSON with sorted keys). Its search is TF-IDF by full scan, as
 * the paper's in-memory backend does. No persistence, no tenants, no lineage, no replay.
 *
 * Source of the model: the paper in docs/design.md § References (mechanisms M1–M3). Imports
 * node:crypto only.
 */
import { createHash } from 'node:crypto';

/** Origins in the paper's order: a higher number is more trusted. */
export const Origin = { external: 0, agent: 1, trustedTool: 2, user: 3 } as const;
export type OriginLevel = (typeof Origin)[keyof typeof Origin];

/** ACT: may drive a consequential action. */
const ACT = 1;

interface Item {
  readonly id: string;
  readonly content: string;
  readonly origin: OriginLevel;
  actClass: number;
  readonly terms: Map<string, number>;
}

interface LogEntry {
  readonly seq: number;
  readonly op: string;
  readonly payload: Record<string, unknown>;
  readonly prev: string;
  readonly hash: string;
}

const GENESIS = '0'.repeat(64);
const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/** JSON with object keys sorted at every depth (what Python's `sort_keys=True` produces). */
function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(', ')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}: ${sortedJson(o[k])}`)
      .join(', ')}}`;
  }
  return JSON.stringify(v);
}

function terms(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const t of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) m.set(t, (m.get(t) ?? 0) + 1);
  return m;
}

/** The in-RAM reference monitor: write, elevate, authorize, search, verify the log. */
export class ReferenceMonitor {
  private readonly items = new Map<string, Item>();
  private readonly log: LogEntry[] = [];
  private readonly df = new Map<string, number>();
  private next = 0;

  private append(op: string, payload: Record<string, unknown>): void {
    const prev = this.log.length > 0 ? this.log[this.log.length - 1]!.hash : GENESIS;
    const seq = this.log.length;
    this.log.push({ seq, op, payload, prev, hash: sha256(sortedJson({ seq, op, payload, prev_hash: prev })) });
  }

  /** M1: the action class is fixed at write time from the origin (user and trusted tools: ACT). */
  write(content: string, origin: OriginLevel): string {
    const id = `item_${this.next++}`;
    const item: Item = { id, content, origin, actClass: origin >= Origin.trustedTool ? ACT : 0, terms: terms(content) };
    this.items.set(id, item);
    for (const t of item.terms.keys()) this.df.set(t, (this.df.get(t) ?? 0) + 1);
    this.append('write', { item_id: id, origin, act_class: item.actClass, content_sha: sha256(content).slice(0, 16) });
    return id;
  }

  /** M2: ACT only with at least two distinct trusted corroborators other than the item itself. */
  elevate(id: string, corroborators: readonly string[]): boolean {
    const item = this.items.get(id);
    if (!item) return false;
    const trusted = new Set(corroborators.filter((c) => c !== id && (this.items.get(c)?.origin ?? -1) >= Origin.trustedTool));
    if (trusted.size < 2) return false;
    item.actClass = ACT;
    this.append('elevate', { item_id: id, via: 'corroboration', by: [...trusted], to: ACT });
    return true;
  }

  /** Allow iff every supporting item is ACT; the decision is logged either way. */
  authorize(action: Record<string, unknown>, supporting: readonly string[]): boolean {
    const sig = sha256(sortedJson(action));
    const blockers = supporting.filter((id) => (this.items.get(id)?.actClass ?? 0) < ACT);
    if (blockers.length === 0) this.append('act_allow', { sig: sig.slice(0, 16), reason: 'all_authorized' });
    else this.append('act_deny', { sig: sig.slice(0, 16), blockers });
    return blockers.length === 0;
  }

  /** TF-IDF over every item (a full scan), best `k` ids. */
  search(query: string, k: number): string[] {
    const q = [...terms(query).keys()];
    const n = this.items.size;
    const scored: Array<[number, string]> = [];
    for (const it of this.items.values()) {
      let s = 0;
      for (const t of q) {
        const tf = it.terms.get(t);
        if (tf !== undefined) s += tf * Math.log(1 + n / (this.df.get(t) ?? 1));
      }
      if (s > 0) scored.push([s, it.id]);
    }
    return scored
      .sort((a, b) => b[0] - a[0] || (a[1] < b[1] ? -1 : 1))
      .slice(0, k)
      .map(([, id]) => id);
  }

  /** Re-derive the hash chain. */
  verify(): boolean {
    let prev = GENESIS;
    for (const e of this.log) {
      if (e.prev !== prev || sha256(sortedJson({ seq: e.seq, op: e.op, payload: e.payload, prev_hash: e.prev })) !== e.hash) return false;
      prev = e.hash;
    }
    return true;
  }
}
