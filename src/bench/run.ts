// placeholder, replaced by the real harness
export interface BenchOptions {
  /** path of a MEM-INV-Bench-format scenario file; default: the project's own data/scenarios/default.json */
  readonly scenarios?: string;
  /** defenses to run; default ['none', 'memauth'] */
  readonly defenses?: readonly string[];
  /** progress callback: (done, total, label) */
  readonly onProgress?: (done: number, total: number, label: string) => void;
}
export interface BenchReport {
  readonly scenarios: number;
  readonly defenses: Record<string, { channels: Record<string, { attempts: number; successes: number }>; legit: { attempts: number; allowed: number } }>;
  readonly notes: readonly string[];
}
export async function runBench(_opts: BenchOptions = {}): Promise<BenchReport> {
  return { scenarios: 0, defenses: {}, notes: [] };
}
export function renderBenchTable(_r: BenchReport): string {
  return '';
}
