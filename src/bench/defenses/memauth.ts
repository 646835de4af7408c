/**
 * Defense class `memauth` of the bench: the verdict is the decision memauth's own gate recorded.
 */
import type { Decision } from '../../core/types.js';
import type { Verdict } from './types.js';

/**
 * Defense class `memauth` — this project: origin-bound, non-malleable action authority
 * (docs/design.md; the paper behind MEM-INV-Bench). The verdict is the decision the store's own gate
 * (`Memory.authorize`, core/gate.ts `decide`) made and recorded: allowed unless the outcome is
 * `deny` (`would_deny` in observe mode lets the action proceed).
 */
export function memauthVerdict(decision: Pick<Decision, 'outcome' | 'reasons'>): Verdict {
  return {
    allowed: decision.outcome !== 'deny',
    reasons: decision.reasons.map((r) => r.code + (r.argument !== undefined ? `(${r.argument})` : '')),
  };
}
