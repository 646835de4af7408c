/**
 * The policy (docs/design.md § Action gate, § Corroboration, § Human confirmation): its zod schema,
 * the default policy, loading with a content-addressed version, and the rules read from it (risk
 * tier, argument types, mode, source authority). Pure.
 */
import { z } from 'zod';
import { AUTHORITIES, type Authority, minAuthority } from './authority.js';
import { canonicalJson, sha256Hex } from './canonical.js';
import { MemauthError } from './errors.js';
import { type PolicyOverlay, applyExtends, jsonPath } from './policy-extends.js';
import { ARGUMENT_TYPES, MODES, TIERS, type Action, type ArgumentType, type Mode, type Principal, type Tier } from './types.js';

const AuthoritySchema = z.enum(AUTHORITIES);
const TierSchema = z.enum(TIERS);
const ModeSchema = z.enum(MODES);
/** A supplier of argument values (docs/design.md § Claims and intent). */
const SupplierSchema = z.string().regex(/^(?:user_turn|text|claim:[a-z][a-z0-9_]{0,63})$/, 'a supplier is "user_turn", "text" or "claim:<field>" (field: a lowercase identifier)');

/**
 * The policy document (JSON). Validated with zod; unknown fields are refused so that a
 * typo can never silently weaken a rule. Rules from docs/design.md § Action gate / Corroboration /
 * Human confirmation; source rules implement "origin = min(principal ceiling, authorityOf(source))".
 */
export const PolicySchema = z.strictObject({
  formatVersion: z.literal(1),
  name: z.string().min(1).max(200),
  description: z.string().max(4000).optional(),
  corroboration: z
    .strictObject({
      /** independent trusted corroborations needed to lift a record's action authority. */
      k: z.number().int().min(1).max(32).default(2),
      /** minimum authority a corroboration must have to count. Never below trusted_tool_verified. */
      minAuthority: AuthoritySchema.default('trusted_tool_verified'),
    })
    .default({ k: 2, minAuthority: 'trusted_tool_verified' })
    .refine((c) => AUTHORITIES.indexOf(c.minAuthority) >= AUTHORITIES.indexOf('trusted_tool_verified'), {
      message: 'corroboration.minAuthority must be trusted_tool_verified or higher',
    }),
  /** risk tier per action type. Types not listed are `high` (fail closed). */
  actions: z.record(
    z.string().min(1).max(200),
    z
      .strictObject({
        tier: TierSchema,
        description: z.string().max(1000).optional(),
        /** raise the tier when any of the named arguments is present (e.g. an answer that recommends a purchase). */
        escalate: z.array(z.strictObject({ whenArgs: z.array(z.string().min(1)).min(1), tier: TierSchema })).optional(),
        /** the argument names this action takes; any other top-level argument is refused (`metadata_missing`, detail `argument_not_allowed`). */
        arguments: z.array(z.string().min(1)).optional(),
        /**
         * how each top-level argument's values are compared (src/core/values.ts): `amount` — exact
         * decimals (`5000` = `$5,000.00`); `identifier` (the default for every argument not named) —
         * exact strings after normalisation. The action's `resource` is always an identifier.
         */
        argumentTypes: z.record(z.string().min(1).max(200), z.enum(ARGUMENT_TYPES)).optional(),
        /**
         * which sources may supply each top-level argument's values (`{resource}`: the action's
         * resource) — `claim:<field>` (a typed claim of that field), `user_turn`, `text` (a record's
         * text that contains the value: the weaker mode). An argument not named: `user_turn` and
         * `text` (docs/design.md § Claims and intent).
         */
        suppliers: z.record(z.string().min(1).max(200), z.array(SupplierSchema).min(1).max(16)).optional(),
        /** phrases that, in the user's current turn and not negated, request this action type (docs/design.md § Claims and intent). */
        intent: z
          .array(
            z
              .string()
              .min(1)
              .max(100)
              .regex(/[\p{L}\p{N}]/u, 'an intent phrase needs a letter or digit'),
          )
          .max(64)
          .optional(),
        /**
         * how the user's turn requests this action type: `request` (the default) — a plain imperative
         * that opens with an intent phrase (src/core/request-grammar.ts); `question` — a sentence
         * that opens with an intent phrase, or a which/what question the speaker asks for themselves
         * ("Which router should we buy?"; src/core/question-grammar.ts), and the agent may then
         * choose among the values trusted claims supply (no party naming). Only for an action that
         * moves nothing — base tier `read_only` or `low`, no `amount` argument type; any other is
         * refused (docs/design.md § Claims and intent).
         */
        intentForm: z.enum(['request', 'question']).optional(),
      })
      .refine((a) => a.intentForm !== 'question' || ((a.tier === 'read_only' || a.tier === 'low') && !Object.values(a.argumentTypes ?? {}).includes('amount')), {
        message: 'intentForm "question" is only for an action that moves nothing (base tier read_only or low, no amount argument, e.g. an answer that recommends)',
        path: ['intentForm'],
      }),
  ),
  modes: z.strictObject({ read_only: ModeSchema, low: ModeSchema, high: ModeSchema }),
  /** ordered source rules, first match wins; `*` matches any run of characters. */
  sources: z.array(
    z.strictObject({
      match: z.string().min(1).max(1000),
      authority: AuthoritySchema,
      /** the principals this rule applies to (a system of record is trusted only through its own connector); default: any. */
      principals: z.array(z.string().min(1)).optional(),
      description: z.string().max(1000).optional(),
    }),
  ),
  /** authority of a source no rule matches. */
  defaultSourceAuthority: AuthoritySchema.default('external_untrusted'),
  confirmation: z
    .strictObject({
      defaultTtlSeconds: z
        .number()
        .int()
        .min(1)
        .max(31 * 24 * 3600)
        .default(900),
      maxTtlSeconds: z
        .number()
        .int()
        .min(1)
        .max(366 * 24 * 3600)
        .default(7 * 24 * 3600),
    })
    .default({ defaultTtlSeconds: 900, maxTtlSeconds: 7 * 24 * 3600 }),
});

