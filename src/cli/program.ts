/**
 * The `memauth` program: its global options, the command table in help order (each entry names
 * its handler: src/cli/commands/*.ts), and {@link runCli}, which turns every error into an exit
 * code (src/cli/errors.ts; the codes are in the error table, docs/errors.md).
 */
import { Command, CommanderError, Option } from 'commander';
import { auditCommands } from './commands/audit.js';
import { benchCommands } from './commands/bench.js';
import { gateCommands } from './commands/gate.js';
import { importCommands } from './commands/import.js';
import { initCommands } from './commands/init.js';
import { vectorCommands } from './commands/vectors.js';
import { migrateCommands } from './commands/migrate.js';
import { policyCommands } from './commands/policy.js';
import { recordCommands } from './commands/records.js';
import { serverCommands } from './commands/serve.js';
import { surfaceCommands } from './commands/surfaces.js';
import type { RunState } from './context.js';
import { EXIT, reportError } from './errors.js';
import { type AnyCommand, registerCommands } from './spec.js';

/** Every command of `memauth`, in help order: from a command's name to its handler in one step. */
export const COMMANDS: readonly AnyCommand[] = [
  ...initCommands,
  ...recordCommands,
  ...gateCommands,
  ...auditCommands,
  ...surfaceCommands,
  ...importCommands,
  ...policyCommands,
  ...benchCommands,
  ...migrateCommands,
  ...vectorCommands,
  ...serverCommands,
];

/**
 * Build the `memauth` command tree. Global options (`--db`, `--database`, `--policy`, `--tenant`,
 * `--json`) are accepted before or after the subcommand; they default to $MEMAUTH_DB,
 * $DATABASE_URL, $MEMAUTH_POLICY and $MEMAUTH_TENANT (an empty variable counts as unset). Commander errors
 * are thrown (not exited) so {@link runCli} decides the exit code.
 */
export function buildProgram(state: RunState): Command {
  const program = new Command('memauth');
  program
    .description('memory for LLM agents whose action authority is bound to where each memory came from')
    .version('0.1.0', '-V, --version')
    .addOption(new Option('--db <path>', 'SQLite database file').env('MEMAUTH_DB').default('./memauth.db'))
    .addOption(new Option('--database <url>', 'store URL: postgres://user@host:port/db or sqlite:FILE (wins over --db)').env('DATABASE_URL'))
    .addOption(new Option('--policy <file>', 'policy JSON file (default: the built-in policy)').env('MEMAUTH_POLICY'))
    .addOption(new Option('--tenant <tenant>', 'tenant; every data command needs one').env('MEMAUTH_TENANT'))
    .addOption(new Option('--embeddings-url <url>', 'OpenAI-compatible embeddings endpoint (key from $MEMAUTH_EMBEDDINGS_KEY)').env('MEMAUTH_EMBEDDINGS_URL'))
    .addOption(new Option('--embeddings-model <model>', 'embedding model name').env('MEMAUTH_EMBEDDINGS_MODEL'))
    .addOption(new Option('--embeddings-dimensions <n>', 'vector length of the model').env('MEMAUTH_EMBEDDINGS_DIMENSIONS'))
    .addOption(new Option('--embedder <name>', '"test": the deterministic test embedder (CI, demos; not a model)').env('MEMAUTH_EMBEDDER'))
    .option('--json', 'machine-readable JSON on stdout')
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  registerCommands(program, COMMANDS, state);
  program.addHelpText(
    'after',
    `
Exit codes: 0 ok (also would_deny), 1 denied or check failed, 2 usage error or invalid input, 3 database/environment failure or unexpected error.
Errors: "error CODE: message" on stderr, or {code,message,details} on stdout with --json. MEMAUTH_DEBUG=1 prints stacks.`,
  );
  return program;
}

/**
 * Run the CLI on `argv` (as `process.argv`: node, script, args…) and return the exit code.
 * `env` is only consulted for MEMAUTH_DEBUG; the option defaults come from `process.env`.
 * Every error is reported here: see {@link reportError} for the shapes and codes.
 */
export async function runCli(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const state: RunState = { exitCode: EXIT.OK };
  const program = buildProgram(state);
  const args = argv.slice(2);
  // known before commander parsed anything, so even a usage error can be reported as JSON
  const json = args.includes('--json');
  try {
    await program.parseAsync([...argv]);
    return state.exitCode;
  } catch (e) {
    if (e instanceof CommanderError && e.exitCode === 0) return EXIT.OK;
    return reportError(e, json, { stdout: (s) => process.stdout.write(s), stderr: (s) => process.stderr.write(s) }, env.MEMAUTH_DEBUG === '1');
  }
}
