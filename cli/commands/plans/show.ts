import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { actionCommand } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { planColumns } from "./list.ts";

/** One plan: its record (with its discounts); `--json` prints the plan as the API answers it. */
export const plansShowCommand = (): Command =>
  actionCommand(
    new Command("show").description("One price plan and its discounts (admin token)").argument("<name>", "plan name"),
    ["vendctl plans show gold", "vendctl plans show standard --json"],
    async (ctx, name: string) => {
      const plans = await unwrap(ctx.clients.admin().GET("/admin/v1/price-plans"));
      const plan = plans.find((p) => p.name === name);
      if (!plan) throw new ApiError("NOT_FOUND", `Price plan ${name} not found (vendctl plans list)`, 404);
      await ctx.printer.record(plan, planColumns);
    },
  );