export type PolicyDocument = z.output<typeof PolicySchema>;
export type PolicyInput = z.input<typeof PolicySchema>;

/** A policy document, or a file that extends the default (`{"extends": "default", …}`; core/policy-extends.ts). */
export type PolicySource = PolicyInput | PolicyOverlay;

/** A validated policy with its content-addressed version. */
export interface Policy {
  readonly document: PolicyDocument;
  /** SHA-256 hex of the RFC 8785 canonical JSON of `document`; recorded by every decision and audit entry. */
  readonly version: string;
  /** canonical JSON text of `document` (what is stored in the audit log). */
  readonly text: string;
}

/**
 * Who may supply a payment's payee and amount in the default policy: a typed claim, the user's
 * turn, or (the weaker mode, kept so that stores without claims work as before) a trusted text
 * that contains it. Only the first two waive the context (docs/design.md § Claims and intent); a
 * policy that drops `text` makes a mere mention supply nothing.
 */
const PAYMENT_SUPPLIERS = { to: ['claim:payee_account', 'user_turn', 'text'], amount: ['user_turn', 'claim:amount_due', 'text'] };
/** Who may supply a message's or an export's destination in the default policy (`data_recipient`: where a kind of data goes, core/party-naming.ts `ROUTING_FIELDS`). */
const RECIPIENT_SUPPLIERS = {
  to: ['claim:email_address', 'claim:data_recipient', 'user_turn', 'text'],
  cc: ['claim:email_address', 'user_turn', 'text'],
  bcc: ['claim:email_address', 'user_turn', 'text'],
  destination: ['claim:email_address', 'claim:export_destination', 'claim:data_recipient', 'user_turn', 'text'],
};

/**
 * The arguments each `high` action of the default policy takes (`arguments`): any other top-level
 * argument — a `recurring: true` riding along on a payment the user asked for — is refused
 * (`metadata_missing`, `argument_not_allowed`; docs/design.md § Action gate).
 */
