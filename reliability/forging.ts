import type { Options, SuiteResult } from './common.js'; export async function run(_o: Options): Promise<SuiteResult> { return { suite: 'forging', cases: 0, failures: 0, lost: 0, notes: ['todo'] }; }
