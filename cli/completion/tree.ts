import type { Command, Option } from "commander";

/** A command path, what can follow it, and how each option's value completes. */
export interface CompletionNode {
  path: string;
  /** Subcommand names; aliases are accepted when reading the line (`txn l` is `transactions list`). */
  children: string[];
  /** Each subcommand's summary, for shells that show one beside it (fish). */
  summaries: Record<string, string>;
  aliases: Record<string, string>;
  /** The first argument's allowed values (`completion bash|zsh|fish`). */
  args: string[];
  options: Option[];
}

/** The program's commands as completion nodes (the root's options left out) and its global options. */
export interface CompletionTree {
  nodes: CompletionNode[];
  globals: Option[];
}

/** Codes read from the live catalogue by `vendctl __complete`. */
export interface CatalogueLookup {
  what: "networks" | "products";
  /** The service to narrow to: the command's own, or the one named by the line's --service when `fromLine`. */
  service: string;
  fromLine: boolean;
}

/** Where an option's values come from: fixed choices, the catalogue, or nowhere (free text). */
export type ValueSource = { choices: readonly string[] } | { lookup: CatalogueLookup } | { free: true };

/** Commands shells do not offer (`__complete`). */
const visible = (command: Command) => command.commands.filter((c) => !c.name().startsWith("__"));

const longestBrief = 80;

/** A full stop at `i` ends a sentence when the next one starts with a capital ("e.g. 100" does not). */
const sentenceEnds = (text: string, i: number): boolean => text[i] === "." && /[A-Z]/.test(text[i + 2] ?? "");

/**
 * Help text cut to its first clause (up to a sentence's end, "; " or ": " outside parentheses), at most 80 characters:
 * what a shell shows beside a completion (fish).
 */
export function briefOf(text: string): string {
  let depth = 0;
  let end = text.length;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === "(") depth++;
    else if (char === ")") depth = Math.max(0, depth - 1);
    else if (depth === 0 && text[i + 1] === " " && (char === ";" || char === ":" || sentenceEnds(text, i))) {
      end = i;
      break;
    }
  }
  const clause = text.slice(0, end).trim();
  if (clause.length <= longestBrief) return clause;
  const cut = clause.slice(0, longestBrief - 1);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(" "), 1))}…`;
}

/** A command's summary, for a completion's description. */
export const summaryOf = (command: Command): string => briefOf(command.summary() || command.description());

function nodesOf(command: Command, path = "", globals = new Set<string>()): CompletionNode[] {
  const aliases: Record<string, string> = {};
  for (const child of visible(command)) for (const alias of child.aliases()) aliases[alias] = child.name();
  const self: CompletionNode = {
    path,
    children: visible(command).map((c) => c.name()),
    summaries: Object.fromEntries(visible(command).map((c) => [c.name(), summaryOf(c)])),
    aliases,
    args: command.registeredArguments[0]?.argChoices ?? [],
    options: command.options.filter((o) => !o.hidden && !globals.has(o.long ?? "")),
  };
  const inner = globals.size === 0 ? new Set(command.options.map((o) => o.long ?? "")) : globals;
  return [self, ...visible(command).flatMap((c) => nodesOf(c, path ? `${path} ${c.name()}` : c.name(), inner))];
}

function rootOf(command: Command): Command {
  let root = command;
  while (root.parent) root = root.parent;
  return root;
}

/** The tree of the program `command` belongs to. */
export function completionTree(command: Command): CompletionTree {
  const [top, ...rest] = nodesOf(rootOf(command));
  const globals = top?.options ?? [];
  return { nodes: top ? [{ ...top, options: [] }, ...rest] : rest, globals };
}

export const namesOf = (options: Option[]) => options.flatMap((o) => [o.long ?? o.short ?? ""]).filter(Boolean);
export const takesValue = (o: Option) => o.required || o.optional;

/** The service a command's --network, --disco, --biller and --product belong to, when its path says so. */
function serviceOf(path: string): string {
  const [noun, verb] = path.split(" ");
  if (noun === "vend" && verb) return verb;
  if (noun === "verify") return verb === "meter" ? "electricity" : "cable";
  return "";
}

/** The values of one option of `node`: its choices, or codes read from the live catalogue. */
export function valueSourceOf(node: CompletionNode, option: Option): ValueSource {
  if (option.argChoices) return { choices: option.argChoices };
  const service = serviceOf(node.path);
  if (option.long === "--disco") return { lookup: { what: "networks", service: "electricity", fromLine: false } };
  if (option.long === "--biller") return { lookup: { what: "networks", service: "cable", fromLine: false } };
  if (option.long === "--network") return { lookup: { what: "networks", service, fromLine: true } };
  if (option.long === "--product") return { lookup: { what: "products", service, fromLine: true } };
  return { free: true };
}
