/**
 * Command table of `bench` (`runBench`, src/bench) and its option parsers.
 */
import { InvalidArgumentError } from 'commander';
import { type BenchReport, type LlmOptions, jsonReport, renderBenchTable, runBench, writeResults } from '../../bench/index.js';
import { MemauthError } from '../../core/errors.js';
import { type Ctx, commaList, positiveInt } from '../context.js';
import { EXIT } from '../errors.js';
import { createProgress } from '../progress.js';
import { type AnyCommand, command } from '../spec.js';

interface BenchFlags {
  scenarios?: string;
  defenses?: string[];
  agent?: string[];
  model?: string[];
  baseUrl?: string;
  apiKeyEnv: string;
  trials?: number;
  seed?: number;
  contentThreshold?: number;
  unparsableThreshold?: number;
  timeoutMs?: number;
  retries?: number;
  retryBaseMs?: number;
  maxTurns?: number;
  maxTokens?: number;
  temperature?: number;
  concurrency?: number;
  out?: string;
  workDir?: string;
  progress: boolean;
}

/** Commander parser for an integer (negative allowed: seeds). */
function integer(value: string): number {
  if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError('must be an integer');
  return Number(value);
}

/** Commander parser for a non-negative integer (retries). */
function nonNegativeInt(value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError('must be a non-negative integer');
  return Number(value);
}

/** Commander parser for a finite number in [0, max]. */
const numberIn =
  (max: number) =>
  (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > max) throw new InvalidArgumentError(`must be a number from 0 to ${max}`);
    return n;
  };

const repeat = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/** The llm agent's options, or undefined when only the worst-case agent runs. */
function llmOptions(ctx: Ctx, o: BenchFlags): LlmOptions | undefined {
  const wantsLlm = (o.agent ?? []).includes('llm') || (o.agent === undefined && (o.model ?? []).length > 0);
  if (!wantsLlm) return undefined;
  if (o.baseUrl === undefined) throw new MemauthError('INVALID_ARGUMENT', 'the llm agent needs --base-url (an OpenAI-compatible endpoint, e.g. https://api.openai.com/v1)', { field: 'baseUrl' });
  const key = process.env[o.apiKeyEnv];
  if (key === undefined || key === '') ctx.err(`bench: no API key in $${o.apiKeyEnv}; requests go without an Authorization header`);
  return {
    baseUrl: o.baseUrl,
    apiKey: key !== undefined && key !== '' ? key : null,
    apiKeyEnv: o.apiKeyEnv,
    ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
    ...(o.retries !== undefined ? { retries: o.retries } : {}),
    ...(o.retryBaseMs !== undefined ? { retryBaseMs: o.retryBaseMs } : {}),
    ...(o.maxTurns !== undefined ? { maxTurns: o.maxTurns } : {}),
    ...(o.maxTokens !== undefined ? { maxTokens: o.maxTokens } : {}),
    ...(o.temperature !== undefined ? { temperature: o.temperature } : {}),
  };
}

/**
 * `bench` → `runBench` (src/bench): run the MEM-INV-Bench study (its own stores; no --db, no
 * --tenant) and print the tables or JSON; `--out DIR` also writes results.json, results.md and
 * results.svg. Exit 1 when a decision did not replay or a chain did not verify.
 */
async function benchCommand(ctx: Ctx, o: BenchFlags): Promise<number> {
  const llm = llmOptions(ctx, o);
  const progress = o.progress ? createProgress(process.stderr, 'bench') : null;
  let report: BenchReport;
  try {
    report = await runBench({
      ...(o.scenarios !== undefined ? { scenarios: o.scenarios } : {}),
      ...(o.defenses !== undefined ? { defenses: o.defenses } : {}),
      ...(o.agent !== undefined ? { agents: o.agent } : {}),
      ...(o.model !== undefined ? { models: o.model } : {}),
      ...(llm !== undefined ? { llm } : {}),
      ...(o.trials !== undefined ? { trials: o.trials } : {}),
      ...(o.seed !== undefined ? { seed: o.seed } : {}),
      ...(o.contentThreshold !== undefined ? { contentThreshold: o.contentThreshold } : {}),
      ...(o.unparsableThreshold !== undefined ? { unparsableThreshold: o.unparsableThreshold } : {}),
      ...(o.concurrency !== undefined ? { concurrency: o.concurrency } : {}),
      ...(o.workDir !== undefined ? { workDir: o.workDir } : {}),
      ...(progress ? { onProgress: (done: number, total: number, label: string) => progress.update(done, total, label) } : {}),
    });
  } finally {
    progress?.finish();
  }
  if (o.out !== undefined) {
    const files = writeResults(o.out, report);
    ctx.err(`bench: wrote ${files.join(', ')}`);
  }
  ctx.out(ctx.json ? JSON.stringify(jsonReport(report)) : renderBenchTable(report));
  const c = report.checks;
  return c.replayed === c.decisions && c.chainsVerified === c.decisions ? EXIT.OK : EXIT.FAILED;
}

export const benchCommands: readonly AnyCommand[] = [
  command({
    name: 'bench',
    description: 'run the laundering benchmark (MEM-INV-Bench format) over five defense classes; progress on stderr',
    options: [
      { flags: '--scenarios <file>', description: 'scenario file (default: data/scenarios/default.json)' },
      { flags: '--defenses <list>', description: 'comma-separated defenses, or "all" (none, content, lineage, capability_ifc, memauth; default: none,memauth)', parse: commaList },
      { flags: '--agent <name>', description: 'agent: worst-case (default) or llm; repeat for both', parse: repeat },
      { flags: '--model <name>', description: 'model for the llm agent; repeat for several models', parse: repeat },
      { flags: '--base-url <url>', description: 'OpenAI-compatible endpoint, e.g. https://api.openai.com/v1' },
      { flags: '--api-key-env <name>', description: 'environment variable holding the API key', default: 'OPENAI_API_KEY' },
      { flags: '--trials <n>', description: 'trials per cell (default 1)', parse: positiveInt },
      { flags: '--seed <n>', description: 'base seed (default 1)', parse: integer },
      { flags: '--content-threshold <x>', description: 'content detector threshold (default 1)', parse: numberIn(100) },
      { flags: '--unparsable-threshold <rate>', description: 'flag a model whose empty+unparsable share exceeds this (default 0.1)', parse: numberIn(1) },
      { flags: '--timeout-ms <n>', description: 'per-request timeout for the model (default 60000)', parse: positiveInt },
      { flags: '--retries <n>', description: 'retries per model request on 429/5xx/network errors (default 4)', parse: nonNegativeInt },
      { flags: '--retry-base-ms <n>', description: 'first retry delay, doubled each retry, with jitter (default 500)', parse: positiveInt },
      { flags: '--max-turns <n>', description: 'agent turns per run, intermediate steps included (default 4)', parse: positiveInt },
      { flags: '--max-tokens <n>', description: 'completion token limit per request (default 512)', parse: positiveInt },
      { flags: '--temperature <t>', description: 'model temperature (default 0)', parse: numberIn(2) },
      { flags: '--concurrency <n>', description: 'runs in flight at once (default 1; 4 with a model)', parse: positiveInt },
      { flags: '--out <dir>', description: 'write results.json, results.md and results.svg to this folder' },
      { flags: '--work-dir <dir>', description: "keep each run's store as a SQLite file under this folder while it runs (default: in-memory SQLite)" },
      { flags: '--no-progress', description: 'no progress display on stderr' },
    ],
    handler: benchCommand,
  }),
];
