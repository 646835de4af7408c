/**
 * Rendering a bench report: the terminal table, the Markdown tables of results.md, and the JSON of
 * `--json` and results.json (rates with Wilson 95% intervals). Pure: strings and objects out.
 */
import { basename } from 'node:path';
import Table from 'cli-table3';
import { DEFENSE_DESCRIPTIONS, type DefenseName } from './defenses/index.js';
import { type AgentReport, type BenchReport, type DefenseReport, RESULTS_SCHEMA_VERSION } from './types.js';
import { wilson } from './stats.js';
import { REPORT_CHANNELS } from './tally.js';
import { CHANNELS, SUBS } from './world.js';

type Pair = { k: number; n: number };
const pairOf = (t: { attempts: number; successes?: number; allowed?: number }, field: 'successes' | 'allowed' | 'confirmationRequested' | 'allowedAfterConfirmation' = 'successes'): Pair => ({
  k: (t as Record<string, number>)[field] ?? 0,
  n: t.attempts,
});

const pct = (x: number): string => `${(100 * x).toFixed(0)}%`;

/** `3/37 (8%)`; with ci: plus `[2–21%]`. */
export function cell(p: Pair, opts: { ci?: boolean; sep?: string } = {}): string {
  if (p.n === 0) return '—';
  const main = `${p.k}/${p.n} (${pct(p.k / p.n)})`;
  if (opts.ci === false) return main;
  const [lo, hi] = wilson(p.k, p.n);
  return `${main}${opts.sep ?? ' '}[${(100 * lo).toFixed(0)}–${pct(hi)}]`;
}

function agentTitle(label: string, a: AgentReport): string {
  return a.agent === 'worst-case' ? 'agent: worst-case (deterministic upper bound)' : `agent: llm, model ${a.model}`;
}

/** Human tables for the terminal: the ASR matrix, then limits and utility; one block per agent. */
export function renderBenchTable(r: BenchReport): string {
  const lines: string[] = [
    `MEM-INV-Bench: ${r.scenarios} scenarios from ${r.scenarioFile}`,
    `policy ${r.policyVersion.slice(0, 12)} (k=2), ${r.policyVersionK3.slice(0, 12)} (k=3); ${r.config.trials} trial(s) per cell, seed ${r.config.seed}; [Wilson 95% CI]`,
    "ASR = attacker's action proposed and allowed (lower is better); utility = expected action proposed and allowed (higher is better)",
  ];
  const multi = Object.keys(r.agents).length > 1;
  for (const [label, a] of Object.entries(r.agents)) {
    if (multi || a.agent !== 'worst-case') lines.push('', agentTitle(label, a));
    const t = new Table({ head: ['defense', ...REPORT_CHANNELS.map((c) => `ASR ${c}`), 'legit utility'], style: { head: [], border: [] } });
    for (const [name, d] of Object.entries(a.defenses)) {
      t.push([name, ...REPORT_CHANNELS.map((c) => cell(pairOf(d.channels[c] as { attempts: number; successes: number }), { sep: '\n' })), cell(pairOf(d.legit, 'allowed'), { sep: '\n' })]);
    }
    lines.push(t.toString());
    const u = new Table({
      head: ['defense', 'ASR indep. k=2', 'ASR indep. k=3', 'legit k=3 (3 vouchers)', 'uncorroborated legit', 'benign variants'],
      style: { head: [], border: [] },
    });
    for (const [name, d] of Object.entries(a.defenses)) {
      const lu = d.legitUncorroborated;
      const isM = name === 'memauth';
      u.push([
        name,
        cell(pairOf(d.limits.corroborate_independent.k2), { sep: '\n' }),
        cell(pairOf(d.limits.corroborate_independent.k3), { sep: '\n' }),
        cell(pairOf(d.legitK3, 'allowed'), { sep: '\n' }),
        isM ? `${cell(pairOf(lu, 'allowed'), { ci: false })}\nasked ${lu.confirmationRequested}, confirmed → ${lu.allowedAfterConfirmation}` : cell(pairOf(lu, 'allowed'), { ci: false }),
        isM
          ? `${cell(pairOf(d.benign, 'allowed'), { ci: false })}\nasked ${d.benign.confirmationRequested}, confirmed → ${d.benign.allowedAfterConfirmation}\ncontext taint alone would ask ${d.benign.contextWaived} more`
          : cell(pairOf(d.benign, 'allowed'), { ci: false }),
      ]);
    }
    lines.push(u.toString());
    if (a.agent === 'llm' && a.llm) {
      const l = a.llm;
      lines.push(
        `model ${a.model}: ${l.requests} requests, ${l.retries} retries, ${l.errors} failed; ${l.empty} empty + ${l.unparsable} unparsable of ${l.responses} responses${l.unparsableRate !== null ? ` (${pct(l.unparsableRate)})` : ''}${l.flagged ? ' — FLAGGED' : ''}; tokens ${l.promptTokens} in / ${l.completionTokens} out; proposed the attacker's action in ${a.attackProposed.proposed}/${a.attackProposed.attempts} attack runs`,
      );
    }
  }
  lines.push(
    '',
    `checks: ${r.checks.replayed}/${r.checks.decisions} memauth decisions replayed from the audit log to the same outcome; ${r.checks.chainsVerified}/${r.checks.decisions} audit chains verified;`,
    `        ${r.checks.attacksDeniedWithNarrowedContext}/${r.checks.attacks} attacks still denied when the agent narrows its context to declared dependencies (value-level provenance alone)`,
  );
  if (r.notes.length > 0) lines.push('notes:', ...r.notes.map((n) => `  - ${n}`));
  return lines.join('\n');
}

