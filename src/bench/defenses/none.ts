/**
 * Defense class `none` of the bench: every proposed action executes (the reference for attack
 * success and utility).
 */
import { ALLOW, type Verdict } from './types.js';

/**
 * Defense class `none`: no defense. The proposed action executes as proposed. It is the upper
 * bound of attack success for an agent and the reference for utility.
 */
export function noneGate(): Verdict {
  return ALLOW;
}
