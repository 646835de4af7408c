/**
 * The HTTP schema of a record's versions (docs/design.md § Memory record): the chain, its current
 * versions, whether they compete, and every version with its action authority — the content only
 * of current ones. Used by the record view and search hits of ./schemas.ts. Strict, like every response.
 */
import { z } from 'zod';
import { AUTHORITIES } from '../core/authority.js';

const authority = z.enum(AUTHORITIES);

/** The `versions` of a record view or search hit (src/api/versions.ts `versionsView`). */
export const VersionsView = z
  .strictObject({
    chain: z.string(),
    current: z.array(z.string()).describe('the current versions, highest authority first'),
    conflict: z.boolean().describe('more than one current version: they compete'),
    history: z.array(
      z.strictObject({
        id: z.string(),
        supersedes: z.string().nullable(),
        principalId: z.string(),
        actionAuthority: authority,
        status: z.enum(['active', 'deleted', 'expired']),
        createdAt: z.string(),
        current: z.boolean(),
        content: z.string().nullable().describe('the content of a current version; null otherwise'),
      }),
    ),
  })
  .optional()
  .describe("present when the record's chain has more than one version");
