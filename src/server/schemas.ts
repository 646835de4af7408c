/**
 * The HTTP API's request and response schemas. Request bodies are the library's own input
 * schemas (src/api/validation.ts) with `tenant` and `principal` made optional — the bearer token
 * supplies them — so the server validates exactly what the library validates. Response schemas
 * are strict: the server checks every JSON response against its schema (option
 * `validateResponses`, on by default), and the OpenAPI document is generated from both.
 */
import { z } from 'zod';
import { AUTHORITIES } from '../core/authority.js';
import { AUDIT_OPS } from '../core/audit.js';
import { CHANNELS, MODES, PRINCIPAL_KINDS, REASON_CODES, TIERS, TRANSFORMS } from '../core/types.js';
import { schemas } from '../api/validation.js';
import { surfaceQueries, surfaceResponses } from './surface-schemas.js';
import { MetricsBucket, Ratio, TierMetrics, WithRejected } from './metrics-schemas.js';
import { VersionsView } from './version-schemas.js';
import { IntentFacts } from './intent-schemas.js';

const ident = schemas.get.shape.id;
const authority = z.enum(AUTHORITIES);
const tier = z.enum(TIERS);
const json = z.record(z.string(), z.unknown());

// ------------------------------------------------------------------ requests

const userTurn = schemas.authorize.shape.userTurn.unwrap();

/** Request schemas, by name (names are the OpenAPI component names). */
export const requests = {
  PrincipalCreate: schemas.registerPrincipal.extend({
    issueToken: z.boolean().optional().describe('issue a bearer token for the new principal (default true); it is shown once'),
  }),
  TokenCreate: z
    .strictObject({
      tenant: ident.optional(),
      principal: ident.optional(),
      admin: z.boolean().optional().describe('issue another admin token instead of a principal token'),
    })
    .describe('either {tenant, principal} or {admin: true}'),
  // the requester (session owner, decision requester) is always the token's: never in a body
  MemoryWrite: schemas.write.omit({ requester: true }).partial({ tenant: true, principal: true }),
  Derivation: schemas.derive.omit({ requester: true }).partial({ tenant: true, principal: true }),
  Search: schemas.search.omit({ requester: true }).partial({ tenant: true }),
  Supersede: schemas.supersede.omit({ requester: true, id: true }).partial({ tenant: true, principal: true }),
  CorroborationCreate: schemas.corroborate.partial({ tenant: true, principal: true }),
  ConfirmationCreate: schemas.confirm.partial({ tenant: true, principal: true }),
  DecisionCreate: schemas.authorize
    .omit({ requester: true })
    .partial({ tenant: true })
    .extend({
      userTurn: userTurn.partial({ principal: true }).optional().describe("the user's current turn; only that user principal (default: the caller) or the admin may give it"),
    }),
  ReviewApprove: z.strictObject({
    tenant: ident.optional(),
    expiresInSeconds: z.number().int().min(1).optional().describe('lifetime of the confirmation (default and maximum from the policy)'),
  }),
  ReviewReject: z.strictObject({
    tenant: ident.optional(),
    note: z.string().max(2000).optional().describe('why it was rejected (stored as given, shown as text)'),
  }),
} as const;

const boolString = z.enum(['true', 'false']).transform((v) => v === 'true');

