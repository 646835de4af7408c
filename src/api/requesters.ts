/**
 * Who asks, and who may use what they are given (docs/design.md § Human confirmation, § Action gate):
 * the requester of a decision, the principals a confirmation is usable by, and the dry run's
 * result type. (Whether a confirmation row matches its audit entry: core/row-match.ts.)
 */
import type { Requester } from '../core/confirmation.js';
import { MemauthError } from '../core/errors.js';
import type { Decision } from '../core/types.js';
import type { StorageReader } from '../store/driver.js';

/**
 * What {@link Memory.evaluate} returns: the decision the gate would make now, with nothing
 * recorded — no id, no audit entry, no decision row, no confirmation use, no session read or
 * session created. `confirmationId` is the confirmation an authorize would use (and consume).
 */
export type Evaluation = Omit<Decision, 'id' | 'auditSeq' | 'formatVersion'> & { readonly dryRun: true };

/**
 * The requester of a decision: `null` (the application) when none is named, else the registered
 * principal with that id.
 * @throws MemauthError `UNKNOWN_PRINCIPAL` when it is not registered in the tenant.
 */
export async function resolveRequester(src: StorageReader, tenant: string, id: string | undefined): Promise<Requester> {
  if (id === undefined) return null;
  const p = await src.getPrincipal(tenant, id);
  if (!p) throw new MemauthError('UNKNOWN_PRINCIPAL', `requester ${JSON.stringify(id)} is not a principal of tenant ${JSON.stringify(tenant)}`, { tenant, principal: id, field: 'requester' });
  return { id: p.id, kind: p.kind };
}

/**
 * The `usableBy` list of a new confirmation, deduplicated and sorted: every id a registered
 * principal of the tenant, none of kind `external` (an external principal never uses a
 * confirmation) or `tool` (a channel carrying others' text; it may not request a high action
 * either: core/gate.ts `HIGH_REQUESTER_KINDS`). docs/design.md § Human confirmation.
 * @throws MemauthError `UNKNOWN_PRINCIPAL`, `CONFIRMATION_USABLE_BY_EXTERNAL`, `CONFIRMATION_USABLE_BY_TOOL`.
 */
export async function usableByChecked(src: StorageReader, tenant: string, ids: readonly string[]): Promise<string[]> {
  const list = [...new Set(ids)].sort();
  for (const id of list) {
    const p = await src.getPrincipal(tenant, id);
    if (!p)
      throw new MemauthError('UNKNOWN_PRINCIPAL', `confirm: usableBy names ${JSON.stringify(id)}, not a principal of tenant ${JSON.stringify(tenant)}`, { tenant, principal: id, field: 'usableBy' });
    if (p.kind === 'external') {
      throw new MemauthError('CONFIRMATION_USABLE_BY_EXTERNAL', `confirm: usableBy names ${JSON.stringify(id)}, an external principal; a confirmation is never usable by an external principal`, {
        principal: id,
        field: 'usableBy',
      });
    }
    if (p.kind === 'tool') {
      throw new MemauthError('CONFIRMATION_USABLE_BY_TOOL', `confirm: usableBy names ${JSON.stringify(id)}, a tool principal; a confirmation acts for the user and is never usable by a tool channel`, {
        principal: id,
        field: 'usableBy',
      });
    }
  }
  return list;
}
