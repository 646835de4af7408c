#!/usr/bin/env node
/**
 * Minimal `memauth` entry for the server branch: `serve`, `mcp` and `token` only. The full CLI
 * (src/cli/program.ts) registers the same commands with registerServerCommands.
 */
import { Command, CommanderError, Option } from 'commander';
import { MemauthError } from '../core/errors.js';
import { HttpError } from '../server/errors.js';
import { registerServerCommands } from './commands/serve.js';

const program = new Command('memauth')
  .addOption(new Option('--db <path>', 'SQLite database file (default ./memauth.db, $MEMAUTH_DB)'))
  .addOption(new Option('--policy <file>', 'policy JSON file ($MEMAUTH_POLICY)'))
  .addOption(new Option('--tenant <tenant>', 'tenant ($MEMAUTH_TENANT)'))
  .option('--json', 'machine-readable JSON on stdout')
  .exitOverride();
registerServerCommands(program);
try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) process.exitCode = e.exitCode === 0 ? 0 : 2;
  else if (e instanceof MemauthError || e instanceof HttpError) {
    process.stderr.write(`error ${e.code}: ${e.message}\n`);
    process.exitCode = 2;
  } else {
    process.stderr.write(`memauth: unexpected error: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 3;
  }
}