const PAYMENT_ARGUMENTS = ['to', 'amount', 'currency', 'memo', 'note', 'reference', 'invoice'];
const ARGUMENTS = {
  purchase: ['item', 'items', 'quantity', ...PAYMENT_ARGUMENTS],
  email: ['to', 'cc', 'bcc', 'subject', 'body', 'attachment'],
  data: ['to', 'destination', 'data', 'format', 'subject', 'body'],
  setting: ['key', 'value'],
  permission: ['grantee', 'role', 'resource'],
  deploy: ['service', 'environment', 'target', 'version'],
};
/** Who may supply a permission change's grantee and role in the default policy. */
const PERMISSION_SUPPLIERS = { grantee: ['claim:username', 'user_turn', 'text'], role: ['claim:role', 'user_turn', 'text'] };

/** The default policy: docs/design.md's tiers, k = 2, observe nothing — enforce every tier. */
export const DEFAULT_POLICY: PolicyInput = {
  formatVersion: 1,
  name: 'memauth-default',
  description: 'Risk tiers from docs/design.md; unknown action types are high; open-web and mail sources are untrusted.',
  corroboration: { k: 2, minAuthority: 'trusted_tool_verified' },
  actions: {
    answer: { tier: 'read_only', description: 'explain or answer from memory' },
    explain: { tier: 'read_only' },
    draft: { tier: 'read_only' },
    set_preference: { tier: 'low', description: 'personalization: reversible, user-visible' },
    personalize: { tier: 'low' },
    pay: { tier: 'high', arguments: PAYMENT_ARGUMENTS, argumentTypes: { amount: 'amount' }, suppliers: PAYMENT_SUPPLIERS, intent: ['pay', 'settle', 'remit', 'run payroll'] },
    wire_transfer: { tier: 'high', arguments: PAYMENT_ARGUMENTS, argumentTypes: { amount: 'amount' }, suppliers: PAYMENT_SUPPLIERS, intent: ['wire', 'transfer'] },
    purchase: { tier: 'high', arguments: ARGUMENTS.purchase, argumentTypes: { amount: 'amount' }, suppliers: PAYMENT_SUPPLIERS, intent: ['buy', 'purchase', 'order', 'reorder', 'renew'] },
    refund: { tier: 'high', arguments: PAYMENT_ARGUMENTS, argumentTypes: { amount: 'amount' }, suppliers: PAYMENT_SUPPLIERS, intent: ['refund'] },
    send_email: { tier: 'high', arguments: ARGUMENTS.email, suppliers: RECIPIENT_SUPPLIERS, intent: ['email', 'send', 'mail', 'forward', 'reply'] },
    send_data: { tier: 'high', arguments: ARGUMENTS.data, suppliers: RECIPIENT_SUPPLIERS, intent: ['send', 'share', 'email'] },
    export_data: { tier: 'high', arguments: ARGUMENTS.data, suppliers: RECIPIENT_SUPPLIERS, intent: ['export', 'send', 'share'] },
    update_setting: {
      tier: 'high',
      arguments: ARGUMENTS.setting,
      suppliers: { key: ['claim:setting_key', 'user_turn', 'text'], value: ['claim:setting_value', 'user_turn', 'text'] },
      intent: ['set', 'change', 'update', 'point', 'configure'],
    },
    change_permission: { tier: 'high', arguments: ARGUMENTS.permission, suppliers: PERMISSION_SUPPLIERS, intent: ['grant', 'give', 'set up', 'change'] },
    grant_permission: { tier: 'high', arguments: ARGUMENTS.permission, suppliers: PERMISSION_SUPPLIERS, intent: ['grant', 'give', 'set up', 'add'] },
    deploy: {
      tier: 'high',
      arguments: ARGUMENTS.deploy,
      suppliers: { target: ['claim:image', 'user_turn', 'text'], '{resource}': ['claim:deploy_target', 'user_turn', 'text'] },
      intent: ['deploy', 'release', 'roll out', 'ship'],
    },
  },
  modes: { read_only: 'enforce', low: 'enforce', high: 'enforce' },
  sources: [
    { match: 'https://*', authority: 'external_untrusted', description: 'the open web' },
    { match: 'http://*', authority: 'external_untrusted', description: 'the open web' },
    { match: 'mailto:*', authority: 'external_untrusted', description: 'inbound mail' },
    { match: 'email:*', authority: 'external_untrusted', description: 'inbound mail' },
  ],
  defaultSourceAuthority: 'external_untrusted',
  confirmation: { defaultTtlSeconds: 900, maxTtlSeconds: 7 * 24 * 3600 },
};

