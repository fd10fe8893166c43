import type { Context } from "./context.ts";
import { UsageError } from "./errors.ts";
import { confirmOrCancel } from "./prompt.ts";

/**
 * Before something that cannot be undone: --yes goes ahead; a terminal asks `<action>? <consequence>.` (no:
 * exit 130, nothing sent); without a terminal nobody has agreed, so it is a usage error that names --yes.
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
