/** Benchmark entry points (filled in by src/bench/run.ts). */
export { runBench, renderBenchTable, type BenchOptions, type BenchReport } from './run.js';
