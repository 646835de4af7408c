/**
 * The write-surface inventory's statements (src/api/surfaces.ts, docs/policy.md § Rolling out):
 * which policy source rule each record's source matched, computed in SQL so that a window of
 * records is counted with one GROUP BY (groups: principals × rules) instead of being read row by
 * row, and the decisions of the window joined to the records they depended on. Both reads are
 * bounded: the newest `maxRecords` records and `maxDecisions` decisions of the window, through the
 * indexes records_tenant_created and decisions_tenant_at.
 *
 * The rule match must equal core/policy.ts `sourceAuthority` exactly (first matching rule, bound
 * principals, `*` = any run of characters, case-sensitive): SQLite's GLOB with `[` and `?` escaped,
 * PostgreSQL's LIKE with `%`, `_` and `\` escaped (columns are COLLATE "C": byte comparison).
 *
 * May import: core types, ../driver.js, ../rows.js, ./dialect.js.
 */
import type { Tier } from '../../core/types.js';
import type { SurfaceCounts, SurfaceDependencyCount, SurfacePath, SurfaceQuery, SurfaceWriteCount } from '../driver.js';
import { type Row, str } from '../rows.js';
import type { Dialect, Stmt } from './dialect.js';

/** CASE values for the two paths that are not a rule. */
const SELF = -1;
const DEFAULT = -2;

/** A policy glob as the dialect's pattern: SQLite GLOB (`*` kept, `[` and `?` bracketed), PostgreSQL LIKE (`*` → `%`). */
export function sqlPattern(d: Dialect, glob: string): string {
  if (d.name === 'sqlite') return glob.replace(/[[?]/g, (c) => `[${c}]`);
  return glob.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/\*/g, '%');
}

/** `CASE … END` giving each row of alias `r` its path: the first matching rule's index, -1 self, -2 default. */
function pathCase(d: Dialect, q: SurfaceQuery): { sql: string; values: unknown[] } {
  const op = d.name === 'sqlite' ? 'GLOB ?' : "LIKE ? ESCAPE '\\'";
  const values: unknown[] = [];
  const whens = q.rules.map((rule, i) => {
    let bound = '';
    if (rule.principals !== null) {
      if (rule.principals.length === 0) return `WHEN 1 = 0 THEN ${i}`;
      const list = d.inList('r.origin_principal', rule.principals);
      bound = `${list.sql} AND `;
      values.push(...list.values);
    }
    values.push(sqlPattern(d, rule.match));
    return `WHEN ${bound}r.origin_source ${op} THEN ${i}`;
  });
  return { sql: `CASE ${whens.join(' ')} WHEN r.origin_source = 'principal:' || r.origin_principal THEN ${SELF} ELSE ${DEFAULT} END`, values };
}

/** Records written in the window (newest `maxRecords`), counted per principal, path and origin authority. */
export function surfaceWrites(d: Dialect, tenant: string, q: SurfaceQuery): Stmt {
  const path = pathCase(d, q);
  const text = `SELECT r.origin_principal AS principal, ${path.sql} AS path, r.origin_authority AS authority, count(*) AS writes,
      sum(CASE WHEN r.status <> 'active' THEN 1 ELSE 0 END) AS erased, sum(CASE WHEN r.expires_at IS NOT NULL THEN 1 ELSE 0 END) AS expiring, max(r.created_at) AS last_at
    FROM (SELECT origin_principal, origin_source, origin_authority, status, expires_at, created_at FROM records
          WHERE tenant = ? AND created_at >= ? AND created_at < ? ORDER BY created_at DESC LIMIT ?) r
    GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`;
  return { text: d.sql(text), values: [...path.values, tenant, q.since, q.until, q.maxRecords] };
}

/** The decisions of the window (newest `maxDecisions`) with their dependencies' records, as FROM items `dd` and `r`. */
function decisionDependencies(d: Dialect): string {
  const window = `(SELECT id, outcome, body FROM decisions WHERE tenant = ? AND at >= ? AND at < ? ORDER BY at DESC LIMIT ?) dd`;
  return d.name === 'sqlite'
    ? `${window} JOIN json_each(dd.body, '$.dependencies') je JOIN records r ON r.id = json_extract(je.value, '$.memoryId') AND r.tenant = ?`
    : `${window} CROSS JOIN LATERAL json_array_elements(dd.body::json -> 'dependencies') AS je(v) JOIN records r ON r.id = (je.v ->> 'memoryId') AND r.tenant = ?`;
}

/** Decisions of the window per tier and outcome that cite a record of each principal (`by` principal) or path (`by` path). */
export function surfaceDependencies(d: Dialect, tenant: string, q: SurfaceQuery, by: 'principal' | 'path'): Stmt {
  const tier = d.name === 'sqlite' ? "json_extract(dd.body, '$.tier')" : "(dd.body::json ->> 'tier')";
  const path = by === 'path' ? pathCase(d, q) : { sql: 'r.origin_principal', values: [] };
  const text = `SELECT ${path.sql} AS surface, ${tier} AS tier, dd.outcome AS outcome, count(DISTINCT dd.id) AS decisions, count(*) AS dependencies
    FROM ${decisionDependencies(d)} GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`;
  return { text: d.sql(text), values: [...path.values, tenant, q.since, q.until, q.maxDecisions, tenant] };
}

/** How many decisions of the window were read (at most `maxDecisions`). */
export function surfaceDecisionsRead(d: Dialect, tenant: string, q: SurfaceQuery): Stmt {
  return { text: d.sql('SELECT count(*) AS n FROM (SELECT 1 AS x FROM decisions WHERE tenant = ? AND at >= ? AND at < ? LIMIT ?) w'), values: [tenant, q.since, q.until, q.maxDecisions] };
}

const toPath = (v: unknown): SurfacePath => {
  const n = Number(v);
  return n === SELF ? 'self' : n === DEFAULT ? 'default' : n;
};

/**
 * Run the inventory's statements with `rows` and shape their results.
 * @returns {@link SurfaceCounts}: writes per (principal, path, authority), dependencies per principal and per path.
 */
export async function surfaceCounts(d: Dialect, rows: (s: Stmt) => Promise<Row[]>, tenant: string, q: SurfaceQuery): Promise<SurfaceCounts> {
  const writes: SurfaceWriteCount[] = (await rows(surfaceWrites(d, tenant, q))).map((r) => ({
    principal: str(r.principal),
    path: toPath(r.path),
    authority: str(r.authority),
    writes: Number(r.writes),
    erased: Number(r.erased),
    expiring: Number(r.expiring),
    lastAt: str(r.last_at),
  }));
  const deps = async (by: 'principal' | 'path'): Promise<SurfaceDependencyCount[]> =>
    (await rows(surfaceDependencies(d, tenant, q, by))).map((r) => ({
      principal: by === 'principal' ? str(r.surface) : null,
      path: by === 'path' ? toPath(r.surface) : null,
      tier: str(r.tier) as Tier,
      outcome: str(r.outcome) as SurfaceDependencyCount['outcome'],
      decisions: Number(r.decisions),
      dependencies: Number(r.dependencies),
    }));
  const read = await rows(surfaceDecisionsRead(d, tenant, q));
  return {
    writes,
    byPrincipal: await deps('principal'),
    byPath: await deps('path'),
    recordsRead: writes.reduce((n, w) => n + w.writes, 0),
    decisionsRead: Number(read[0]?.n ?? 0),
  };
}