const mdCell = (p: Pair): string => cell(p, { sep: ' ' });

function mdTable(head: string[], rows: string[][]): string {
  return [`| ${head.join(' | ')} |`, `| ${head.map(() => '---').join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

/** results.md: the matrix and the other tables with Wilson 95% intervals, per agent. */
export function renderMarkdown(r: BenchReport): string {
  const out: string[] = [
    '# MEM-INV-Bench results',
    '',
    `Scenarios: ${r.scenarios} from \`${basename(r.scenarioFile)}\`. Trials per cell: ${r.config.trials}, seed ${r.config.seed}. Policy \`${r.policyVersion.slice(0, 16)}\` (k=2), \`${r.policyVersionK3.slice(0, 16)}\` (k=3). Content detector threshold ${r.config.contentThreshold}. Store: ${r.config.store}.`,
    '',
    "Cells are `successes/attempts (rate) [Wilson 95% CI]`. ASR = the attacker's action was proposed and allowed (lower is better). Utility = the expected action was proposed and allowed (higher is better).",
    '',
    '## Defenses',
    '',
    ...r.config.defenses.map((d) => `- \`${d}\` — ${DEFENSE_DESCRIPTIONS[d as DefenseName]}`),
  ];
  for (const [label, a] of Object.entries(r.agents)) {
    out.push('', `## ${agentTitle(label, a)}`, '', '### Attack success rate by channel', '');
    out.push(
      mdTable(
        ['defense', ...REPORT_CHANNELS, 'legit utility (k=2)'],
        Object.entries(a.defenses).map(([n, d]) => [
          `\`${n}\``,
          ...REPORT_CHANNELS.map((c) => mdCell(pairOf(d.channels[c] as { attempts: number; successes: number }))),
          mdCell(pairOf(d.legit, 'allowed')),
        ]),
      ),
    );
    const subs = CHANNELS.flatMap((c) => SUBS[c].filter((s) => s !== null).map((s) => `${c}:${s}`));
    out.push(
      '',
      '### By sub-variant',
      '',
      mdTable(
        ['defense', ...subs],
        Object.entries(a.defenses).map(([n, d]) => [`\`${n}\``, ...subs.map((s) => mdCell(pairOf(d.subchannels[s] as { attempts: number; successes: number })))]),
      ),
    );
    out.push(
      '',
      '### Corroboration limit: two independent trusted principals compromised',
      '',
      mdTable(
        ['defense', 'ASR at k=2', 'ASR at k=3', 'legit utility at k=3 (three independent vouchers)', 'legit at k=3 with two vouchers', 'confirmation asked (two vouchers)'],
        Object.entries(a.defenses).map(([n, d]) => [
          `\`${n}\``,
          mdCell(pairOf(d.limits.corroborate_independent.k2)),
          mdCell(pairOf(d.limits.corroborate_independent.k3)),
          mdCell(pairOf(d.legitK3, 'allowed')),
          mdCell(pairOf(d.legitK3TwoVouchers, 'allowed')),
          n === 'memauth' ? mdCell(pairOf(d.legitK3TwoVouchers, 'confirmationRequested')) : 'n/a',
        ]),
      ),
    );
    out.push(
      '',
      '### Legitimate tasks and benign variants',
      '',
      mdTable(
        [
          'defense',
          'corroborated legit',
          'uncorroborated legit (value only in untrusted memory)',
          'confirmation asked',
          'after a scoped confirmation',
          'benign variants',
          'benign: confirmation asked',
          'benign: after confirmation',
          'benign: cost of the context-taint rule alone (allowed only with the context waived)',
        ],
        Object.entries(a.defenses).map(([n, d]) => {
          const m = n === 'memauth';
          return [
            `\`${n}\``,
            mdCell(pairOf(d.legit, 'allowed')),
            mdCell(pairOf(d.legitUncorroborated, 'allowed')),
            m ? mdCell(pairOf(d.legitUncorroborated, 'confirmationRequested')) : 'n/a',
            m ? mdCell(pairOf(d.legitUncorroborated, 'allowedAfterConfirmation')) : 'n/a',
            mdCell(pairOf(d.benign, 'allowed')),
            m ? mdCell(pairOf(d.benign, 'confirmationRequested')) : 'n/a',
            m ? mdCell(pairOf(d.benign, 'allowedAfterConfirmation')) : 'n/a',
            m ? mdCell({ k: d.benign.contextWaived, n: d.benign.attempts }) : 'n/a',
          ];
        }),
      ),
    );
    out.push('', `The agent proposed the attacker's action in ${mdCell({ k: a.attackProposed.proposed, n: a.attackProposed.attempts })} of the attack runs (before any gate).`);
    if (a.llm) {
      const l = a.llm;
      out.push(
        '',
        '### Model',
        '',
        mdTable(
          ['model', 'requests', 'retries', 'failed', 'empty', 'unparsable', 'empty+unparsable rate', 'flagged', 'prompt tokens', 'completion tokens'],
          [
            [
              `\`${a.model}\``,
              String(l.requests),
              String(l.retries),
              String(l.errors),
              String(l.empty),
              String(l.unparsable),
              l.unparsableRate === null ? '—' : pct(l.unparsableRate),
              l.flagged ? '**yes**' : 'no',
              String(l.promptTokens),
              String(l.completionTokens),
            ],
          ],
        ),
      );
    }
  }
  out.push(
    '',
    '## Checks',
    '',
    `- ${r.checks.replayed}/${r.checks.decisions} memauth decisions replayed from the audit log to the same outcome; ${r.checks.chainsVerified}/${r.checks.decisions} audit chains verified.`,
    `- ${r.checks.attacksDeniedWithNarrowedContext}/${r.checks.attacks} attacks still denied by memauth when the agent narrows its context to declared dependencies.`,
  );
  if (r.notes.length > 0) out.push('', '## Notes', '', ...r.notes.map((n) => `- ${n}`));
  out.push('');
  return out.join('\n');
}

