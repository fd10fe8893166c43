import { randomUUID } from "node:crypto";
import { type Command, InvalidArgumentError } from "commander";
import { type CallResult, Clients, unwrap, type VendClient } from "./client.ts";
import { colorEnabled, colorsFor } from "./color.ts";
import { type ConfigFlags, type ResolvedConfig, resolveConfig, usesLiveKey } from "./config.ts";
import { UsageError } from "./errors.ts";
import { io } from "./io.ts";
import { type Column, type FormatFlags, formatFrom, outputOptions, Printer } from "./output.ts";
import { pagerCommand } from "./pager.ts";
import { isInteractive } from "./prompt.ts";

export type GlobalOptions = ConfigFlags & FormatFlags;

/** What every command needs: configuration, clients, output, and whether a person can be asked. */
export interface Context {
  config: ResolvedConfig;
  clients: Clients;
  printer: Printer;
  interactive: boolean;
}

/** Output as the flags, the environment (NO_COLOR, FORCE_COLOR, PAGER, TZ) and the terminal ask. */
export function printerOf(command: Command): Printer {
  const flags = command.optsWithGlobals<GlobalOptions>();
  const format = formatFrom(flags, Boolean(io().stdout.isTTY));
  const pager = flags.pager === false || !io().stdout.isTTY ? undefined : pagerCommand();
  return new Printer({
    ...outputOptions(flags, format),
    colors: colorsFor(colorEnabled(io().stdout, flags.color !== false)),
    ...(pager === undefined ? {} : { pager }),
  });
}

export function contextOf(command: Command): Context {
  const config = resolveConfig(command.optsWithGlobals<GlobalOptions>());
  return { config, clients: new Clients(config), printer: printerOf(command), interactive: isInteractive() };
}

/** The API client of a command that works only in test mode (sandbox vends, a temporary endpoint): a live key is a usage error. */
export function requireTestKey(ctx: Context, refusal: string): VendClient {
  const client = ctx.clients.api();
  if (usesLiveKey(ctx.config)) throw new UsageError(refusal);
  return client;
}

/** commander argument parsers: a bad value is a usage error (exit 2). */
export function integerOption(min: number) {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < min) throw new InvalidArgumentError(`expected a whole number ≥ ${min}`);
    return Number(value);
  };
}

export function collectPairs(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.indexOf("=");
  if (at < 1) throw new InvalidArgumentError(`expected key=value, got "${value}"`);
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}

export function oneOf<T extends string>(values: readonly T[]) {
  return (value: string): T => {
    const found = values.find((v) => v === value);
    if (!found) throw new InvalidArgumentError(`expected one of ${values.join(", ")}`);
    return found;
  };
}

export const newIdempotencyKey = (): string => randomUUID();

/** Appended to every command's help: an example people can copy. */
export function withExample(command: Command, ...examples: string[]): Command {
  return command.addHelpText(
    "after",
    `\nExample${examples.length > 1 ? "s" : ""}:\n${examples.map((e) => `  $ ${e}`).join("\n")}\n`,
  );
}

/** A command whose work is in its subcommands: the command with its help, the subcommands, and examples. */
export function commandGroup(command: Command, subcommands: Command[], ...examples: string[]): Command {
  for (const subcommand of subcommands) command.addCommand(subcommand);
  return withExample(command, ...examples);
}

/**
 * A command whose action needs the context: `run` gets it, then the command's arguments and flags as commander
 * passes them.
 */
export function actionCommand<A extends unknown[]>(
  command: Command,
  examples: string[],
  run: (ctx: Context, ...args: A) => Promise<void>,
): Command {
  return withExample(command, ...examples).action(async function (this: Command, ...args: A) {
    await run(contextOf(this), ...args);
  });
}

/**
 * A command that makes one API call and prints the answer's data: as a record of these columns, or as `show`
 * prints it.
 */
export function recordCommand<A extends unknown[], T>(
  command: Command,
  examples: string[],
  show: Column<T>[] | ((printer: Printer, data: T) => Promise<void>),
  request: (ctx: Context, ...args: A) => Promise<CallResult<{ data: T }>>,
): Command {
  return actionCommand(command, examples, async (ctx, ...args: A) => {
    const data = await unwrap(request(ctx, ...args));
    await (typeof show === "function" ? show(ctx.printer, data) : ctx.printer.record(data, show));
  });
}