/** Query-string schemas (every value arrives as a string). */
export const queries = {
  Tenant: z.strictObject({ tenant: ident.optional().describe('admin token only: the tenant (a principal token fixes it)') }),
  ListMemories: z.strictObject({
    tenant: ident.optional(),
    scope: ident.optional(),
    limit: z.coerce.number().int().min(1).max(10_000).optional(),
    offset: z.coerce.number().int().min(0).optional(),
    includeDeleted: boolString.optional(),
    allVersions: boolString.optional().describe('also versions that are no longer current'),
  }),
  GetMemory: z.strictObject({
    tenant: ident.optional(),
    session: ident.optional().describe('mark the record as read in this session'),
    exact: boolString.optional().describe('the record asked for, not the current version of its chain'),
  }),
  DeleteMemory: z.strictObject({ tenant: ident.optional(), reason: z.string().max(1000).optional() }),
  ListDecisions: z.strictObject({ tenant: ident.optional(), limit: z.coerce.number().int().min(1).max(10_000).optional() }),
  Metrics: z.strictObject({
    tenant: ident.optional(),
    replaySample: z
      .union([z.coerce.number().int().min(0).max(100_000), z.literal('all')])
      .optional()
      .describe('decisions replayed per tier (default 100), or all'),
  }),
  MetricsSeries: z.strictObject({
    tenant: ident.optional(),
    buckets: z.coerce.number().int().min(1).max(200).optional().describe('equal time windows from the first decision to now (default 12)'),
    replaySample: z
      .union([z.coerce.number().int().min(0).max(100_000), z.literal('all')])
      .optional()
      .describe('decisions replayed per tier and bucket (default 20), or all'),
  }),
  ReviewQueue: z.strictObject({
    tenant: ident.optional(),
    limit: z.coerce.number().int().min(1).max(500).optional().describe('items of this page at most (default 100)'),
    requesters: z.enum(['internal', 'external']).optional().describe("only this side's lanes (default both, internal first)"),
    cursor: z.string().min(1).max(1000).optional().describe('the nextCursor of the previous page'),
  }),
  AuditExport: z.strictObject({
    tenant: ident.optional(),
    after: z.coerce.number().int().min(0).optional().describe('only entries with a larger seq (e.g. those past the last signed checkpoint); default 0: all'),
  }),
  ListTokens: z.strictObject({ tenant: ident.optional().describe("list this tenant's tokens; without it, the admin tokens") }),
  ...surfaceQueries,
} as const;

/** Path-parameter schemas. */
export const params = {
  Id: z.strictObject({ id: ident }),
} as const;

// ------------------------------------------------------------------ responses

