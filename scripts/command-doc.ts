/**
 * A commander program read as data, for its reference pages: every visible command with its usage, description,
 * arguments, options (their defaults and choices), subcommands and the text it adds after its help (examples).
 */
import type { EventEmitter } from "node:events";
import type { Argument, Command, Option } from "commander";

export interface OptionDoc {
  term: string;
  description: string;
  default: string | undefined;
  choices: readonly string[] | undefined;
  mandatory: boolean;
}

export interface ArgumentDoc {
  term: string;
  description: string;
  default: string | undefined;
  choices: readonly string[] | undefined;
}

export interface CommandDoc {
  /** The words that run it: `vendctl keys roll`. */
  path: string;
  usage: string;
  description: string;
  summary: string;
  aliases: string[];
  arguments: ArgumentDoc[];
  options: OptionDoc[];
  subcommands: CommandDoc[];
  /** Lines of `Example:` blocks, without their `$ `. */
  examples: string[];
  /** Whatever else the command prints after its help (file formats, outcomes), as printed. */
  details: string;
}

interface HelpContext {
  error: boolean;
  command: Command;
  write: (text: string) => void;
}

/** What the command's `addHelpText("after", …)` calls add, as a terminal shows it. */
function afterHelpOf(command: Command): string {
  let text = "";
  const context: HelpContext = { error: false, command, write: (part) => (text += part) };
  // commander keeps them as listeners of its "afterHelp" event (a Command is an EventEmitter; its types omit that).
  const listeners = (command as unknown as EventEmitter).listeners("afterHelp") as ((context: HelpContext) => void)[];
  for (const listener of listeners) listener(context);
  return text;
}

/** Splits after-help text into its examples (`Example:` blocks of `  $ …` lines) and the rest. */
export function splitAfterHelp(text: string): { examples: string[]; details: string } {
  const examples: string[] = [];
  const rest: string[] = [];
  let inExamples = false;
  for (const line of text.split("\n")) {
    if (/^Examples?:\s*$/.test(line)) {
      inExamples = true;
      continue;
    }
    const example = /^\s+\$ (.*)$/.exec(line);
    if (inExamples && example?.[1] !== undefined) {
      examples.push(example[1]);
      continue;
    }
    inExamples = false;
    rest.push(line);
  }
  return { examples, details: rest.join("\n").trim() };
}

function shown(value: unknown): string | undefined {
  if (value === undefined || value === false) return undefined;
  if (Array.isArray(value) && value.length === 0) return undefined;
  return typeof value === "string" ? `"${value}"` : JSON.stringify(value);
}

function optionDoc(option: Option, term: string): OptionDoc {
  return {
    term,
    description: option.description,
    // A negated flag (--no-color) defaults to true only in commander's bookkeeping.
    default: option.negate ? undefined : (option.defaultValueDescription ?? shown(option.defaultValue)),
    choices: option.argChoices,
    mandatory: option.mandatory,
  };
}

function argumentTerm(argument: Argument): string {
  const name = `${argument.name()}${argument.variadic ? "..." : ""}`;
  return argument.required ? `<${name}>` : `[${name}]`;
}

/** The command and its visible subcommands, depth first; `--help` itself is left out of each. */
export function describeCommand(command: Command, parentPath = ""): CommandDoc {
  const help = command.createHelp();
  const path = parentPath ? `${parentPath} ${command.name()}` : command.name();
  // The implicit `help` command commander lists is not one of the program's own.
  const subcommands = help.visibleCommands(command).filter((sub) => command.commands.includes(sub));
  return {
    path,
    usage: help.commandUsage(command),
    description: command.description(),
    summary: command.summary(),
    aliases: command.aliases(),
    arguments: command.registeredArguments.map((argument) => ({
      term: argumentTerm(argument),
      description: argument.description,
      default: shown(argument.defaultValue),
      choices: argument.argChoices,
    })),
    options: help
      .visibleOptions(command)
      .filter((option) => option.long !== "--help")
      .map((option) => optionDoc(option, help.optionTerm(option))),
    subcommands: subcommands.map((sub) => describeCommand(sub, path)),
    ...splitAfterHelp(afterHelpOf(command)),
  };
}

/** The command and every command under it, depth first. */
export function flattenCommands(doc: CommandDoc): CommandDoc[] {
  return [doc, ...doc.subcommands.flatMap(flattenCommands)];
}
