#!/usr/bin/env node
/**
 * The `memauth` command-line interface. Commands live in ./commands, output shapes in
 * ./format.ts, exit codes in ./errors.ts; `memauth --help` lists everything.
 */
import { runCli } from './program.js';

// `memauth … | head`: the reader went away; stop quietly instead of crashing on EPIPE.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
}

process.exitCode = await runCli(process.argv);
