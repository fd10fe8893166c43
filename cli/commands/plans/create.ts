import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { actionCommand } from "../../context.ts";
import { ask } from "../../prompt.ts";
import { collectDiscount, type PriceDiscount } from "./discounts.ts";
import { planColumns } from "./list.ts";

interface CreateFlags {
  description?: string;
  discount?: PriceDiscount[];
}

/** A new plan, with no accounts on it yet; asks for a description on a terminal unless --description is given. */
export const plansCreateCommand = (): Command =>
  actionCommand(
    new Command("create")
      .description("Create a price plan (admin token, operator role); move accounts onto it with `plans assign`")
      .argument("<name>", "plan name: lower-case letters, digits, - and _")
      .option("--description <text>", "what the plan is for (asked on a terminal when not given)")
      .option(
        "--discount <scope:code=bps>",
        "a discount, repeatable: service:data=300, network:mtn=200, product:mtn-airtime=450",
        collectDiscount,
      ),
    ["vendctl plans create gold --description 'Big resellers' --discount service:data=300 --discount network:mtn=200"],
    async (ctx, name: string, flags: CreateFlags) => {
      const description = flags.description ?? (ctx.interactive ? await ask("Description", { default: "" }) : undefined);
      const body = { name, description, discounts: flags.discount };
      const plan = await unwrap(ctx.clients.admin().POST("/admin/v1/price-plans", { body }));
      await ctx.printer.record(plan, planColumns);
    },
  );
