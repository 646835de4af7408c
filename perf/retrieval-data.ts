/**
 * Writes the labelled retrieval set to data/retrieval-eval/retrieval-set.json from its generator
 * (src/bench/retrieval/dataset.ts, seed 20261201). Deterministic: running it again writes the same
 * bytes, and test/retrieval-eval.test.ts fails when the committed file differs.
 *
 * Run: `npx tsc -p tsconfig.json && node dist/perf/retrieval-data.js`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateRetrievalSet } from '../src/bench/retrieval/dataset.js';

const out = fileURLToPath(new URL('../../data/retrieval-eval/retrieval-set.json', import.meta.url));
mkdirSync(fileURLToPath(new URL('../../data/retrieval-eval/', import.meta.url)), { recursive: true });
const set = generateRetrievalSet();
writeFileSync(out, `${JSON.stringify(set, null, 1)}\n`);
process.stdout.write(`wrote ${set.records.length} records and ${set.queries.length} queries to ${out}\n`);
