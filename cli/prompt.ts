import { confirm, input, password, select } from "@inquirer/prompts";
import { UsageError } from "./errors.ts";

/** Prompts are drawn on stderr, so stdout keeps only the command's output. */
const promptContext = { output: process.stderr };

/** True when a person can answer: stdin and stderr are terminals. */
export function isInteractive(): boolean {
  return Boolean(process.stdin.isTTY && process.stderr.isTTY);
}

/** The user declined at a prompt or pressed Ctrl-C. */
export class CancelledError extends Error {}

/** Fails with one usage error naming every missing flag when nobody can be asked. */
export function requireFlags(missing: Record<string, unknown>, canAsk: boolean): void {
  const names = Object.entries(missing)
    .filter(([, value]) => value === undefined || value === "")
    .map(([flag]) => flag);
  if (names.length === 0 || canAsk) return;
  throw new UsageError(`missing ${names.join(", ")} (no terminal to ask on, or --yes given: pass them as flags)`);
}

export interface Choice<T> {
  name: string;
  value: T;
  description?: string;
}

export function choose<T>(message: string, choices: Choice<T>[]): Promise<T> {
  if (choices.length === 0) throw new UsageError(`nothing to choose from for "${message}"`);
  return select({ message, choices, pageSize: 12 }, promptContext);
}

export function ask(message: string, options: { default?: string; validate?: (value: string) => true | string } = {}) {
  return input({ message, default: options.default, required: true, validate: options.validate }, promptContext);
}

export function askSecret(message: string) {
  return password({ message, mask: "*" }, promptContext);
}

export async function confirmOrCancel(message: string): Promise<void> {
  if (!(await confirm({ message, default: false }, promptContext))) throw new CancelledError("cancelled; nothing was sent");
}
