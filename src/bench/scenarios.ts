/**
 * MEM-INV-Bench scenario files: the zod schema, loading and checking a file (`SCENARIO_INVALID`),
 * the default scenario path, and turning a bench action `{tool, ...args}` into a gate action.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { MemauthError } from '../core/errors.js';

/** An action as MEM-INV-Bench writes it: `{tool, ...args}`. */
const BenchAction = z.looseObject({ tool: z.string().min(1) });

const Scenario = z
  .looseObject({
    id: z.string().min(1),
    kind: z.enum(['attack', 'legit']),
    attack_class: z.string().min(1),
    session_a: z.looseObject({ ingest_prompt: z.string(), trusted_facts: z.array(z.string().min(1)) }),
    session_b: z.looseObject({
      user_task: z.string().min(1),
      attacker_action: BenchAction.optional(),
      benign_action: BenchAction.optional(),
      expected_action: BenchAction.optional(),
      requires_elevation: z.boolean().optional(),
    }),
    variants: z.record(z.string(), z.string().min(1)),
  })
  .superRefine((s, ctx) => {
    if (s.kind === 'attack' && !s.session_b.attacker_action) ctx.addIssue({ code: 'custom', path: ['session_b', 'attacker_action'], message: 'an attack scenario needs session_b.attacker_action' });
    if (s.kind === 'attack' && Object.keys(s.variants).every((v) => v === 'benign'))
      ctx.addIssue({ code: 'custom', path: ['variants'], message: 'an attack scenario needs at least one attack variant (static, adaptive, whitebox…)' });
    if (s.kind === 'legit' && !s.session_b.expected_action) ctx.addIssue({ code: 'custom', path: ['session_b', 'expected_action'], message: 'a legit scenario needs session_b.expected_action' });
    if (s.kind === 'legit' && !s.variants.benign) ctx.addIssue({ code: 'custom', path: ['variants', 'benign'], message: 'a legit scenario needs variants.benign' });
  });

export type Scenario = z.output<typeof Scenario>;
export type BenchActionT = z.output<typeof BenchAction>;

/** The project's own scenario set (same format, its own words): data/scenarios/default.json. */
export function defaultScenarioPath(): string {
  // dist/src/bench/scenarios.js → ../../../data/scenarios/default.json (also from src/bench/)
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'data', 'scenarios', 'default.json');
}

/**
 * Load and validate a MEM-INV-Bench-format scenario file (a JSON array of scenarios).
 * Extra fields are accepted; missing or mistyped ones are refused naming the scenario and field.
 *
 * @throws MemauthError `SCENARIO_INVALID` (unreadable file, bad JSON, bad field, duplicate id).
 */
export function loadScenarios(path: string): Scenario[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new MemauthError('SCENARIO_INVALID', `cannot read scenario file ${path}: ${(e as Error).message}`, { path });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new MemauthError('SCENARIO_INVALID', `scenario file ${path} is not valid JSON: ${(e as Error).message}`, { path });
  }
  if (!Array.isArray(json)) throw new MemauthError('SCENARIO_INVALID', `scenario file ${path} must hold a JSON array of scenarios`, { path });
  const out: Scenario[] = [];
  const ids = new Set<string>();
  json.forEach((raw, i) => {
    const r = Scenario.safeParse(raw);
    const label = typeof (raw as { id?: unknown })?.id === 'string' ? `scenario ${JSON.stringify((raw as { id: string }).id)} (#${i})` : `scenario #${i}`;
    if (!r.success) {
      const issue = r.error.issues[0];
      const field = issue?.path.join('.') || '(scenario)';
      throw new MemauthError('SCENARIO_INVALID', `${path}: ${label}: ${field}: ${issue?.message ?? 'invalid'}`, { path, index: i, field });
    }
    if (ids.has(r.data.id)) throw new MemauthError('SCENARIO_INVALID', `${path}: ${label}: duplicate id`, { path, index: i, field: 'id' });
    ids.add(r.data.id);
    out.push(r.data);
  });
  if (out.length === 0) throw new MemauthError('SCENARIO_INVALID', `scenario file ${path} holds no scenarios`, { path });
  return out;
}

/** `{tool, ...args}` → `{type, args}`. */
export function toAction(a: BenchActionT): { type: string; args: Record<string, unknown> } {
  const { tool, ...args } = a;
  return { type: tool, args };
}
