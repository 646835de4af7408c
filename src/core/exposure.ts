/**
 * What the model sees is what the session read (docs/design.md § What the model sees): every piece of text shown to an agent is a record (or part of one) with its own
 * authority, and showing it is recorded as reading that record. Text that is not read-marked
 * when shown — a corroboration's evidence shown beside the record it corroborates, the source or
 * content of an ancestor in a replay or a lineage graph — is shown only when it cannot lower what
 * the agent is known to have read: its writer's authority is at least the corroboration floor
 * (the policy's `corroboration.minAuthority`) and at least that of the record it is shown with.
 * Otherwise it is withheld (null, with a flag saying so). Pure: no I/O.
 */
import { type Authority, atLeast } from './authority.js';
import type { Corroboration } from './types.js';

/** A corroboration as an agent sees it: the evidence may be withheld. */
export interface CorroborationView extends Omit<Corroboration, 'evidenceRef'> {
  /** the evidence reference, or null when withheld from agents (see {@link evidenceShown}). */
  readonly evidenceRef: string | null;
  /** true when the evidence is not shown to agents (people — the admin token — still see it). */
  readonly evidenceWithheld: boolean;
}

/**
 * May text written at `textAuthority` be shown to an agent, unmarked, as part of something of
 * authority `container` (a record's lowest authority; the floor itself when it stands alone)?
 * @returns true when `textAuthority` is at least both `floor` and `container`.
 */
export function mayShowText(textAuthority: Authority, container: Authority, floor: Authority): boolean {
  return atLeast(textAuthority, floor) && atLeast(textAuthority, container);
}

/**
 * Is a corroboration's evidence shown in the view of the record it corroborates? Only when the
 * corroboration's authority (min of its principal's ceiling and its evidence's authority) is at
 * least the counting floor and at least the record's own lowest authority: nothing a lower
 * principal writes is displayed as part of a higher record.
 */
export function evidenceShown(c: Pick<Corroboration, 'authority'>, recordAuthority: Authority, floor: Authority): boolean {
  return mayShowText(c.authority, recordAuthority, floor);
}

/**
 * The corroborations of a record as an agent may see them (see {@link evidenceShown}).
 * @param recordAuthority - the corroborated record's `taint.lowestAuthority`.
 * @param floor - the policy's `corroboration.minAuthority`.
 */
export function corroborationViews(list: readonly Corroboration[], recordAuthority: Authority, floor: Authority): CorroborationView[] {
  return list.map((c) => (evidenceShown(c, recordAuthority, floor) ? { ...c, evidenceWithheld: false } : { ...c, evidenceRef: null, evidenceWithheld: true }));
}
