import type { Command } from "commander";
import { UsageError } from "./errors.ts";

const fieldList = /^[a-z_][a-z0-9_]*(,[a-z_][a-z0-9_]*)*$/;

function commandNames(command: Command, names = new Set<string>()): Set<string> {
  for (const sub of command.commands) {
    names.add(sub.name());
    for (const alias of sub.aliases()) names.add(alias);
    commandNames(sub, names);
  }
  return names;
}

/**
 * `--json=a,b`, and `--json a,b` when `a,b` is a field list and not a command name, become
 * `--json --json-fields a,b`: commander keeps `--json` a plain flag, so `vendctl --json transactions list` works.
 */
export function expandJsonFields(argv: string[], program: Command): string[] {
  const commands = commandNames(program);
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === "--") {
      out.push(...argv.slice(i));
      break;
    }
    if (arg.startsWith("--json=")) {
      out.push("--json", "--json-fields", arg.slice("--json=".length));
      continue;
    }
    const next = argv[i + 1];
    if (arg === "--json" && next !== undefined && fieldList.test(next) && !commands.has(next)) {
      out.push("--json", "--json-fields", next);
      i++;
      continue;
    }
    out.push(arg);
  }
  return out;
}

/** `a,b` → ["a", "b"], or a usage error. */
export function parseFields(text: string): string[] {
  if (!fieldList.test(text))
    throw new UsageError(`--json takes field names separated by commas, such as reference,status; got "${text}"`);
  return text.split(",");
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Keeps only `fields` of an object, or of each object of an array; a field no object has is a usage error. */
export function selectFields(value: unknown, fields: string[]): unknown {
  const records = Array.isArray(value) ? value.filter(isRecord) : isRecord(value) ? [value] : [];
  if (records.length > 0) {
    const available = new Set(records.flatMap((r) => Object.keys(r)));
    const unknown = fields.filter((f) => !available.has(f));
    if (unknown.length > 0) {
      throw new UsageError(
        `unknown field${unknown.length > 1 ? "s" : ""} ${unknown.join(", ")} for --json; available: ${[...available].join(", ")}`,
      );
    }
  }
  const pick = (item: unknown) => (isRecord(item) ? Object.fromEntries(fields.map((f) => [f, item[f] ?? null])) : item);
  return Array.isArray(value) ? value.map(pick) : pick(value);
}

/** Runs a jq expression like gh: strings raw, anything else compact JSON, one result per line. */
export async function runJq(value: unknown, expression: string): Promise<string> {
  // jq-wasm is 1.3 MB of JavaScript: loaded only when --jq is used, not on every start.
  const jq = await import("jq-wasm");
  let text: string;
  try {
    text = await jq.raw(JSON.stringify(value), expression, ["-r", "-c"]);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new UsageError(`--jq: ${message.trim()}`);
  }
  return text === "" ? "" : `${text.replace(/\n$/, "")}\n`;
}