/** One problem of a policy document: where (a JSON path, `$` for the root) and what. */
export interface PolicyIssue {
  readonly path: string;
  readonly message: string;
}

/**
 * Validate a policy document and compute its version. A document with `"extends": "default"` is
 * first completed from {@link DEFAULT_POLICY} (core/policy-extends.ts): the effective document is
 * what is validated, versioned and recorded.
 *
 * @param input - a policy object (already parsed JSON).
 * @returns the frozen {@link Policy}.
 * @throws MemauthError `POLICY_INVALID` listing every problem at once: the message names each
 *   problem's JSON path; `details.issues` is `[{path, message}]` ({@link PolicyIssue}),
 *   `details.path` the first path.
 */
export function loadPolicy(input: unknown): Policy {
  const base = input !== null && typeof input === 'object' && 'extends' in input && input.extends !== 'default' ? [{ path: '$.extends', message: 'only "default" can be extended' }] : [];
  const parsed = PolicySchema.safeParse(applyExtends(input, DEFAULT_POLICY as unknown as Record<string, unknown>));
  if (!parsed.success || base.length > 0) {
    const found = parsed.success ? [] : parsed.error.issues.filter((i) => !(base.length > 0 && i.path.length === 0 && /extends/.test(i.message)));
    const issues: PolicyIssue[] = [...base, ...found.map((i) => ({ path: jsonPath(i.path), message: i.message }))];
    const list = issues.map((i) => `${i.path}: ${i.message}`).join('; ');
    // a file that restates too little: the usual fix is to extend the default
    const missing = found.some((i) => i.path.length === 1 && /received undefined/.test(i.message));
    const hint = missing ? ' (a file with "extends": "default" needs only the fields that differ from the built-in policy)' : '';
    throw new MemauthError('POLICY_INVALID', `policy is invalid (${issues.length} ${issues.length === 1 ? 'problem' : 'problems'}): ${list}${hint}`, {
      path: issues[0]?.path ?? '$',
      issues,
    });
  }
  const text = canonicalJson(parsed.data);
  return Object.freeze({ document: parsed.data, version: sha256Hex(text), text });
}

/**
 * One sentence when `actionType` is not in the policy, so the caller sees why its action is `high`
 * (a typo, e.g. `paymnet`, is not a new low-risk action); undefined for a listed type.
 */
export function unlistedActionNotice(policy: Policy, actionType: string): string | undefined {
  if (Object.prototype.hasOwnProperty.call(policy.document.actions, actionType)) return undefined;
  return `action type ${JSON.stringify(actionType)} is not in the policy; treated as high`;
}

/**
 * Risk tier of an action under the policy. Unknown action types are `high` (fail closed).
 * `escalate` rules can only raise the tier.
 */
export function riskTier(policy: Policy, action: Pick<Action, 'type' | 'args'>): Tier {
  const rule = Object.prototype.hasOwnProperty.call(policy.document.actions, action.type) ? policy.document.actions[action.type] : undefined;
  if (!rule) return 'high';
  let tier: Tier = rule.tier;
  for (const e of rule.escalate ?? []) {
    if (e.whenArgs.some((a) => Object.prototype.hasOwnProperty.call(action.args, a)) && TIERS.indexOf(e.tier) > TIERS.indexOf(tier)) {
      tier = e.tier;
    }
  }
  return tier;
}

