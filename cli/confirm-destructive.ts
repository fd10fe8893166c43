import { Option } from "commander";
import type { Context } from "./context.ts";
import { UsageError } from "./errors.ts";
import { confirmOrCancel } from "./prompt.ts";

/**
 * `-y, --yes` of every command that moves money, changes prices or takes something away; `when` narrows it
 * ("with --grace 0") when only some uses of the command do.
 */
export const yesOption = (when = ""): Option =>
  new Option("-y, --yes", `do not ask for confirmation (required without a terminal${when ? ` ${when}` : ""})`);

/**
 * Without a terminal nobody can agree to `<action>`: unless --yes was given, a usage error (exit 2) that names
 * --yes. Called before any request, it lets a command fail before it has sent anything.
 */
export function requireConsent(ctx: Context, yes: boolean | undefined, action: string): void {
  if (yes || ctx.interactive) return;
  throw new UsageError(`${action}: confirm with --yes (there is no terminal to ask on); nothing was sent`);
}

/**
 * Before something that moves money, changes prices or takes something away: --yes goes ahead; a terminal asks
 * `<action>? <consequence>.` (no: exit 130, nothing sent); without a terminal nobody has agreed, so it is a
 * usage error (exit 2) that names --yes, before any request.
 */
export async function confirmDestructive(
  ctx: Context,
  yes: boolean | undefined,
  action: string,
  consequence: string,
): Promise<void> {
  if (yes) return;
  requireConsent(ctx, yes, action);
  await confirmOrCancel(`${action}? ${consequence}.`);
}

/** Whether `confirmDestructive` will ask a person: worth a read to make its question precise. */
export const willAsk = (ctx: Context, yes: boolean | undefined): boolean => ctx.interactive && !yes;
