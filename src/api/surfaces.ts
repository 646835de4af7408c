/**
 * The write-surface inventory (docs/policy.md § Rolling out: inventory → observe → enforce): every
 * principal, every policy source rule, the self-statement path and the default source, each with
 * its kind, domain, who speaks for it, its default authority, the store it writes, how its
 * records are deleted, and — over a time window — the records written through it and the
 * decisions, per risk tier, that depended on them. The counts come from the store in bounded
 * queries (src/store/sql/surfaces.ts). Imports from src/core, src/store's port and the facade.
 */
import type { Authority } from '../core/authority.js';
import { MemauthError } from '../core/errors.js';
import { originAuthority, selfSource } from '../core/policy.js';
import { TIERS, type Principal, type PrincipalKind, type Tier } from '../core/types.js';
import type { SurfaceCounts, SurfaceDependencyCount, SurfacePath, SurfaceWriteCount } from '../store/driver.js';
import type { Memory } from './memory.js';

/** The default window: the last 7 days. */
export const DEFAULT_SURFACE_WINDOW = '7d';
/** The most records and decisions of the window the counts read (newest first); `complete` says whether the window held more. */
export const MAX_SURFACE_RECORDS = 100_000;
export const MAX_SURFACE_DECISIONS = 20_000;

/** What the decisions of the window that cited a surface's records did, in one tier. */
export interface SurfaceTierUse {
  /** decisions that depended on at least one record of the surface. */
  readonly decisions: number;
  /** their dependencies on records of the surface. */
  readonly dependencies: number;
  readonly allow: number;
  readonly deny: number;
  readonly would_deny: number;
}

/** What was observed of a surface over the window. */
export interface SurfaceObserved {
  readonly writes: number;
  /** of the records written, erased since (deleted, or swept after expiry). */
  readonly erased: number;
  /** of the records written, those carrying an `expiresAt`. */
  readonly expiring: number;
  readonly lastWriteAt: string | null;
  /** records written per origin authority (the authority the store gave them). */
  readonly authorities: Readonly<Partial<Record<Authority, number>>>;
  /** decisions that depended on the surface's records, per tier. */
  readonly tiers: Readonly<Record<Tier, SurfaceTierUse>>;
}

/** One write path of a tenant. */
export interface Surface {
  /** `principal:<id>`, `rule:<index>` (policy `sources[index]`), `self` or `default`. */
  readonly id: string;
  readonly type: 'principal' | 'source_rule' | 'self_source' | 'default_source';
  /** the principal id, the rule's glob, `principal:<writer>`, or `*`. */
  readonly name: string;
  /** the principal's kind (`null` for a writer whose row does not match its registration), or `source`. */
  readonly kind: PrincipalKind | 'source' | null;
  /** the principal's independence domain, or the host a rule's glob names (null when it names none). */
  readonly domain: string | null;
  /** who speaks for it: the principal itself, a rule's bound principals, or `any principal`. */
  readonly owner: string;
  /**
   * the origin authority a write through it gets before the writer's ceiling caps it (a principal:
   * what it states as itself); null for the self-statement path, whose authority is each writer's ceiling.
   */
  readonly defaultAuthority: Authority | null;
  readonly description: string | null;
  /** the store its records go to (the driver's kind). */
  readonly store: string;
  /** how its records are deleted. */
  readonly deletion: string;
  readonly observed: SurfaceObserved;
}

/** The inventory of one tenant over a window. */
export interface SurfaceInventory {
  readonly tenant: string;
  readonly policyVersion: string;
  readonly window: {
    readonly since: string;
    readonly until: string;
    readonly recordsRead: number;
    readonly decisionsRead: number;
    /** false when the window held more records or decisions than were read (the newest were counted). */
    readonly complete: boolean;
  };
  readonly surfaces: readonly Surface[];
  /** set when the tenant has no principals and no records: what to check (a misspelt tenant?). */
  readonly hint?: string;
}

