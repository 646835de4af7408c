/**
 * Defense class `capability_ifc` of the bench: session-scoped information-flow control in the style
 * of CaMeL and FIDES, with its view (which items are tainted in this session). Pure.
 */
import { ALLOW, type GateRequest, type Verdict, memoryBorneValues } from './types.js';

/**
 * What a session-scoped information-flow monitor records and this class may read: which items
 * entered the current session as tool output (tainted), and which were recalled from long-term
 * memory (clean by assumption). Labels live for one session; nothing is carried across sessions.
 */
export interface IfcView {
  /**
   * items tainted in the current session: tool output read in it, and anything the agent wrote in
   * it after tainted data had entered its context (the session's context label)
   */
  readonly tainted: ReadonlySet<string>;
}

/**
 * Defense class `capability_ifc` — session-scoped capabilities / information-flow control, in the
 * style of CaMeL (Debenedetti et al., 2025: data from tools carries capabilities, a policy checks
 * them before a tool call) and FIDES (Costa et al., 2025: integrity labels propagated through the
 * planner's context).
 *
 * For a `high` action, an argument value is denied when any item supplying it is tainted: it was
 * read from a tool in the current session, or written by the agent after such data entered the
 * session. Long-term memory is treated as clean — the class's assumption — so a value recalled
 * from an earlier session passes whatever its origin.
 */
export function capabilityIfcGate(req: GateRequest, view: IfcView): Verdict {
  if (req.tier !== 'high') return ALLOW;
  const reasons: string[] = [];
  for (const v of memoryBorneValues(req.values)) {
    if (v.supportIds.some((id) => view.tainted.has(id))) reasons.push(`tainted_value(${v.argument})`);
  }
  return reasons.length === 0 ? ALLOW : { allowed: false, reasons };
}
