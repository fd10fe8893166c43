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
  if (!ctx.interactive) throw new UsageError(`${action}: confirm with --yes (there is no terminal to ask on); nothing was sent`);
  await confirmOrCancel(`${action}? ${consequence}.`);
}

/** Whether `confirmDestructive` will ask a person: worth a read to make its question precise. */
export const willAsk = (ctx: Context, yes: boolean | undefined): boolean => ctx.interactive && !yes;
