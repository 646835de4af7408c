/**
 * The domain's shared types and constants: principals and their kinds, records, corroborations,
 * confirmations, actions, decisions and reasons, tiers. Types and frozen data only.
 */
import type { NotPlainReason } from './request-grammar.js';
import type { Authority } from './authority.js';

/** Kinds of principal (docs/design.md § Principals and origin). */
export const PRINCIPAL_KINDS = ['system', 'user', 'tool', 'agent', 'external'] as const;
export type PrincipalKind = (typeof PRINCIPAL_KINDS)[number];

/**
 * The highest authority a principal of each kind can ever be registered with.
 * A `tool` is a trusted *channel*: its ceiling is `trusted_tool_verified`, and what it
 * writes is further capped by the authority of the source it fetched (policy source rules).
 */
export const KIND_CEILING: Readonly<Record<PrincipalKind, Authority>> = Object.freeze({
  system: 'system_policy',
  user: 'user_confirmed',
  tool: 'trusted_tool_verified',
  agent: 'model_inferred',
  external: 'external_untrusted',
});

/** An authenticated writer, bound to one tenant. `domain` is its independence domain. */
export interface Principal {
  readonly tenant: string;
  readonly id: string;
  readonly kind: PrincipalKind;
  readonly maxAuthority: Authority;
  readonly domain: string;
  readonly createdAt: string;
}

/** Derivation transforms (docs/design.md § Memory record). */
export const TRANSFORMS = ['summarize', 'extract', 'merge', 'dedup', 'rewrite', 'import', 'embed'] as const;
export type Transform = (typeof TRANSFORMS)[number];

/**
 * How an input joined a derivation:
 * - `declared`: named by the caller in `from`;
 * - `session`: read into the same session (context taint) and not excluded by a proven narrower set;
 * - `echo`: recalled text re-ingested verbatim.
 */
export type EdgeKind = 'declared' | 'session' | 'echo';

/**
 * A record's reference to its session's context (docs/design.md § Derivation and taint): the
 * first `length` entries of the session's read log, whose running hash is `hash`; each stands for
 * an edge of kind `session` and transform `transform`.
 */
export interface SessionRef {
  readonly sessionId: string;
  readonly length: number;
  readonly hash: string;
  readonly transform: Transform;
}

/**
 * A version's link to its chain (docs/design.md § Memory record): `of` is the chain's first
 * record, `supersedes` the version the writer replaced (a current version when it was written).
 */
export interface VersionLink {
  readonly of: string;
  readonly supersedes: string;
}

export interface DerivationEdge {
  readonly from: string;
  readonly transform: Transform;
  readonly kind: EdgeKind;
}

/** Laundering channels seen on a record's way (docs/design.md § Derivation and taint). */
export const CHANNELS = ['self_summarization', 'trusted_tool_echo', 'recall_echo', 'undeclared_input', 'merge'] as const;
export type Channel = (typeof CHANNELS)[number];

/** Taint: monotone facts carried through every derivation; never raised, never reset. */
export interface Taint {
  /** min over the record's own origin and every input's taint. */
  readonly lowestAuthority: Authority;
  /** union of laundering channels seen on the way, sorted. */
  readonly channels: readonly Channel[];
  /** the union of the source refs down to the roots, bounded: its first 16 in sort order, each address over 256 bytes shortened (core/taint-sources.ts). */
  readonly sources: readonly string[];
  /** the oldest source date (ISO-8601) of any input; a consolidation never gets "now". */
  readonly oldestSourceAt: string;
}

export interface Origin {
  readonly authority: Authority;
  readonly principalId: string;
  readonly sourceRef: string;
  readonly writtenAt: string;
}

export type RecordStatus = 'active' | 'deleted' | 'expired';

/**
 * A typed claim (docs/design.md § Claims and intent): the record's writer asserts that `field` of
 * `subject` is `value` (`{Northwind, payee_account, NORTHWIND-AP}`). Covered by the record's
 * content hash and audit entry; its authority is the record's action authority. `field` is a
 * lowercase identifier (`intent` makes a standing instruction: `value` is an action type).
 */
export interface Claim {
  readonly subject: string;
  readonly field: string;
  readonly value: string;
}