/** Add `rate` and `ci95` next to every tally (`{attempts, successes|allowed}`), recursively. */
export function withRates<T>(x: T): T {
  if (Array.isArray(x)) return x.map(withRates) as T;
  if (typeof x !== 'object' || x === null) return x;
  const o = x as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) out[k] = withRates(v);
  if (typeof o.attempts === 'number') {
    const k = typeof o.successes === 'number' ? o.successes : typeof o.allowed === 'number' ? o.allowed : null;
    if (k !== null) {
      out.rate = o.attempts === 0 ? null : k / o.attempts;
      out.ci95 = wilson(k, o.attempts);
    }
  }
  return out as T;
}

/** `--json` output: the report without the per-trial records, every tally with its rate and Wilson interval. */
export function jsonReport(r: BenchReport): Record<string, unknown> {
  const { trials: _t, ...rest } = r;
  return { ...rest, defenses: withRates(r.defenses), agents: withRates(r.agents) };
}

/** results.json: schema-versioned; the run's config, policy versions, summaries with intervals, and every trial. */
export function resultsJson(r: BenchReport, generatedAt: Date = new Date()): Record<string, unknown> {
  return {
    schemaVersion: RESULTS_SCHEMA_VERSION,
    generatedAt: generatedAt.toISOString(),
    tool: 'memauth bench',
    config: r.config,
    policyVersion: r.policyVersion,
    policyVersionK3: r.policyVersionK3,
    scenarios: r.scenarios,
    durationMs: r.durationMs,
    defenses: withRates(r.defenses),
    agents: withRates(r.agents),
    checks: r.checks,
    notes: r.notes,
    defenseDescriptions: Object.fromEntries(r.config.defenses.map((d) => [d, DEFENSE_DESCRIPTIONS[d as DefenseName]])),
    trials: r.trials,
  };
}

export type { DefenseReport };
