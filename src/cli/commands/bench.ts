import type { Command } from 'commander';
import { type BenchReport, renderBenchTable, runBench } from '../../bench/index.js';
import { type RunState, act, commaList } from '../context.js';
import { createProgress } from '../progress.js';

/** Register `bench`: run the benchmark (its own databases; no --db, no --tenant) and print the table or JSON. */
export function registerBenchCommand(program: Command, state: RunState): void {
  program
    .command('bench')
    .description('run the laundering benchmark (MEM-INV-Bench format); progress on stderr')
    .option('--scenarios <file>', 'scenario file (default: data/scenarios/default.json)')
    .option('--defenses <list>', 'comma-separated defenses to compare (default: none,memauth)', commaList)
    .action(
      act(state, async (ctx, o: { scenarios?: string; defenses?: string[] }) => {
        const progress = createProgress(process.stderr, 'bench');
        let report: BenchReport;
        try {
          report = await runBench({
            ...(o.scenarios !== undefined ? { scenarios: o.scenarios } : {}),
            ...(o.defenses !== undefined ? { defenses: o.defenses } : {}),
            onProgress: (done, total, label) => progress.update(done, total, label),
          });
        } finally {
          progress.finish();
        }
        ctx.out(ctx.json ? JSON.stringify(report) : renderBenchTable(report));
      }),
    );
}