/** A memory record as the store returns it. Immutable; an update is a new version. */
export interface MemoryRecord {
  readonly formatVersion: 1;
  readonly id: string;
  readonly tenant: string;
  readonly scope: string;
  /** `null` once deleted: the content is erased, the hash kept. */
  readonly content: string | null;
  readonly contentHash: string;
  readonly createdAt: string;
  readonly expiresAt: string | null;
  readonly origin: Origin;
  readonly derivedFrom: readonly DerivationEdge[];
  /**
   * Present on a record written or derived in a session whose context it takes: the session's
   * read log up to `length` (core/session.ts) stands for one `session` edge to each record read
   * before it and not already in `derivedFrom` (docs/design.md § Derivation and taint).
   */
  readonly sessionContext?: SessionRef;
  /** typed claims the writer made (absent: none; erased with the content on delete). */
  readonly claims?: readonly Claim[];
  /** Present on a version written by `supersede` (core/versions.ts): its chain and the version it was written to replace. */
  readonly version?: VersionLink;
  readonly taint: Taint;
  readonly audit: { readonly policyVersion: string; readonly writeReason: string; readonly seq: number };
  readonly status: RecordStatus;
}

/** A recorded corroboration of a record by a principal (docs/design.md § Corroboration). */
export interface Corroboration {
  readonly id: string;
  readonly tenant: string;
  readonly recordId: string;
  readonly principalId: string;
  /** min(principal ceiling, authority of the evidence). */
  readonly authority: Authority;
  readonly domain: string;
  readonly evidenceRef: string;
  readonly at: string;
  /** seq of the audit entry that recorded it (set by the store). */
  readonly auditSeq?: number;
}

/** A scoped human confirmation (docs/design.md § Human confirmation). */
export interface Confirmation {
  readonly id: string;
  readonly tenant: string;
  readonly principalId: string;
  readonly actionType: string;
  readonly resource: string | null;
  readonly argsHash: string;
  readonly args: Readonly<Record<string, unknown>> | null;
  readonly memoryIds: readonly string[] | null;
  readonly expiresAt: string;
  readonly maxUses: number;
  readonly createdAt: string;
  /**
   * The principals whose requests may use it (see core/confirmation.ts `requesterMismatch`):
   * exactly these ids (never an `external` principal), or `null` (absent on confirmations made
   * before it existed) for the default — the application and `user`, `system` and `agent`
   * principals, never `tool` or `external` ones.
   */
  readonly usableBy?: readonly string[] | null;
  /** seq of the audit entry that recorded it (set by the store). */
  readonly auditSeq?: number;
}

/** A proposed action: `type` names the tool, `args` its arguments, `resource` what it touches. */
export interface Action {
  readonly type: string;
  readonly args: Readonly<Record<string, unknown>>;
  readonly resource?: string | undefined;
}

export const TIERS = ['read_only', 'low', 'high'] as const;
export type Tier = (typeof TIERS)[number];
export const MODES = ['observe', 'enforce'] as const;
export type Mode = (typeof MODES)[number];
export type Outcome = 'allow' | 'deny' | 'would_deny';

export const REASON_CODES = ['untrusted_origin', 'missing_corroboration', 'needs_confirmation', 'metadata_missing', 'deleted_source', 'expired', 'untrusted_requester', 'conflict'] as const;
export type ReasonCode = (typeof REASON_CODES)[number];

/** A structured denial reason: never prose for the model to argue with. */
export interface Reason {
  readonly code: ReasonCode;
  readonly memoryIds: readonly string[];
  /** argument path the reason is about (value-level provenance), if any. */
  readonly argument?: string;
  /** machine-readable detail, e.g. `confirmation_args_mismatch`. */
  readonly detail?: string;
}

export type DependencyWhy = 'declared' | 'value' | 'context';

export interface Dependency {
  readonly memoryId: string;
  readonly why: readonly DependencyWhy[];
  readonly lowestAuthority: Authority;
  readonly actionAuthority: Authority;
  readonly status: RecordStatus;
}

/** Where one number came from: memory records and/or the user's current turn. */
export interface ValueSuppliers {
  readonly value: string;
  readonly recordIds: readonly string[];
  readonly userTurn: boolean;
}

/** How an argument's values are compared (policy `actions.<type>.argumentTypes`; default `identifier`). */
export const ARGUMENT_TYPES = ['identifier', 'amount'] as const;
export type ArgumentType = (typeof ARGUMENT_TYPES)[number];

/**
 * Who supplied one argument value (the action's `resource` is the argument `{resource}`):
 * memory records and/or the user's current turn; for an amount supplied by nothing directly, the
 * quantity and unit price of the user's turn it was computed from (`a*b`; `+` is never produced).
 */