/** Top-level arguments the policy does not allow for this action type (empty when it lists none). */
export function disallowedArguments(policy: Policy, action: Pick<Action, 'type' | 'args'>): string[] {
  const rule = Object.prototype.hasOwnProperty.call(policy.document.actions, action.type) ? policy.document.actions[action.type] : undefined;
  if (!rule?.arguments) return [];
  return Object.keys(action.args)
    .filter((k) => !rule.arguments?.includes(k))
    .sort();
}

/** The policy's argument types for an action type (`actions.<type>.argumentTypes`); arguments not named are identifiers. */
export function argumentTypes(policy: Policy, actionType: string): Readonly<Record<string, ArgumentType>> {
  const rule = Object.prototype.hasOwnProperty.call(policy.document.actions, actionType) ? policy.document.actions[actionType] : undefined;
  return rule?.argumentTypes ?? {};
}

/** The suppliers every argument the policy does not configure has: the user's turn and text (docs/design.md § Claims and intent). */
export const DEFAULT_SUPPLIERS: readonly string[] = Object.freeze(['user_turn', 'text']);

/** The policy's configured suppliers for an action type (`actions.<type>.suppliers`), by top-level argument (`{resource}` for the resource); arguments not named have {@link DEFAULT_SUPPLIERS}. */
export function argumentSuppliers(policy: Policy, actionType: string): Readonly<Record<string, readonly string[]>> {
  const rule = Object.prototype.hasOwnProperty.call(policy.document.actions, actionType) ? policy.document.actions[actionType] : undefined;
  return rule?.suppliers ?? {};
}

/** The policy's intent phrases for an action type (`actions.<type>.intent`; none for a type not listed). */
export function intentPhrases(policy: Policy, actionType: string): readonly string[] {
  const rule = Object.prototype.hasOwnProperty.call(policy.document.actions, actionType) ? policy.document.actions[actionType] : undefined;
  return rule?.intent ?? [];
}

/** How the user's turn requests an action type (`actions.<type>.intentForm`; `request` when not set or the type is not listed). */
export function intentForm(policy: Policy, actionType: string): 'request' | 'question' {
  const rule = Object.prototype.hasOwnProperty.call(policy.document.actions, actionType) ? policy.document.actions[actionType] : undefined;
  return rule?.intentForm ?? 'request';
}

/** The mode (`observe` or `enforce`) the policy sets for a tier. */
export function modeFor(policy: Policy, tier: Tier): Mode {
  return policy.document.modes[tier];
}

function globToRegExp(glob: string): RegExp {
  const body = glob
    .split('*')
    .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`, 's');
}

const globCache = new Map<string, RegExp>();
function globMatch(glob: string, s: string): boolean {
  let re = globCache.get(glob);
  if (!re) {
    re = globToRegExp(glob);
    globCache.set(glob, re);
  }
  return re.test(s);
}

/** The self-statement source of a principal: `principal:<id>`. */
export function selfSource(principalId: string): string {
  return `principal:${principalId}`;
}

/**
 * Authority of a source (docs/design.md § Principals and origin):
 * 1. the first policy source rule whose glob matches `sourceRef` (and that names the writer, when
 *    the rule is bound to `principals`);
 * 2. else `principal:<writer>` (a principal speaking for itself) has the writer's ceiling —
 *    except for `tool` principals, which are channels: their upstream must be named by a rule;
 * 3. else the policy's `defaultSourceAuthority`.
 */
export function sourceAuthority(policy: Policy, sourceRef: string, writer: Principal): Authority {
  for (const rule of policy.document.sources) {
    if (rule.principals !== undefined && !rule.principals.includes(writer.id)) continue;
    if (globMatch(rule.match, sourceRef)) return rule.authority;
  }
  if (sourceRef === selfSource(writer.id) && writer.kind !== 'tool') return writer.maxAuthority;
  return policy.document.defaultSourceAuthority;
}

/** Origin authority of a write: `min(principal.maxAuthority, authorityOf(source))`. */
export function originAuthority(policy: Policy, sourceRef: string, writer: Principal): Authority {
  return minAuthority(writer.maxAuthority, sourceAuthority(policy, sourceRef, writer));
}
