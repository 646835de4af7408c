/**
 * Shared shapes of the bench's defense classes: the class names, a proposed action, a verdict,
 * value-level attribution, and helpers every baseline uses. Types and pure helpers only.
 */
import type { Tier } from '../../core/types.js';

/** The five defense classes the study compares. */
export const DEFENSE_CLASSES = ['none', 'content', 'lineage', 'capability_ifc', 'memauth'] as const;
export type DefenseName = (typeof DEFENSE_CLASSES)[number];

/** An action as the agent proposed it. */
export interface ProposedAction {
  readonly type: string;
  readonly args: Readonly<Record<string, unknown>>;
}

/** A gate's answer: allowed or not, and short machine-readable reasons. */
export interface Verdict {
  readonly allowed: boolean;
  readonly reasons: readonly string[];
}

/**
 * Value-level attribution of one argument value of the proposed action: which memory items in
 * the agent's context at decision time have text that supplies it, and whether the user's
 * current turn does. The harness computes it the same way for every baseline (and it is the same
 * matching memauth's gate does), so no baseline is weakened by a worse attribution than memauth's.
 */
export interface ValueSupport {
  readonly argument: string;
  readonly value: string;
  /** ids of context items whose text supplies the value */
  readonly supportIds: readonly string[];
  readonly userTurn: boolean;
}

/** What every baseline gate receives besides its own view of the store. */
export interface GateRequest {
  readonly action: ProposedAction;
  /** risk tier from the bench policy (action type and arguments only): baselines gate `high` actions, as memauth does */
  readonly tier: Tier;
  readonly values: readonly ValueSupport[];
}

/** Values that come from memory: not supplied by the user's turn and supplied by at least one context item. */
export function memoryBorneValues(values: readonly ValueSupport[]): ValueSupport[] {
  return values.filter((v) => !v.userTurn && v.supportIds.length > 0);
}

export const ALLOW: Verdict = Object.freeze({ allowed: true, reasons: Object.freeze([]) as readonly string[] });
