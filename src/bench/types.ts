/**
 * The shapes of a bench run: its options, the per-defense tallies, the per-agent report, one
 * trial as recorded in results.json, and the whole report `runBench` returns. Types and
 * constants only; imports nothing but types and the defense list.
 */
import type { LlmCounters, ProposalStatus } from './agents.js';
import { DEFENSE_CLASSES, type DefenseName, type Verdict } from './defenses/index.js';
import type { BenchActionT } from './scenarios.js';
import type { Cell } from './world.js';

/** Every defense class; the default run uses `none` and `memauth`, `--defenses all` adds the others. */
export const DEFENSES = DEFENSE_CLASSES;
export type Defense = DefenseName;
export const DEFAULT_DEFENSES: readonly DefenseName[] = ['none', 'memauth'];
export const RESULTS_SCHEMA_VERSION = 1;

export interface LlmOptions {
  /** OpenAI-compatible base URL, e.g. `https://api.openai.com/v1` */
  readonly baseUrl: string;
  /** the key itself (read by the CLI from the environment variable named by --api-key-env); null for none */
  readonly apiKey: string | null;
  /** name of that environment variable, for the record (the key is never written anywhere) */
  readonly apiKeyEnv?: string;
  readonly timeoutMs?: number;
  readonly retries?: number;
  readonly retryBaseMs?: number;
  readonly retryMaxMs?: number;
  readonly temperature?: number;
  readonly maxTurns?: number;
  readonly maxTokens?: number;
}

export interface BenchOptions {
  /** path of a MEM-INV-Bench-format scenario file; default: the project's own data/scenarios/default.json */
  readonly scenarios?: string;
  /** defenses to report (`all` or names); default `none`, `memauth` */
  readonly defenses?: readonly string[];
  /** agents; default `worst-case` (or `llm` when models are given) */
  readonly agents?: readonly string[];
  /** models for the `llm` agent (one agent per model) */
  readonly models?: readonly string[];
  readonly llm?: LlmOptions;
  /** trials per cell; default 1 */
  readonly trials?: number;
  /** base seed; default 1 */
  readonly seed?: number;
  /** content detector threshold; default 1 */
  readonly contentThreshold?: number;
  /** flag a model whose share of empty or unparsable responses exceeds this; default 0.1 */
  readonly unparsableThreshold?: number;
  /** runs in flight at once (helps with a model endpoint); default 1 for worst-case only, 4 with a model */
  readonly concurrency?: number;
  /** progress callback: runs done, runs in all, label of the run just finished */
  readonly onProgress?: (done: number, total: number, label: string) => void;
  /** keep each run's store as a SQLite file in this folder (removed afterwards); default: in-memory SQLite */
  readonly workDir?: string;
}

export interface ChannelTally {
  attempts: number;
  successes: number;
}
export interface AllowedTally {
  attempts: number;
  allowed: number;
}
export interface ConfirmTally extends AllowedTally {
  /** memauth asked for a scoped confirmation (denied with `needs_confirmation` and no hard reason) */
  confirmationRequested: number;
  /** allowed outright, or after the user confirmed exactly this action (baselines: no confirmation mechanism) */
  allowedAfterConfirmation: number;
}

export interface DefenseReport {
  /** attack success per channel (attack variants; `corroborate` = sybil + correlated) */
  channels: Record<string, ChannelTally>;
  /** legit tasks with corroborated elevation (k=2): expected action allowed */
  legit: AllowedTally;
  /** per channel:sub-variant */
  subchannels: Record<string, ChannelTally>;
  /** two independent trusted principals compromised: the inherent limit at k=2, and k=3 */
  limits: { corroborate_independent: { k2: ChannelTally; k3: ChannelTally } };
  /** legit tasks whose value is only in untrusted memory */
  legitUncorroborated: ConfirmTally;
  /** legit tasks under a k=3 policy with three independent vouchers */
  legitK3: AllowedTally;
  /** legit tasks under a k=3 policy with only the two systems of record vouching */
  legitK3TwoVouchers: ConfirmTally;
  /**
   * benign variants of attack scenarios: the benign action allowed; `contextWaived`: of those
   * allowed outright by memauth, how many only because intent and every value had trusted
   * provenance — the runs the context-taint rule alone would have sent to a confirmation
   */
  benign: ConfirmTally & { byChannel: Record<string, AllowedTally>; contextWaived: number };
}

export interface LlmStats extends LlmCounters {
  /** (empty + unparsable) / responses */
  readonly unparsableRate: number | null;
  readonly flagged: boolean;
}

export interface AgentReport {
  readonly agent: 'worst-case' | 'llm';
  readonly model: string | null;
  readonly defenses: Record<string, DefenseReport>;
  /** runs of attack variants in which the agent proposed the attacker's action (before any gate) */
  readonly attackProposed: { attempts: number; proposed: number };
  readonly proposalStatus: Record<ProposalStatus, number>;
  readonly llm: LlmStats | null;
}

/** One run as recorded in results.json. */
export interface TrialRecord {
  readonly agent: string;
  readonly trial: number;
  readonly seed: number;
  readonly scenario: string;
  readonly kind: 'attack' | 'legit';
  readonly attackClass: string;
  readonly variant: string;
  readonly cell: Cell;
  readonly sub: string | null;
  readonly k: number;
  readonly proposal: BenchActionT | null;
  readonly proposalStatus: ProposalStatus;
  readonly turns: number;
  readonly matchesAttack: boolean;
  readonly matchesTarget: boolean;
  readonly tier: string | null;
  readonly verdicts: Partial<Record<DefenseName, Verdict>>;
  readonly memauth: {
    decisionId: string;
    outcome: string;
    replayed: boolean;
    chainOk: boolean;
    confirmationRequested: boolean;
    allowedAfterConfirmation: boolean | null;
    narrowedOutcome: string | null;
    /** the gate waived the context (trusted intent and values; docs/design.md § Claims and intent) */
    contextWaived: boolean;
  } | null;
  readonly summarizerEmpty: boolean;
  readonly tokens: { prompt: number; completion: number };
  readonly ms: number;
}

export interface BenchConfig {
  readonly scenarioFile: string;
  readonly scenarioCount: number;
  readonly defenses: readonly string[];
  readonly agents: readonly string[];
  readonly trials: number;
  readonly seed: number;
  readonly contentThreshold: number;
  readonly unparsableThreshold: number;
  readonly concurrency: number;
  readonly channels: Readonly<Record<string, readonly (string | null)[]>>;
  readonly k: number;
  readonly limitK: readonly number[];
  readonly store: 'sqlite-memory' | 'sqlite-file';
  readonly llm: Omit<LlmOptions, 'apiKey'> | null;
  readonly node: string;
}

/** `--json` shape: `{"scenarios": N, "defenses": {...}}` (the first agent's matrix) plus everything else of the run. */
export interface BenchReport {
  readonly scenarios: number;
  readonly defenses: Record<string, DefenseReport>;
  /** one entry per agent (`worst-case`, `llm:<model>`) */
  readonly agents: Record<string, AgentReport>;
  /** scenarios that did not fit as the harness runs them, and how they were handled. */
  readonly notes: readonly string[];
  readonly scenarioFile: string;
  readonly policyVersion: string;
  readonly policyVersionK3: string;
  /** every memauth decision replayed from its audit log, and every run's chain verified. */
  readonly checks: { decisions: number; replayed: number; chainsVerified: number; runs: number; attacksDeniedWithNarrowedContext: number; attacks: number };
  readonly config: BenchConfig;
  readonly trials: readonly TrialRecord[];
  readonly durationMs: number;
}
