/**
 * Command table of `policy check FILE` and `policy show [FILE]`: validate a policy file (every
 * problem with its JSON path) and print the effective policy (a file with `"extends": "default"`
 * completed from the built-in one) as JSON or readable text. Neither opens a database.
 */
import { loadPolicyFile } from '../../api/open.js';
import { MemauthError } from '../../core/errors.js';
import { DEFAULT_POLICY, type Policy, type PolicyIssue, loadPolicy } from '../../core/policy.js';
import type { Ctx } from '../context.js';
import { table } from '../format.js';
import { type AnyCommand, command, group } from '../spec.js';

/** The policy `file` names, else `--policy`/$MEMAUTH_POLICY, else the built-in default. */
function policyOf(ctx: Ctx, file: string): Policy {
  const path = file !== '' && file !== undefined ? file : ctx.policy;
  return path !== undefined ? loadPolicyFile(path) : loadPolicy(DEFAULT_POLICY);
}

/**
 * `policy check FILE` → `loadPolicyFile`. Prints `ok NAME VERSION`; a POLICY_INVALID error lists
 * every problem on its own line on stderr before the usual `error POLICY_INVALID` report (exit 2).
 */
async function policyCheck(ctx: Ctx, _o: unknown, file: string): Promise<void> {
  let policy: Policy;
  try {
    policy = loadPolicyFile(file);
  } catch (e) {
    if (!ctx.json && e instanceof MemauthError && Array.isArray(e.details.issues)) {
      for (const i of e.details.issues as PolicyIssue[]) ctx.err(`${file}: ${i.path}: ${i.message}`);
    }
    throw e;
  }
  const d = policy.document;
  const info = { ok: true, file, name: d.name, version: policy.version, actions: Object.keys(d.actions).length, sources: d.sources.length };
  ctx.emit(info, () => `ok ${file}: policy ${d.name} ${policy.version} (${info.actions} action types, ${info.sources} source rules)`);
}

/** `policy show [FILE]`: the effective policy; `--json` prints `{version, document}`. */
async function policyShow(ctx: Ctx, _o: unknown, file: string): Promise<void> {
  const policy = policyOf(ctx, file);
  ctx.emit({ version: policy.version, document: policy.document }, () => formatPolicy(policy));
}

/** The effective policy for a person: settings, the action table, the source rules in match order. */
export function formatPolicy(p: Policy): string {
  const d = p.document;
  const actions = Object.entries(d.actions)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([type, r]) => [
      type,
      r.tier,
      d.modes[r.tier],
      (r.escalate ?? []).map((e) => `${e.tier} when ${e.whenArgs.join('|')}`).join('; '),
      r.arguments?.join(',') ?? '(any)',
      Object.entries(r.argumentTypes ?? {})
        .filter(([, t]) => t === 'amount')
        .map(([a]) => a)
        .join(','),
    ]);
  const sources = d.sources.map((s, i) => [String(i + 1), s.match, s.authority, s.principals?.join(',') ?? '(any)', s.description ?? '']);
  return [
    `policy ${d.name} ${p.version}`,
    ...(d.description !== undefined ? [d.description] : []),
    `modes            read_only ${d.modes.read_only}, low ${d.modes.low}, high ${d.modes.high}`,
    `corroboration    k=${d.corroboration.k} independent principals at ${d.corroboration.minAuthority} or higher`,
    `confirmation     default ttl ${d.confirmation.defaultTtlSeconds}s, max ${d.confirmation.maxTtlSeconds}s`,
    `unlisted action  high (mode ${d.modes.high})`,
    'actions:',
    table(['type', 'tier', 'mode', 'escalate', 'arguments', 'amounts'], actions),
    'sources (first match wins):',
    sources.length > 0 ? table(['#', 'match', 'authority', 'principals', 'description'], sources) : '  (none)',
    `unmatched source ${d.defaultSourceAuthority} (a principal's own statements, principal:<id>: its ceiling, except tools)`,
  ].join('\n');
}

/** The `policy` group. */
export const policyCommands: readonly AnyCommand[] = [
  group('policy', 'check and show policy files (no database needed)'),
  command({
    name: 'policy check',
    arg: '<file>',
    description: 'validate a policy file and report every problem with its JSON path; exit 2 when invalid',
    handler: policyCheck,
  }),
  command({
    name: 'policy show',
    arg: '[file]',
    description: 'print the effective policy (FILE, else --policy, else the built-in default), with "extends" applied; --json for the document',
    handler: policyShow,
  }),
];
