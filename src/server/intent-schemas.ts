/**
 * The response schema of a decision's intent facts (docs/design.md § Claims and intent): where a
 * `high` action's intent came from, an asserted intent not honoured, the repeat it is, and why the
 * user's turn was not read as a plain request. Part of the HTTP API's schemas (schemas.ts).
 */
import { z } from 'zod';
import { NOT_PLAIN_REASONS } from '../core/request-grammar.js';

export const IntentFacts = z
  .strictObject({
    sources: z.array(
      z.strictObject({
        source: z.enum(['user_turn', 'standing_instruction', 'application']),
        phrase: z.string().optional(),
        form: z.enum(['question']).optional(),
        recordIds: z.array(z.string()).optional(),
      }),
    ),
    ignored: z.enum(['requester_not_trusted', 'intent_other_action']).optional(),
    repeatOf: z.string().optional().describe('the earlier allowed decision of the session of this action type, or allowed with its context waived: one waiver per type and per session'),
    sessionless: z.literal(true).optional().describe('the decision names no session, so its context is never waived (one waiver per session)'),
    turnRecord: z
      .string()
      .optional()
      .describe("the user's turn as a record of the session written before anything below the threshold was read in it: a destination the turn writes may then waive the context"),
    notPlain: z
      .strictObject({ reason: z.enum(NOT_PLAIN_REASONS), word: z.string().optional() })
      .optional()
      .describe("the user's turn was not read as a plain request of this action: why, and the word"),
  })
  .optional()
  .describe("high tier: where the action's intent came from (user's turn, a standing instruction's records, the application), and an asserted intent not honoured");
