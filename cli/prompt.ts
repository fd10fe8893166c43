import { UsageError } from "./errors.ts";
import { io } from "./io.ts";

/** @inquirer/prompts is loaded on the first prompt, not on every start (about a third of `vendctl --help`). */
const prompts = () => import("@inquirer/prompts");

/** Prompts are drawn on stderr, so stdout keeps only the command's output. */
const promptContext = () => ({ input: io().stdin, output: io().stderr });

/** True when a person can answer: stdin and stderr are terminals. */
export function isInteractive(): boolean {
  return Boolean(io().stdin.isTTY && io().stderr.isTTY);
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

export async function choose<T>(message: string, choices: Choice<T>[]): Promise<T> {
  if (choices.length === 0) throw new UsageError(`nothing to choose from for "${message}"`);
  return (await prompts()).select({ message, choices, pageSize: 12 }, promptContext());
}

export async function ask(
  message: string,
  options: { default?: string; validate?: (value: string) => true | string } = {},
): Promise<string> {
  const { input } = await prompts();
  return input({ message, default: options.default, required: true, validate: options.validate }, promptContext());
}

export async function askSecret(message: string): Promise<string> {
  return (await prompts()).password({ message, mask: "*" }, promptContext());
}

/** A yes-or-no question, no by default. */
export async function confirm(message: string): Promise<boolean> {
  return (await prompts()).confirm({ message, default: false }, promptContext());
}

export async function confirmOrCancel(message: string): Promise<void> {
  if (!(await confirm(message))) throw new CancelledError("cancelled; nothing was sent");
}

/** A line for the person at the prompts (a finding, a reason to ask again), on stderr with the prompts. */
export function tell(text: string): void {
  io().stderr.write(`${text}\n`);
}
