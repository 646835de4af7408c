/**
 * The command table of the `memauth` CLI, like the HTTP route table (src/server/routes/common.ts):
 * each command is one entry — name, positional argument, description, options and a NAMED handler
 * — so a reader goes from a command to the `Memory` method it calls in one step. This file holds
 * the entry types and the one function that turns a table into commander commands; the tables
 * are in ./commands/*.ts, their order (the help order) in ./program.ts.
 *
 * May import: commander and ./context.ts.
 */
import { type Command, Option } from 'commander';
import { type Ctx, type RunState, ctxOf } from './context.js';

/** One option of a command: commander's `Option`, spelled as data. */
export interface OptionSpec {
  /** commander flags, e.g. `--limit <n>`, `--memory <ids...>`, `--no-progress`. */
  readonly flags: string;
  readonly description: string;
  /** parser of the value (commander's argParser); gets the previous value for repeatable options. */
  readonly parse?: (value: string, previous: never) => unknown;
  readonly default?: unknown;
  readonly choices?: readonly string[];
  /** the option must be given (commander's mandatory option). */
  readonly required?: boolean;
  /** environment variable that supplies the value when the flag is absent. */
  readonly env?: string;
}

interface CommandBase {
  /** the words after `memauth`: `write`, or `principal add` under the group `principal`. */
  readonly name: string;
  /** the positional argument, e.g. `<id>` (at most one). */
  readonly arg?: string;
  readonly description: string;
  readonly options?: readonly OptionSpec[];
  /** text shown after the command's help. */
  readonly helpAfter?: string;
}

/**
 * A data command: its handler gets the {@link Ctx} of the global options (store, tenant, --json),
 * its parsed options and its positional argument (`''` without one), and returns the exit code
 * (default 0).
 */
export interface CommandSpec<O> extends CommandBase {
  readonly handler: (ctx: Ctx, opts: O, arg: string) => Promise<number | void>;
}

/**
 * A command that reads the commander command itself (which of its options came from the command
 * line; `serve`, `mcp`, `token …`): its handler builds what it needs and exits 0 unless it throws.
 */
export interface RawCommandSpec<O> extends CommandBase {
  readonly raw: (cmd: Command, opts: O, arg: string) => Promise<void>;
}

/** A command group (`principal`, `audit`, `token`): no action of its own; its commands follow it in the table. */
export interface GroupSpec {
  readonly group: string;
  readonly description: string;
}

/** An entry of a command table with its option type erased. */
export type AnyCommand = CommandSpec<never> | RawCommandSpec<never> | GroupSpec;

/** Declare a data command (keeps the handler's option type tied to the entry). */
export function command<O>(spec: CommandSpec<O>): AnyCommand {
  return spec as unknown as AnyCommand;
}

/** Declare a raw command (see {@link RawCommandSpec}). */
export function rawCommand<O>(spec: RawCommandSpec<O>): AnyCommand {
  return spec as unknown as AnyCommand;
}

/** Declare a command group. */
export function group(name: string, description: string): AnyCommand {
  return { group: name, description };
}

/** The commander Option of an {@link OptionSpec}. */
function optionOf(o: OptionSpec): Option {
  const opt = new Option(o.flags, o.description);
  if (o.parse !== undefined) opt.argParser(o.parse as (value: string, previous: unknown) => unknown);
  if (o.default !== undefined) opt.default(o.default);
  if (o.choices !== undefined) opt.choices(o.choices);
  if (o.required === true) opt.makeOptionMandatory();
  if (o.env !== undefined) opt.env(o.env);
  return opt;
}

/**
 * Add the commands of `table` to `program`, in table order. A handler's returned exit code is
 * recorded in `state`; what it throws goes to the caller of `parseAsync` (src/cli/program.ts).
 */
export function registerCommands(program: Command, table: readonly AnyCommand[], state: RunState): void {
  const groups = new Map<string, Command>();
  for (const spec of table) {
    if ('group' in spec) {
      groups.set(spec.group, program.command(spec.group).description(spec.description));
      continue;
    }
    const words = spec.name.split(' ');
    const parent = words.length > 1 ? groups.get(words[0] as string) : program;
    if (parent === undefined) throw new Error(`command table: the group of ${spec.name} must come before it`);
    const leaf = words[words.length - 1] as string;
    const cmd = parent.command(spec.arg !== undefined ? `${leaf} ${spec.arg}` : leaf).description(spec.description);
    for (const o of spec.options ?? []) cmd.addOption(optionOf(o));
    if (spec.helpAfter !== undefined) cmd.addHelpText('after', spec.helpAfter);
    cmd.action(async (...a: unknown[]) => {
      // commander passes (positional argument?, options, command)
      const self = a[a.length - 1] as Command;
      const opts = a[a.length - 2] as never;
      const arg = spec.arg !== undefined ? (a[0] as string) : '';
      if ('raw' in spec) {
        await spec.raw(self, opts, arg);
        state.exitCode = 0;
        return;
      }
      const code = await spec.handler(ctxOf(self), opts, arg);
      state.exitCode = code ?? 0;
    });
  }
}