export interface ValueProvenance extends ValueSuppliers {
  readonly argument: string;
  /**
   * for a value the user's turn contains: whether a clause of the turn asserts it (not a question,
   * no negation; src/core/intent.ts `assertedClauses`). Only an asserted value can waive the
   * session context (docs/design.md § Claims and intent). Absent: not asserted.
   */
  readonly userTurnAsserted?: boolean;
  /**
   * records whose typed claim of a field the policy lists for this argument (`claim:<field>`) has
   * this value, by field (absent when none; docs/design.md § Claims and intent). `named`: those
   * of them whose claim's subject or value a plain request of the user's turn asserts — when the
   * intent comes from the turn alone, only a named claim waives the context.
   */
  readonly claims?: ReadonlyArray<{ readonly field: string; readonly recordIds: readonly string[]; readonly named?: readonly string[] }>;
  /** for an argument the policy declares an amount: its canonical decimal (absent for identifiers and for amount text that is no amount). */
  readonly amount?: string;
  readonly computed: { readonly op: '*' | '+'; readonly operands: readonly [ValueSuppliers, ValueSuppliers] } | null;
}

/**
 * Where a high action's intent came from (docs/design.md § Claims and intent): the user's turn
 * requested the action type (`phrase`: the policy's intent phrase it matched), a standing
 * instruction (claims of field `intent` by `recordIds`; trusted only where such a record has
 * action authority >= the threshold), or the application (`authorize(…, { intent })` by a trusted
 * requester).
 */
export interface IntentSource {
  readonly source: 'user_turn' | 'standing_instruction' | 'application';
  readonly phrase?: string;
  /** `question`: the turn asked for the action (policy `intentForm: "question"`), so the agent chose among trusted claims' values. */
  readonly form?: 'question';
  readonly recordIds?: readonly string[];
}

/** The intent facts of a decision: every source found, and an application intent that was not honoured (with why). */
export interface IntentProvenance {
  readonly sources: readonly IntentSource[];
  /** set when the requester passed `intent` but may not assert it (`requester_not_trusted`), or named another action type (`intent_other_action`). */
  readonly ignored?: 'requester_not_trusted' | 'intent_other_action';
  /**
   * The earlier decision of the same session that was allowed with its context waived for exactly
   * this action (type and arguments): intent waives the context once per action and session, so
   * a repeat — a duplicate payment a page talked the model into — needs a confirmation.
   */
  readonly repeatOf?: string;
  /** true when the decision names no session: the waiver is once per session, so none is granted without one. */
  readonly sessionless?: true;
  /**
   * The user's turn as a record of the session, written before anything below the threshold was
   * read or written in it (api/authorize-intent.ts `recordedTurn`): a destination the plain turn
   * asserts may then waive the context (docs/design.md § Claims and intent).
   */
  readonly turnRecord?: string;
  /**
   * Set when the user's turn was not read as a plain request of this action type
   * (src/core/request-grammar.ts): the first rule it breaks and the word that broke it.
   */
  readonly notPlain?: { readonly reason: NotPlainReason; readonly word?: string };
}

/** A gate decision as stored and returned (docs/design.md § Action gate). */
export interface Decision {
  readonly formatVersion: 1;
  readonly id: string;
  readonly tenant: string;
  readonly sessionId: string | null;
  /**
   * The principal that requested the decision (the server sets it from the token), or `null` for
   * the application (a library call without `requester`, or the admin token). Absent on
   * decisions recorded before requesters were recorded.
   */
  readonly requester?: string | null;
  readonly at: string;
  readonly action: Action;
  readonly argsHash: string;
  readonly tier: Tier;
  readonly mode: Mode;
  readonly outcome: Outcome;
  readonly reasons: readonly Reason[];
  readonly dependencies: readonly Dependency[];
  readonly values: readonly ValueProvenance[];
  /** the intent facts of a `high` decision (absent on other tiers and on decisions recorded before intent was). */
  readonly intent?: IntentProvenance;
  /**
   * true when the action's intent and every value had trusted provenance, so its context
   * dependencies did not count against it (docs/design.md § Claims and intent); absent otherwise.
   */
  readonly contextWaived?: true;
  readonly confirmationId: string | null;
  readonly policyVersion: string;
  readonly auditSeq: number;
  /**
   * For a person or model reading the decision: e.g. that its action type is not in the policy and
   * was treated as `high`. Derived from the policy; not part of the audit entry. Absent when there
   * is nothing to say.
   */
  readonly notice?: string;
}
