/**
 * Shared pieces of `npm run reliability`: the suite result shape, options, a seeded PRNG,
 * temp directories, and a fresh store with the standard cast.
 */
import { type Memory, type PolicyInput, openMemory } from '../src/index.js';
import { mulberry32 } from '../src/bench/stats.js';
import { TEST_POLICY } from '../test/helpers.js';

export { percentile } from '../src/bench/stats.js';
export { rmDir, tempDir } from '../test/support/tmp.js';

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

/** A small deterministic PRNG (the bench's mulberry32) so a failing run can be repeated with --seed. */
export function rng(seed: number): { next: () => number; int: (lo: number, hi: number) => number; pick: <T>(xs: readonly T[]) => T } {
  const next = mulberry32(seed);
  const int = (lo: number, hi: number): number => lo + Math.floor(next() * (hi - lo + 1));
  return { next, int, pick: (xs) => xs[Math.floor(next() * xs.length)] as (typeof xs)[number] };
}

/** DEFAULT_POLICY plus trusted upstreams: the test suite's policy under a name of its own. */
export const REL_POLICY: PolicyInput = { ...TEST_POLICY, name: 'memauth-reliability' };

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
  constructor(
    readonly suite: string,
    private readonly maxShown = 8,
  ) {}
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