/**
 * The start of a window: an ISO-8601 time, or a duration back from `now` (`7d`, `24h`, `30m`).
 * @throws MemauthError `INVALID_ARGUMENT` for anything else, or a start after `now`.
 */
export function windowStart(since: string, now: Date): string {
  const text = since.trim();
  const m = /^(\d{1,5})([dhm])$/.exec(text);
  const start = m
    ? new Date(now.getTime() - Number(m[1]) * { d: 86_400_000, h: 3_600_000, m: 60_000 }[m[2] as 'd' | 'h' | 'm'])
    : new Date(/^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN);
  if (Number.isNaN(start.getTime()) || start > now) {
    throw new MemauthError('INVALID_ARGUMENT', `since must be an ISO-8601 time in the past or a duration such as 7d, 24h or 30m (got ${JSON.stringify(since)})`, { field: 'since' });
  }
  return start.toISOString();
}

/** How a surface's records are deleted (docs/design.md § Deletion, retention, privacy). */
export const DELETION = 'delete: the admin, user and system principals, and the writer; retention: a record with expiresAt counts as expired at decision time and is erased by sweepExpired (library)';

const noUse = (): SurfaceTierUse => ({ decisions: 0, dependencies: 0, allow: 0, deny: 0, would_deny: 0 });

/** Sum the window's counts that belong to one surface. */
function observed(writes: readonly SurfaceWriteCount[], deps: readonly SurfaceDependencyCount[]): SurfaceObserved {
  const authorities: Partial<Record<Authority, number>> = {};
  let lastWriteAt: string | null = null;
  for (const w of writes) {
    authorities[w.authority as Authority] = (authorities[w.authority as Authority] ?? 0) + w.writes;
    if (lastWriteAt === null || w.lastAt > lastWriteAt) lastWriteAt = w.lastAt;
  }
  const tiers = Object.fromEntries(TIERS.map((t) => [t, noUse()])) as Record<Tier, { -readonly [K in keyof SurfaceTierUse]: number }>;
  for (const d of deps) {
    const t = tiers[d.tier];
    if (t === undefined) continue;
    t.decisions += d.decisions;
    t.dependencies += d.dependencies;
    t[d.outcome] += d.decisions;
  }
  const sum = (f: (w: SurfaceWriteCount) => number): number => writes.reduce((n, w) => n + f(w), 0);
  return { writes: sum((w) => w.writes), erased: sum((w) => w.erased), expiring: sum((w) => w.expiring), lastWriteAt, authorities, tiers };
}

