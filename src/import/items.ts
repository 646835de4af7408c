/**
 * What the import parsers produce: plain items and problems, no I/O. `importMemories`
 * (./index.ts) turns items into memauth writes.
 */
import type { Claim } from '../core/types.js';

/** Formats `memauth import` reads. */
export const IMPORT_FORMATS = ['mcp-memory', 'mem0'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

/** One memory parsed from an export, ready to be written. */
export interface ImportItem {
  /** the item's id within the file; the record's source is `import:<format>:<file>#<ref>`. */
  readonly ref: string;
  /** 1-based line of the item in a JSONL file; null for JSON documents. */
  readonly line: number | null;
  /** 1-based position of the item in a JSON document's list; null for JSONL. */
  readonly index: number | null;
  readonly content: string;
  /** when the source said it, as found in the file (not yet validated). */
  readonly createdAt?: string;
  /** when it expires, as found in the file (not yet validated). */
  readonly expiresAt?: string;
  /** typed claims the item states, as found in the file (checked when written; dropped with a warning when invalid). */
  readonly claims?: readonly Claim[];
}

/** Why an item was not imported. */
export const SKIP_REASONS = ['invalid_json', 'invalid_item', 'unknown_type', 'empty_content', 'too_long', 'expired', 'deleted_in_store', 'write_refused'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

/** An item (or line) that was not imported, with where it is and why. */
export interface ImportProblem {
  readonly line: number | null;
  readonly index: number | null;
  /** the item's ref when it has one. */
  readonly ref: string | null;
  readonly reason: SkipReason;
  readonly detail: string;
}

/** What a parser returns: the items, and the problems that did not stop it. */
export interface Parsed {
  readonly items: ImportItem[];
  readonly problems: ImportProblem[];
}

/** Largest content a record may hold (the write API's limit). */
export const MAX_CONTENT = 1_000_000;

/** A ref component that cannot break the `#…` fragment or its separators. */
export function refPart(s: string): string {
  return encodeURIComponent(s);
}

/** A short, single-line rendering of a zod-like issue list. */
export function describeIssues(issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>): string {
  return issues
    .slice(0, 3)
    .map((i) => `${i.path.map(String).join('.') || '(item)'}: ${i.message}`)
    .join('; ');
}
