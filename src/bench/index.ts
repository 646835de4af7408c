/** Benchmark entry points: MEM-INV-Bench end to end, five defense classes, agents, statistics, charts. */
export {
  runBench,
  benchPolicy,
  plan,
  actionMatches,
  CHANNELS,
  DEFENSES,
  DEFAULT_DEFENSES,
  RESULTS_SCHEMA_VERSION,
  type BenchOptions,
  type BenchReport,
  type BenchChannel,
  type DefenseReport,
  type AgentReport,
  type TrialRecord,
  type LlmOptions,
  type LlmStats,
  type ChannelTally,
  type AllowedTally,
  type ConfirmTally,
  type BenchConfig,
} from './run.js';
export { renderBenchTable, renderMarkdown, resultsJson, jsonReport, withRates } from './report.js';
export { renderSvg } from './chart.js';
export { writeResults } from './output.js';
export { wilson, mulberry32, deriveSeed, rate, type Rate } from './stats.js';
export { loadScenarios, defaultScenarioPath, toAction, type Scenario } from './scenarios.js';
export * as defenses from './defenses/index.js';
