/**
 * The record ids an external principal learns (docs/design.md § What the model sees): only those
 * of records it wrote. An external principal reads nothing, and another principal's record
 * answers it exactly like a missing one (server/exposure.ts `assertCitesOwn`), so the answers
 * that name records — a supersede's `current` versions and its `RECORD_SUPERSEDED` refusal, a
 * decision's or dry run's reasons, dependencies and value suppliers, a replay — leave out every
 * id of another principal's record when the caller is external. Any other caller gets them whole.
 *
 * May import: api/ types, core/errors, core types.
 */
import type { Memory } from '../api/memory.js';
import type { StoreOptions } from '../api/options.js';
import type { ReplayResult } from '../api/replay.js';
import type { SupersedeResult } from '../api/supersede.js';
import { MemauthError } from '../core/errors.js';
import type { Decision, IntentProvenance, Principal, Reason, ValueProvenance, ValueSuppliers } from '../core/types.js';

type Caller = Pick<Principal, 'id' | 'kind'> | null;

/** The ids among `ids` of records of `tenant` that `callerId` wrote. */
export async function ownRecordIds(mem: Memory, tenant: string, callerId: string, ids: Iterable<string>): Promise<Set<string>> {
  const wanted = [...new Set(ids)];
  if (wanted.length === 0) return new Set();
  return new Set((await mem.driver.getRecords(tenant, wanted)).filter((r) => r.origin.principalId === callerId).map((r) => r.id));
}

const isExternal = (caller: Caller): caller is Pick<Principal, 'id' | 'kind'> => caller !== null && caller.kind === 'external';

/**
 * `mem.supersede(input)` as `caller` sees it: for an external caller the result's `current` and
 * a `RECORD_SUPERSEDED` refusal's `details.current` (and message) name only records it wrote.
 * @throws what `Memory.supersede` throws.
 */
export async function supersedeAs(mem: Memory, caller: Caller, input: Parameters<Memory['supersede']>[0], options?: StoreOptions): Promise<SupersedeResult> {
  let r: SupersedeResult;
  try {
    r = await mem.supersede(input, options);
  } catch (e) {
    if (!isExternal(caller) || !(e instanceof MemauthError) || e.code !== 'RECORD_SUPERSEDED') throw e;
    const all = ((e.details as { current?: string[] } | undefined)?.current ?? []).filter((x) => typeof x === 'string');
    const own = await ownRecordIds(mem, input.tenant, caller.id, all);
    const current = all.filter((id) => own.has(id));
    const message = `supersede: record ${input.id} is not a current version (current versions you wrote: ${current.join(', ') || 'none'}); supersede a current version, or write a new record`;
    throw new MemauthError('RECORD_SUPERSEDED', message, { id: input.id, current });
  }
  if (!isExternal(caller)) return r;
  const own = await ownRecordIds(mem, input.tenant, caller.id, r.current);
  return { ...r, current: r.current.filter((id) => own.has(id)) };
}

/** Every record id a decision, dry run or replay names in its reasons, dependencies, values and intent. */
function idsOf(d: DecisionLike): string[] {
  const out: string[] = [];
  const sup = (s: ValueSuppliers): void => void out.push(...s.recordIds);
  for (const r of d.reasons) out.push(...r.memoryIds);
  for (const x of d.dependencies ?? []) out.push(x.memoryId);
  for (const v of d.values ?? []) {
    sup(v);
    for (const c of v.claims ?? []) out.push(...c.recordIds, ...(c.named ?? []));
    for (const o of v.computed?.operands ?? []) sup(o);
  }
  for (const s of d.intent?.sources ?? []) out.push(...(s.recordIds ?? []));
  return out;
}

/** The fields of a decision (or evaluation, or replayed gate result) that name records. */
interface DecisionLike {
  readonly reasons: readonly Reason[];
  readonly dependencies?: ReadonlyArray<{ readonly memoryId: string }>;
  readonly values?: readonly ValueProvenance[];
  readonly intent?: IntentProvenance;
}

/** `d` with only the record ids in `own` (reasons keep their code, argument and detail). */
function keepIds<D extends DecisionLike>(d: D, own: ReadonlySet<string>): D {
  const only = (ids: readonly string[]): string[] => ids.filter((id) => own.has(id));
  const sup = <S extends ValueSuppliers>(s: S): S => ({ ...s, recordIds: only(s.recordIds) });
  const values = d.values?.map((v) => ({
    ...sup(v),
    ...(v.claims ? { claims: v.claims.map((c) => ({ ...c, recordIds: only(c.recordIds), ...(c.named ? { named: only(c.named) } : {}) })) } : {}),
    computed: v.computed === null ? null : { ...v.computed, operands: [sup(v.computed.operands[0]), sup(v.computed.operands[1])] as const },
  }));
  const intent = d.intent && { ...d.intent, sources: d.intent.sources.map((s) => (s.recordIds ? { ...s, recordIds: only(s.recordIds) } : s)) };
  return {
    ...d,
    reasons: d.reasons.map((r) => ({ ...r, memoryIds: only(r.memoryIds) })),
    ...(d.dependencies ? { dependencies: d.dependencies.filter((x) => own.has(x.memoryId)) } : {}),
    ...(values ? { values } : {}),
    ...(intent ? { intent } : {}),
  };
}

/** A decision or dry run as `caller` sees it: for an external caller, only the ids of records it wrote. */
export async function decisionAs<D extends DecisionLike & Pick<Decision, 'tenant'>>(mem: Memory, caller: Caller, d: D): Promise<D> {
  if (!isExternal(caller)) return d;
  return keepIds(d, await ownRecordIds(mem, d.tenant, caller.id, idsOf(d)));
}

/** A replay as `caller` sees it: for an external caller, its reasons, dependencies, lineage, origins and corroborations of records it wrote only. */
export async function replayAs(mem: Memory, tenant: string, caller: Caller, r: ReplayResult): Promise<ReplayResult> {
  if (!isExternal(caller)) return r;
  const lineage = r.lineage.flatMap((e) => [e.from, e.to]);
  const own = await ownRecordIds(mem, tenant, caller.id, [
    ...idsOf({ reasons: r.recorded.reasons }),
    ...idsOf(r.replayed),
    ...r.dependencies.map((x) => x.memoryId),
    ...lineage,
    ...Object.keys(r.origins),
  ]);
  return {
    ...r,
    recorded: keepIds(r.recorded, own),
    replayed: keepIds(r.replayed, own),
    dependencies: r.dependencies.filter((x) => own.has(x.memoryId)),
    lineage: r.lineage.filter((e) => own.has(e.from) && own.has(e.to)),
    origins: Object.fromEntries(Object.entries(r.origins).filter(([id]) => own.has(id))),
    corroborations: r.corroborations.filter((c) => own.has(c.recordId)),
  };
}