/** The host a source glob names (`https://ledger.acme/*` → `ledger.acme`), or null. */
function globHost(match: string): string | null {
  const m = /^[a-z][a-z0-9+.-]*:\/\/([^/*?#:@]+)[/:]/i.exec(match);
  return m ? (m[1] as string).toLowerCase() : null;
}

/** Rows for the principals (registered ones, then writers seen in the window without a matching registration). */
function principalSurfaces(mem: Memory, principals: readonly Principal[], c: SurfaceCounts): Surface[] {
  const known = new Set(principals.map((p) => p.id));
  const unknown = [...new Set(c.writes.map((w) => w.principal))].filter((id) => !known.has(id)).sort();
  const row = (id: string, p: Principal | undefined): Surface => ({
    id: `principal:${id}`,
    type: 'principal',
    name: id,
    kind: p?.kind ?? null,
    domain: p?.domain ?? null,
    owner: id,
    defaultAuthority: p ? originAuthority(mem.policy, selfSource(id), p) : 'external_untrusted',
    description: p ? null : 'writes by a principal whose row does not match its registration: no authority',
    store: mem.driver.kind,
    deletion: `${DELETION}; this principal may delete what it wrote`,
    observed: observed(
      c.writes.filter((w) => w.principal === id),
      c.byPrincipal.filter((d) => d.principal === id),
    ),
  });
  return [...principals.map((p) => row(p.id, p)), ...unknown.map((id) => row(id, undefined))];
}

/** Rows for the policy's source rules, the self-statement path and the default source. */
function pathSurfaces(mem: Memory, c: SurfaceCounts): Surface[] {
  const doc = mem.policy.document;
  const of = (path: SurfacePath): SurfaceObserved =>
    observed(
      c.writes.filter((w) => w.path === path),
      c.byPath.filter((d) => d.path === path),
    );
  const base = { kind: 'source' as const, store: mem.driver.kind, deletion: DELETION };
  const rules: Surface[] = doc.sources.map((r, i) => ({
    ...base,
    id: `rule:${i}`,
    type: 'source_rule',
    name: r.match,
    domain: globHost(r.match),
    owner: r.principals === undefined ? 'any principal' : r.principals.join(', ') || 'no principal',
    defaultAuthority: r.authority,
    description: r.description ?? null,
    observed: of(i),
  }));
  const self: Surface = {
    ...base,
    id: 'self',
    type: 'self_source',
    name: 'principal:<writer>',
    domain: null,
    owner: 'each principal',
    defaultAuthority: null,
    description: "a principal stating something itself: its own ceiling (a tool's is the default source authority)",
    observed: of('self'),
  };
  const fallback: Surface = {
    ...base,
    id: 'default',
    type: 'default_source',
    name: '*',
    domain: null,
    owner: 'any principal',
    defaultAuthority: doc.defaultSourceAuthority,
    description: 'a source no rule matches',
    observed: of('default'),
  };
  return [...rules, self, fallback];
}

/**
 * The write-surface inventory of a tenant over a window.
 * @param opts.since - an ISO-8601 time or a duration back from now (`7d`, the default; `24h`).
 * @param opts.now - the end of the window (default: the clock).
 * @returns {@link SurfaceInventory}; its `hint` is set when the tenant holds nothing at all.
 * @throws MemauthError `INVALID_ARGUMENT` (bad `since`), `TENANT_REQUIRED`.
 * Source: docs/design.md § Principals and origin, § Modes (the rollout).
 */
export async function surfaceInventory(mem: Memory, opts: { tenant: string; since?: string | undefined; now?: Date }): Promise<SurfaceInventory> {
  const now = opts.now ?? new Date();
  const since = windowStart(opts.since ?? DEFAULT_SURFACE_WINDOW, now);
  const until = now.toISOString();
  const principals = await mem.listPrincipals({ tenant: opts.tenant });
  const rules = mem.policy.document.sources.map((r) => ({ match: r.match, principals: r.principals ?? null }));
  const c = await mem.driver.surfaceCounts(opts.tenant, { since, until, rules, maxRecords: MAX_SURFACE_RECORDS, maxDecisions: MAX_SURFACE_DECISIONS });
  const complete = c.recordsRead < MAX_SURFACE_RECORDS && c.decisionsRead < MAX_SURFACE_DECISIONS;
  const hint = principals.length === 0 ? await emptyTenantHint(mem, opts.tenant) : undefined;
  return {
    tenant: opts.tenant,
    policyVersion: mem.policy.version,
    window: { since, until, recordsRead: c.recordsRead, decisionsRead: c.decisionsRead, complete },
    surfaces: [...principalSurfaces(mem, principals, c), ...pathSurfaces(mem, c)],
    ...(hint === undefined ? {} : { hint }),
  };
}

/**
 * A hint for a tenant with no audit entry at all (no principal, no record, no decision), or
 * undefined when it holds something: most often a misspelt tenant name.
 */
export async function emptyTenantHint(mem: Memory, tenant: string): Promise<string | undefined> {
  if ((await mem.driver.auditHead(tenant)) !== null) return undefined;
  return `tenant ${JSON.stringify(tenant)} has no principals and no records in this store: check its spelling (tenant names are case-sensitive) or register a principal in it first`;
}