const Principal = z.strictObject({ tenant: z.string(), id: z.string(), kind: z.enum(PRINCIPAL_KINDS), maxAuthority: authority, domain: z.string(), createdAt: z.string() });
const Origin = z.strictObject({ authority, principalId: z.string(), sourceRef: z.string(), writtenAt: z.string() });
const Taint = z.strictObject({ lowestAuthority: authority, channels: z.array(z.enum(CHANNELS)), sources: z.array(z.string()), oldestSourceAt: z.string() });
const Edge = z.strictObject({ from: z.string(), transform: z.enum(TRANSFORMS), kind: z.enum(['declared', 'session', 'echo']) });
const recordShape = {
  formatVersion: z.literal(1),
  id: z.string(),
  tenant: z.string(),
  scope: z.string(),
  content: z.string().nullable().describe('null once deleted: the content is erased, the hash kept'),
  contentHash: z.string(),
  createdAt: z.string(),
  expiresAt: z.string().nullable(),
  origin: Origin,
  derivedFrom: z.array(Edge),
  sessionContext: z
    .strictObject({ sessionId: z.string(), length: z.number().int(), hash: z.string(), transform: z.enum(TRANSFORMS) })
    .optional()
    .describe("written in a session: the first `length` entries of that session's read log (running hash `hash`), each an edge of kind `session`"),
  claims: z
    .array(z.strictObject({ subject: z.string(), field: z.string(), value: z.string() }))
    .optional()
    .describe("typed claims its writer made ({subject, field, value}); their authority is the record's action authority; absent when none or erased"),
  version: z.strictObject({ of: z.string(), supersedes: z.string() }).optional().describe('a version written by supersede: its chain (the first record) and the version it replaced'),
  taint: Taint,
  audit: z.strictObject({ policyVersion: z.string(), writeReason: z.string(), seq: z.number().int() }),
  status: z.enum(['active', 'deleted', 'expired']),
};
const MemoryRecord = z.strictObject(recordShape);
const Corroboration = z.strictObject({
  id: z.string(),
  tenant: z.string(),
  recordId: z.string(),
  principalId: z.string(),
  authority,
  domain: z.string(),
  evidenceRef: z.string(),
  at: z.string(),
  auditSeq: z.number().int().optional(),
});
/** A corroboration as shown with the record it corroborates: the evidence may be withheld from agents. */
const CorroborationView = Corroboration.extend({
  evidenceRef: z.string().nullable().describe('null when withheld from this caller'),
  evidenceWithheld: z.boolean().describe("the evidence is below the corroboration floor or the record's lowest authority: agents are not shown it"),
});
const RecordView = z.strictObject({
  ...recordShape,
  actionAuthority: authority.describe('lowestAuthority, or lifted by k independent trusted corroborations'),
  corroborations: z.array(CorroborationView),
  deletedSources: z.array(z.string()),
  versions: VersionsView,
});
const Confirmation = z.strictObject({
  id: z.string(),
  tenant: z.string(),
  principalId: z.string(),
  actionType: z.string(),
  resource: z.string().nullable(),
  argsHash: z.string(),
  args: json.nullable(),
  memoryIds: z.array(z.string()).nullable(),
  expiresAt: z.string(),
  maxUses: z.number().int(),
  createdAt: z.string(),
  usableBy: z.array(z.string()).nullable().optional().describe('the principals whose requests may use it; absent: the application and user, system and agent principals (never tool or external)'),
  auditSeq: z.number().int().optional(),
});
const Action = z.strictObject({ type: z.string(), args: json, resource: z.string().optional() });
const Reason = z.strictObject({ code: z.enum(REASON_CODES), memoryIds: z.array(z.string()), argument: z.string().optional(), detail: z.string().optional() });
const why = z.array(z.enum(['declared', 'value', 'context']));
const ValueSuppliers = z.strictObject({ value: z.string(), recordIds: z.array(z.string()), userTurn: z.boolean() });
const decisionShape = {
  tenant: z.string(),
  sessionId: z.string().nullable(),
  requester: z.string().nullable().optional().describe('the principal whose token requested it; null: the application or the admin token; absent on older decisions'),
  at: z.string(),
  action: Action,
  argsHash: z.string(),
  tier,
  mode: z.enum(MODES),
  outcome: z.enum(['allow', 'deny', 'would_deny']),
  reasons: z.array(Reason),
  dependencies: z.array(z.strictObject({ memoryId: z.string(), why, lowestAuthority: authority, actionAuthority: authority, status: z.enum(['active', 'deleted', 'expired']) })),
  values: z.array(
    z.strictObject({
      argument: z.string(),
      value: z.string(),
      recordIds: z.array(z.string()),
      userTurn: z.boolean(),
      claims: z
        .array(z.strictObject({ field: z.string(), recordIds: z.array(z.string()), named: z.array(z.string()).optional() }))
        .optional()
        .describe(
          "records whose typed claim of a field the policy lists for this argument has this value, by field; `named`: those whose claim's subject or value a plain request of the user's turn asserts",
        ),
      userTurnAsserted: z.boolean().optional().describe("for a value the user's turn contains: whether a clause of the turn asserts it (not a question, no negation)"),
      amount: z.string().optional().describe('for an argument the policy declares an amount: its canonical decimal'),
      computed: z
        .strictObject({ op: z.enum(['*', '+']), operands: z.tuple([ValueSuppliers, ValueSuppliers]) })
        .nullable()
        .describe("for an amount supplied by nothing directly: the quantity and unit price the user's turn marks, whose exact product it is"),
    }),
  ),
  intent: IntentFacts,
  contextWaived: z.literal(true).optional().describe('intent and every value had trusted provenance: context dependencies did not count'),
  confirmationId: z.string().nullable(),
  policyVersion: z.string(),
  notice: z.string().optional().describe('e.g. that the action type is not in the policy and was treated as high'),
};
const Decision = z.strictObject({ formatVersion: z.literal(1), id: z.string(), ...decisionShape, auditSeq: z.number().int() });
const Evaluation = z.strictObject({
  dryRun: z.literal(true),
  ...decisionShape,
  confirmationId: z.string().nullable().describe('the confirmation an authorize would use and consume now (none is consumed by the dry run)'),
});
const ReplayResult = z.strictObject({
  decisionId: z.string(),
  auditSeq: z.number().int(),
  policyVersion: z.string(),
  policyText: z.string(),
  action: Action,
  recorded: z.strictObject({ outcome: z.string(), reasons: z.array(Reason), confirmationId: z.string().nullable() }),
  replayed: z.strictObject({ outcome: z.enum(['allow', 'deny', 'would_deny']), reasons: z.array(Reason), confirmationId: z.string().nullable(), contextWaived: z.boolean() }),
  matches: z.boolean(),
  dependencies: z.array(z.strictObject({ memoryId: z.string(), why, lowestAuthority: z.string(), actionAuthority: z.string(), status: z.string(), known: z.boolean() })),
  lineage: z.array(z.strictObject({ from: z.string(), to: z.string(), transform: z.string(), kind: z.string() })),
  origins: z.record(
    z.string(),
    z.strictObject({ principalId: z.string(), authority: z.string(), sourceRef: z.string().nullable().describe('null when withheld from this caller (below the corroboration floor)') }),
  ),
  corroborations: z.array(CorroborationView),
  confirmations: z.array(Confirmation),
});
const TenantAuditReport = z.strictObject({
  tenant: z.string(),
  ok: z.boolean(),
  chain: z.strictObject({
    ok: z.boolean(),
    entries: z.number().int(),
    head: z.strictObject({ seq: z.number().int(), hash: z.string() }).nullable(),
    firstBadSeq: z.number().int().optional(),
    problem: z.string().optional(),
  }),
  checkpoint: z.strictObject({ seq: z.number().int(), ok: z.boolean(), problem: z.string().optional() }).nullable(),
  records: z.strictObject({ checked: z.number().int(), bad: z.array(z.strictObject({ id: z.string(), problem: z.string() })) }),
  message: z.string(),
});
const TokenInfo = z.strictObject({ id: z.string(), admin: z.boolean(), tenant: z.string().nullable(), principal: z.string().nullable(), createdAt: z.string(), revokedAt: z.string().nullable() });
const IssuedToken = z.strictObject({ token: z.string().describe('the bearer token; shown once, only its hash is stored'), info: TokenInfo });
const AuditEntry = z.strictObject({ tenant: z.string(), seq: z.number().int(), prevHash: z.string(), op: z.enum(AUDIT_OPS), payload: json, policyVersion: z.string(), hash: z.string() });

