/**
 * Shared pieces of `npm run reliability`: the suite result shape, options, a seeded PRNG,
 * temp directories, and a fresh store with the standard cast.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_POLICY, type Memory, type PolicyInput, openMemory } from '../src/index.js';

/** What every suite returns: one row of the table. */
export interface SuiteResult {
  readonly suite: string;
  /** cases tried (kills, mutations, generated inputs, attempts, requests…). */
  readonly cases: number;
  /** cases that did not end as required. */
  readonly failures: number;
  /** acknowledged items missing afterwards (crash) or content left behind (deletion). */
  readonly lost: number;
  /** figures and the first few failure descriptions. */
  readonly notes: string[];
}

export interface Options {
  readonly long: boolean;
  readonly seed: number;
  readonly verbose: boolean;
}

/** Mulberry32: a small deterministic PRNG so a failing run can be repeated with --seed. */
export function rng(seed: number): { next: () => number; int: (lo: number, hi: number) => number; pick: <T>(xs: readonly T[]) => T } {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1));
  return { next, int, pick: (xs) => xs[Math.floor(next() * xs.length)] as (typeof xs)[number] };
}

export function tempDir(prefix = 'memauth-rel-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function rmDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** DEFAULT_POLICY plus trusted upstreams (as the test suite's policy). */
export const REL_POLICY: PolicyInput = {
  ...DEFAULT_POLICY,
  name: 'memauth-reliability',
  sources: [
    ...(DEFAULT_POLICY.sources ?? []),
    { match: 'bankapi:*', authority: 'trusted_tool_verified', description: 'verified bank registry' },
    { match: 'registry:*', authority: 'trusted_tool_verified', description: 'vendor registry' },
    { match: 'crm:*', authority: 'trusted_tool_verified', description: 'internal CRM' },
  ],
};

export type Kind = 'system' | 'user' | 'tool' | 'agent' | 'external';
export const KINDS: readonly Kind[] = ['system', 'user', 'tool', 'agent', 'external'];

/** The standard cast of principals (as test/helpers.ts). */
export async function registerCast(mem: Memory, tenant: string): Promise<void> {
  const reg = (id: string, kind: Kind, domain: string): Promise<unknown> => mem.registerPrincipal({ tenant, id, kind, domain });
  await reg('browser', 'tool', 'browser.vendor');
  await reg('alice', 'user', 'alice');
  await reg('agent', 'agent', 'agent');
  await reg('mallory', 'external', 'mallory.example');
  await reg('pipeline', 'system', 'pipeline');
  await reg('bank', 'tool', 'bank.example');
  await reg('bank2', 'tool', 'bank.example');
  await reg('registry', 'tool', 'registry.example');
  await reg('crm', 'tool', 'crm.example');
}

export async function openStore(path: string, opts: { clock?: () => Date; checkpointKey?: false } = {}): Promise<Memory> {
  return openMemory({ path, policy: REL_POLICY, ...(opts.clock ? { clock: opts.clock } : {}), ...(opts.checkpointKey === false ? { checkpointKey: false } : {}) });
}

/** Collects failures with a bounded list of descriptions. */
export class Tally {
  cases = 0;
  failures = 0;
  lost = 0;
  readonly notes: string[] = [];
  private shown = 0;
  constructor(readonly suite: string, private readonly maxShown = 8) {}
  ok(cond: boolean, what: () => string): boolean {
    this.cases += 1;
    if (!cond) {
      this.failures += 1;
      if (this.shown < this.maxShown) {
        this.shown += 1;
        this.notes.push(`FAIL ${what()}`);
      }
    }
    return cond;
  }
  fail(what: string): void {
    this.failures += 1;
    if (this.shown < this.maxShown) {
      this.shown += 1;
      this.notes.push(`FAIL ${what}`);
    }
  }
  note(s: string): void {
    this.notes.push(s);
  }
  result(): SuiteResult {
    return { suite: this.suite, cases: this.cases, failures: this.failures, lost: this.lost, notes: this.notes };
  }
}

/** Percentile of a sorted array. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}
