import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { confirmDestructive, yesOption } from "../../confirm-destructive.ts";
import { actionCommand } from "../../context.ts";
import { UsageError } from "../../errors.ts";
import { collectDiscount, collectScopeCode, describeDiscounts, type PriceDiscount } from "./discounts.ts";
import { planColumns } from "./list.ts";

interface UpdateFlags {
  description?: string;
  set?: PriceDiscount[];
  unset?: { scope: string; code: string }[];
  clear?: boolean;
  note?: string;
  yes?: boolean;
}

const sameCode = (a: { scope: string; code: string }, b: { scope: string; code: string }) =>
  a.scope === b.scope && a.code === b.code;

/**
 * Changes a plan's description or discounts: the plan's list is read, --clear / --unset / --set applied to it in
 * that order, and the whole list sent. A change of discounts asks to confirm on a terminal, --yes without one.
 */
export const plansUpdateCommand = (): Command =>
  actionCommand(
    new Command("update")
      .description(
        "Change a price plan's description or discounts (admin token, operator role); every account on it is told " +
          "(catalogue.updated). Asks to confirm a change of discounts on a terminal; --yes without one",
      )
      .argument("<name>", "plan name")
      .option("--description <text>", "new description")
      .option("--set <scope:code=bps>", "add or change a discount, repeatable (service:data=300)", collectDiscount)
      .option("--unset <scope:code>", "remove a discount, repeatable (product:mtn-airtime)", collectScopeCode)
      .option("--clear", "remove every discount first (the products' list discounts apply)")
      .option("--note <text>", "recorded in the audit entry")
      .addOption(yesOption("when discounts change")),
    [
      "vendctl plans update gold --set network:mtn=250 --unset product:mtn-airtime --yes",
      "vendctl plans update gold --description 'Top tier'",
    ],
    async (ctx, name: string, flags: UpdateFlags) => {
      const changesDiscounts = Boolean(flags.set?.length || flags.unset?.length || flags.clear);
      if (!changesDiscounts && flags.description === undefined) {
        throw new UsageError("nothing to change: give --description, --set, --unset or --clear");
      }
      const client = ctx.clients.admin();
      let discounts: PriceDiscount[] | undefined;
      if (changesDiscounts) {
        const current = (await unwrap(client.GET("/admin/v1/price-plans"))).find((p) => p.name === name);
        discounts = flags.clear ? [] : [...(current?.discounts ?? [])];
        discounts = discounts.filter((d) => !(flags.unset ?? []).some((u) => sameCode(u, d)));
        for (const set of flags.set ?? []) discounts = [...discounts.filter((d) => !sameCode(d, set)), set];
        await confirmDestructive(
          ctx,
          flags.yes,
          `Set ${name}'s discounts to: ${describeDiscounts(discounts)}`,
          "Every account on the plan pays the new prices from its next order",
        );
      }
      const body = { description: flags.description, discounts, note: flags.note };
      const plan = await unwrap(client.PATCH("/admin/v1/price-plans/{name}", { params: { path: { name } }, body }));
      await ctx.printer.record(plan, planColumns);
    },
  );
