/**
 * `npm run reliability [-- --long] [--only a,b] [--seed N]`: crash, tamper, bad-input, forging,
 * isolation, load and deletion suites against the built memauth; prints one table and exits 1
 * on any failure or lost item.
 */
import type { Options, SuiteResult } from './common.js';

type Suite = { name: string; run: (o: Options) => Promise<SuiteResult | SuiteResult[]> };

const SUITES: Suite[] = [
  { name: 'tamper', run: async (o) => (await import('./tamper.js')).run(o) },
  { name: 'forging', run: async (o) => (await import('./forging.js')).run(o) },
  { name: 'exposure', run: async (o) => (await import('./exposure.js')).run(o) },
  { name: 'values', run: async (o) => (await import('./values.js')).run(o) },
  { name: 'isolation', run: async (o) => (await import('./isolation.js')).run(o) },
  { name: 'observables', run: async (o) => (await import('./observables.js')).run(o) },
  { name: 'deletion', run: async (o) => (await import('./deletion.js')).run(o) },
  { name: 'badinput', run: async (o) => (await import('./badinput.js')).run(o) },
  { name: 'crash', run: async (o) => (await import('./crash.js')).run(o) },
  { name: 'load', run: async (o) => (await import('./load.js')).run(o) },
  { name: 'mcp', run: async (o) => (await import('./mcp.js')).run(o) },
  { name: 'chain', run: async (o) => (await import('./chain.js')).run(o) },
  { name: 'fairness', run: async (o) => (await import('./fairness.js')).run(o) },
];

function parseArgs(argv: readonly string[]): Options & { only: string[] | null } {
  let long = false;
  let seed = Date.now() % 1_000_000;
  let only: string[] | null = null;
  let verbose = false;
  for (let i = 0; i < argv.length; i += 1) {
    const a = argv[i];
    if (a === '--long') long = true;
    else if (a === '--verbose' || a === '-v') verbose = true;
    else if (a === '--seed') seed = Number(argv[++i]);
    else if (a === '--only') only = String(argv[++i]).split(',');
    else if (a === '--help' || a === '-h') {
      console.log(`usage: npm run reliability [-- --long] [--only ${SUITES.map((s) => s.name).join(',')}] [--seed N] [--verbose]`);
      process.exit(0);
    } else {
      console.error(`unknown argument ${a}`);
      process.exit(2);
    }
  }
  return { long, seed, only, verbose };
}

const pad = (s: string, n: number, right = false): string => (right ? s.padStart(n) : s.padEnd(n));

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  console.log(`memauth reliability (${opts.long ? 'long' : 'fast'}), seed ${opts.seed}, node ${process.version}`);
  const rows: Array<SuiteResult & { ms: number }> = [];
  for (const s of SUITES) {
    if (opts.only && !opts.only.includes(s.name)) continue;
    const t0 = Date.now();
    process.stdout.write(`… ${s.name}\n`);
    let res: SuiteResult[];
    try {
      const r = await s.run(opts);
      res = Array.isArray(r) ? r : [r];
    } catch (e) {
      res = [{ suite: s.name, cases: 0, failures: 1, lost: 0, notes: [`FAIL the suite threw: ${(e as Error).stack ?? String(e)}`] }];
    }
    const ms = Date.now() - t0;
    for (const r of res) {
      rows.push({ ...r, ms: res.length > 1 ? NaN : ms });
      for (const n of r.notes) console.log(`    ${r.suite}: ${n}`);
    }
    if (res.length > 1) rows.push({ suite: `  (${s.name} total time)`, cases: NaN, failures: NaN, lost: NaN, notes: [], ms });
  }
  const header = ['suite', 'cases tried', 'failures', 'lost items', 'time'];
  const body = rows.map((r) => [
    r.suite,
    Number.isNaN(r.cases) ? '' : String(r.cases),
    Number.isNaN(r.failures) ? '' : String(r.failures),
    Number.isNaN(r.lost) ? '' : String(r.lost),
    Number.isNaN(r.ms) ? '' : `${(r.ms / 1000).toFixed(1)} s`,
  ]);
  const real = rows.filter((r) => !Number.isNaN(r.cases));
  const total = [
    'total',
    String(real.reduce((a, r) => a + r.cases, 0)),
    String(real.reduce((a, r) => a + r.failures, 0)),
    String(real.reduce((a, r) => a + r.lost, 0)),
    `${(rows.reduce((a, r) => a + (Number.isNaN(r.ms) ? 0 : r.ms), 0) / 1000).toFixed(1)} s`,
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...[...body, total].map((b) => (b[i] as string).length)));
  const line = (cells: string[]): string => `| ${cells.map((c, i) => pad(c, widths[i] as number, i > 0)).join(' | ')} |`;
  console.log('');
  console.log(line(header));
  console.log(`|${widths.map((w, i) => (i > 0 ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`);
  for (const b of body) console.log(line(b));
  console.log(line(total));
  const failures = real.reduce((a, r) => a + r.failures, 0);
  const lost = real.reduce((a, r) => a + r.lost, 0);
  console.log(failures === 0 && lost === 0 ? '\nreliability: OK (0 failures, 0 lost items)' : `\nreliability: FAILED (${failures} failures, ${lost} lost items)`);
  process.exitCode = failures === 0 && lost === 0 ? 0 : 1;
}

await main();
