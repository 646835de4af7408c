/**
 * The small universe of the exhaustive implementation check (formal/impl/enumerate.ts) and
 * its ground truth. Everything here is the enumerator's own: the lattice order, who is truly
 * trusted, which source is truly trusted. memauth never reads any of it; the enumerator only
 * uses it to judge what memauth decided.
 */

/** The authority lattice, lowest first — an independent copy (the checker does not use memauth's). */
export const ORDER = ['external_untrusted', 'model_inferred', 'trusted_tool_verified', 'user_confirmed', 'system_policy'] as const;
export type Auth = (typeof ORDER)[number];
export const TRUSTED: Auth = 'trusted_tool_verified';
export const lvl = (a: string): number => {
  const i = (ORDER as readonly string[]).indexOf(a);
  if (i < 0) throw new Error(`not an authority: ${a}`);
  return i;
};
export const gmin = (...as: Auth[]): Auth => ORDER[Math.min(ORDER.length - 1, ...as.map(lvl))] as Auth;
export const isTrusted = (a: Auth): boolean => lvl(a) >= lvl(TRUSTED);

export type Kind = 'user' | 'agent' | 'tool' | 'external';
export interface PrincipalSpec {
  readonly kind: Kind;
  readonly domain: string;
}

/**
 * Principals: the user, the agent, two trusted tools in ONE independence domain (correlated),
 * one trusted tool in another domain, and an external attacker.
 */
export const PRINCIPALS = {
  alice: { kind: 'user', domain: 'home' },
  agent: { kind: 'agent', domain: 'agent-runtime' },
  toolA: { kind: 'tool', domain: 'vendor-x' },
  toolB: { kind: 'tool', domain: 'vendor-x' },
  toolC: { kind: 'tool', domain: 'vendor-y' },
  mallory: { kind: 'external', domain: 'evil.example' },
} as const satisfies Record<string, PrincipalSpec>;
export type PrincipalId = keyof typeof PRINCIPALS;
export const PRINCIPAL_IDS = Object.keys(PRINCIPALS) as PrincipalId[];

/** Ground truth: the highest authority a principal of each kind can truly speak with. */
export const TRUE_KIND_AUTH: Readonly<Record<Kind, Auth>> = {
  user: 'user_confirmed',
  tool: 'trusted_tool_verified',
  agent: 'model_inferred',
  external: 'external_untrusted',
};
/** Ground truth: trusted principals (an honest trusted party; tools are honest channels). */
export const TRUE_TRUSTED_KIND: ReadonlySet<Kind> = new Set<Kind>(['user', 'tool']);

/** Sources of root writes: a trusted system of record and the attacker's page. */
export const SOURCES = { SOR: 'sor:vendor-master/acme', WEB: 'https://evil.example/invoice' } as const;
export type SourceKey = keyof typeof SOURCES | 'SELF';
/** Ground truth of a source: what it really is, whoever carries it. */
export const TRUE_SOURCE_AUTH: Readonly<Record<keyof typeof SOURCES, Auth>> = { SOR: 'trusted_tool_verified', WEB: 'external_untrusted' };

/** Two argument values: the legitimate payee and the attacker's. */
export const PAYEES = { L: 'ACCT-1111', A: 'ACCT-6666' } as const;
export type PayeeKey = keyof typeof PAYEES;
export const PAYEE_KEYS: readonly PayeeKey[] = ['L', 'A'];

/** Two action types: `pay` (high) and `answer` (read_only). */
export const ACTIONS = ['pay', 'answer'] as const;
export type ActionType = (typeof ACTIONS)[number];
export const argsOf = (a: ActionType, v: PayeeKey): Record<string, string> => (a === 'pay' ? { to: PAYEES[v] } : { about: PAYEES[v] });

/** The user's current turn: approves "the payment" without naming a payee. */
export const USER_TURN = 'yes, go ahead with the vendor payment';

/** Corroboration evidence that is not a memory record: a lookup in the principal's own system of record, or (attacker) a web page. */
export const evidenceRef = (p: PrincipalId): string => (PRINCIPALS[p].kind === 'tool' ? `sor:check/${p}` : 'https://evil.example/confirm');

/** Record texts. Deterministic per (kind, writer, source, payee): equal texts are equal facts. */
export function rootContent(p: PrincipalId, s: keyof typeof SOURCES, v: PayeeKey): string {
  return `${p} reports from ${s === 'SOR' ? 'the vendor master record' : 'a web page'}: the vendor payout account is ${PAYEES[v]}.`;
}
export const noteContent = (v: PayeeKey): string => `agent note: remember to pay ${PAYEES[v]} next time.`;
export const summaryContent = (v: PayeeKey): string => `agent summary of an earlier record: payee ${PAYEES[v]}.`;

/** The memauth policy of the check: the default policy plus one trusted system of record. */
export const SOR_RULE = { match: 'sor:*', authority: 'trusted_tool_verified' as const, description: 'the vendor master system of record' };
