/**
 * The HTTP schemas of the write-surface inventory (GET /v1/surfaces; src/api/surfaces.ts): its
 * query and its response, merged into the tables of ./schemas.ts. Strict, like every response.
 */
import { z } from 'zod';
import { AUTHORITIES } from '../core/authority.js';
import { PRINCIPAL_KINDS, TIERS } from '../core/types.js';
import { schemas } from '../api/validation.js';

const count = z.number().int();
const TierUse = z.strictObject({ decisions: count, dependencies: count, allow: count, deny: count, would_deny: count });

/** The query of GET /v1/surfaces. */
export const surfaceQueries = {
  Surfaces: z.strictObject({
    tenant: schemas.get.shape.id.optional(),
    since: z.string().min(1).max(64).optional().describe('start of the window: a duration back from now (7d, the default; 24h; 30m) or an ISO-8601 time'),
  }),
} as const;

/** The response of GET /v1/surfaces. */
export const surfaceResponses = {
  SurfaceInventory: z.strictObject({
    tenant: z.string(),
    policyVersion: z.string(),
    window: z.strictObject({
      since: z.string(),
      until: z.string(),
      recordsRead: count,
      decisionsRead: count,
      complete: z.boolean().describe('false when the window held more records or decisions than the inventory reads (the newest were counted)'),
    }),
    surfaces: z.array(
      z.strictObject({
        id: z.string().describe('principal:<id>, rule:<index of the policy source rule>, self or default'),
        type: z.enum(['principal', 'source_rule', 'self_source', 'default_source']),
        name: z.string(),
        kind: z.union([z.enum(PRINCIPAL_KINDS), z.literal('source')]).nullable(),
        domain: z.string().nullable(),
        owner: z.string().describe('who speaks for it: the principal itself, the principals a rule is bound to, or any principal'),
        defaultAuthority: z.enum(AUTHORITIES).nullable().describe("origin authority of a write through it before the writer's ceiling caps it (null: each writer's ceiling)"),
        description: z.string().nullable(),
        store: z.string(),
        deletion: z.string(),
        observed: z.strictObject({
          writes: count,
          erased: count,
          expiring: count,
          lastWriteAt: z.string().nullable(),
          authorities: z.partialRecord(z.enum(AUTHORITIES), count),
          tiers: z.strictObject(Object.fromEntries(TIERS.map((t) => [t, TierUse])) as Record<(typeof TIERS)[number], typeof TierUse>),
        }),
      }),
    ),
    hint: z.string().optional().describe('set when the tenant has no principals and no records (a misspelt tenant?)'),
  }),
} as const;
