/**
 * The five defense classes of the study, each a real gate over the same event stream:
 * `none`, `content`, `lineage`, `capability_ifc` (pure functions over what a store of their kind
 * records, pulled from the real store by {@link observe}) and `memauth` (the store's own gate).
 */
import type { Decision, Tier } from '../../core/types.js';
import { capabilityIfcGate } from './capability.js';
import { type ContentDetectorOptions, contentGate } from './content.js';
import { lineageGate } from './lineage.js';
import { memauthVerdict } from './memauth.js';
import { noneGate } from './none.js';
import type { Observation } from './observe.js';
import { DEFENSE_CLASSES, type DefenseName, type ProposedAction, type Verdict } from './types.js';

export { DEFENSE_CLASSES, type DefenseName, type ProposedAction, type Verdict, type ValueSupport, type GateRequest } from './types.js';
export { contentGate, injectionScore, DEFAULT_DETECTOR_RULES, type ContentView, type ContentDetectorOptions, type DetectorRule } from './content.js';
export { lineageGate, untrustedLineage, type LineageView, type LineageNode } from './lineage.js';
export { capabilityIfcGate, type IfcView } from './capability.js';
export { memauthVerdict } from './memauth.js';
export { noneGate } from './none.js';
export { observe, attributeValues, type Observation } from './observe.js';

/** What each class models, for reports. */
export const DEFENSE_DESCRIPTIONS: Readonly<Record<DefenseName, string>> = Object.freeze({
  none: 'no defense: the action executes as proposed',
  content: 'content screening: injection-phrasing detector over supporting memory (threshold) or ≥2 items asserting the value (Prompt Guard / A-MemGuard style)',
  lineage: 'lineage: deny when a supporting item keeps a recorded derivation edge to an untrusted root; allow when none survives (MemLineage style)',
  capability_ifc: 'session-scoped capabilities / IFC: taints tool output of the current session, long-term memory is clean (CaMeL / FIDES style)',
  memauth: 'memauth: origin-bound action authority, value-level provenance, independent corroboration, scoped confirmation',
});

/** Parse a `--defenses` list (`all`, or names separated by commas). */
export function parseDefenses(list: readonly string[]): DefenseName[] {
  const names = list
    .flatMap((x) => x.split(','))
    .map((x) => x.trim())
    .filter((x) => x !== '');
  if (names.includes('all')) return [...DEFENSE_CLASSES];
  const out: DefenseName[] = [];
  for (const n of names) {
    if (!(DEFENSE_CLASSES as readonly string[]).includes(n)) throw new Error(`unknown defense ${JSON.stringify(n)}; known: ${DEFENSE_CLASSES.join(', ')}, all`);
    if (!out.includes(n as DefenseName)) out.push(n as DefenseName);
  }
  return out;
}

/** Every class's verdict on one proposed action: baselines over their views, memauth from its decision. */
export function verdicts(params: {
  action: ProposedAction;
  tier: Tier;
  observation: Observation;
  decision: Pick<Decision, 'outcome' | 'reasons'>;
  content?: ContentDetectorOptions;
}): Record<DefenseName, Verdict> {
  const { action, tier, observation: o } = params;
  const req = { action, tier, values: o.values };
  return {
    none: noneGate(),
    content: contentGate(req, o.content, params.content),
    lineage: lineageGate(req, o.lineage),
    capability_ifc: capabilityIfcGate(req, o.ifc),
    memauth: memauthVerdict(params.decision),
  };
}