const reviewClass = z
  .enum(['real_risk', 'missing_corroboration', 'missing_metadata'])
  .describe(
    'real_risk: untrusted_origin, missing_corroboration (a record short of k independent votes, however many it has), deleted_source, expired, an argument value no record holds (metadata_missing, value_unsourced), or a bare needs_confirmation; missing_metadata: a dependency without provenance metadata; missing_corroboration: kept for compatibility, never given',
  );
const ReviewNote = z.strictObject({ id: z.string(), tenant: z.string(), decisionId: z.string(), verdict: z.literal('rejected'), by: z.string(), note: z.string(), at: z.string() });
const requesterSide = z
  .enum(['internal', 'external'])
  .describe('internal: the application, the admin token or a registered user, system or agent principal; external: an external, tool or unregistered principal');

/** Response schemas, by name (names are the OpenAPI component names). */
export const responses = {
  Error: z.strictObject({ code: z.string(), message: z.string(), details: json }).describe('every error: {code, message, details}; never a stack trace'),
  OpenApiDocument: z.looseObject({ openapi: z.literal('3.1.0'), info: json, paths: json, components: json }).describe('an OpenAPI 3.1 document'),
  Health: z.strictObject({ status: z.literal('ok'), version: z.string(), storage: z.string(), policyVersion: z.string() }),
  Whoami: z.strictObject({ admin: z.boolean(), tokenId: z.string(), tenant: z.string().nullable(), principal: Principal.nullable() }),
  Policy: z.strictObject({ version: z.string(), document: json }),
  Principal,
  PrincipalCreated: z.strictObject({
    principal: Principal,
    token: IssuedToken.nullable(),
    created: z.boolean().describe('false: the principal already existed with the same kind, domain and ceiling; nothing was changed and no token issued'),
  }),
  PrincipalList: z.strictObject({ principals: z.array(Principal), hint: z.string().optional().describe('set for the admin when the tenant has no principals and no records (a misspelt tenant?)') }),
  TokenInfo,
  IssuedToken,
  TokenRotated: z.strictObject({ ...IssuedToken.shape, revoked: TokenInfo }),
  TokenList: z.strictObject({ tokens: z.array(TokenInfo) }),
  MemoryRecord,
  RecordView,
  WriteResult: z.strictObject({
    record: MemoryRecord,
    created: z.boolean(),
    echoOf: z.string().nullable(),
    embedding: z.strictObject({ status: z.enum(['stored', 'pending']), error: z.strictObject({ code: z.string(), message: z.string() }).optional() }).optional(),
  }),
  RecordList: z.strictObject({ records: z.array(MemoryRecord), hint: z.string().optional() }),
  SearchResult: z.strictObject({
    mode: z.enum(['lexical', 'semantic', 'hybrid']),
    reason: z.string(),
    embedder: z.string().nullable(),
    hits: z.array(
      z.strictObject({ record: MemoryRecord, score: z.number(), ranks: z.strictObject({ lexical: z.number().int().nullable(), semantic: z.number().int().nullable() }), versions: VersionsView }),
    ),
  }),
  SupersedeResult: z.strictObject({
    record: MemoryRecord,
    current: z.array(z.string()).describe("the chain's current versions, highest authority first"),
    conflict: z.boolean().describe('the new version competes with a current version it does not outrank'),
  }),
  LineageGraph: z.strictObject({
    nodes: z.array(
      z.strictObject({
        id: z.string(),
        authority,
        principalId: z.string(),
        sourceRef: z.string().nullable(),
        status: z.string(),
        content: z.string().nullable(),
        withheld: z.boolean().describe('content or sourceRef were left out for this (agent) caller'),
      }),
    ),
    edges: z.array(z.strictObject({ from: z.string(), to: z.string(), transform: z.string(), kind: z.string() })),
  }),
  Corroboration,
  CorroborateResult: z.strictObject({ corroboration: Corroboration, counted: z.boolean(), rejection: z.string().nullable(), actionAuthority: authority, independentDomains: z.number().int() }),
  Confirmation,
  Decision,
  Evaluation,
  DecisionList: z.strictObject({ decisions: z.array(Decision), hint: z.string().optional() }),
  ReplayResult,
  AuditReport: z.strictObject({ ok: z.boolean(), tenants: z.array(TenantAuditReport) }),
  AuditEntry,
  Metrics: z.strictObject({
    tenant: z.string(),
    computedAt: z.string(),
    policyVersion: z.string(),
    threshold: authority,
    totals: z.strictObject({ records: z.number().int(), decisions: z.number().int(), corroborations: z.number().int() }),
    replaySample: z.union([z.number().int(), z.literal('all')]),
    tiers: z.strictObject({ read_only: TierMetrics, low: TierMetrics, high: TierMetrics }),
    unused: z.strictObject({ records: z.number().int(), originCoverage: Ratio, taintRetention: Ratio, corroborationValidity: WithRejected }),
  }),
  MetricsSeries: z.strictObject({ tenant: z.string(), computedAt: z.string(), policyVersion: z.string(), bucketMs: z.number().int(), buckets: z.array(MetricsBucket) }),
  ReviewNote,
  ReviewQueue: z.strictObject({
    items: z.array(
      z.strictObject({
        decision: Decision,
        requester: z
          .strictObject({ id: z.string().nullable(), kind: z.enum(PRINCIPAL_KINDS).nullable() })
          .describe('who requested the decision: a principal (kind null when it is not registered), or id null for the application / admin token'),
        requesterSide,
        kind: z.enum(['blocked', 'would_deny']).describe('blocked: outcome deny (enforce); would_deny: observe mode let it through'),
        reviewClass,
        approvable: z
          .boolean()
          .describe(
            'deny with needs_confirmation and no hard reason, requested by a principal that is not external: a scoped confirmation by a user principal lets the exact action through once, for that requester',
          ),
        status: z.enum(['open', 'approved', 'rejected']),
        confirmations: z.array(
          z.strictObject({
            id: z.string(),
            principalId: z.string(),
            createdAt: z.string(),
            expiresAt: z.string(),
            maxUses: z.number().int(),
            uses: z.number().int(),
            usableBy: z.array(z.string()).nullable(),
          }),
        ),
        rejection: ReviewNote.nullable(),
      }),
    ),
    lanes: z
      .array(z.strictObject({ requesters: requesterSide, tier, kind: z.enum(['blocked', 'would_deny']), count: z.number().int() }))
      .describe('every lane of the queue, in review order, with how many decisions it holds (all statuses)'),
    nextCursor: z.string().nullable().describe('pass as `cursor` for the next page; null when this page reaches the end of the queue'),
  }),
  ...surfaceResponses,
} as const;

export type ResponseName = keyof typeof responses;
export type RequestName = keyof typeof requests;
