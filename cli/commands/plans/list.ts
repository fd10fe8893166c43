import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { actionCommand } from "../../context.ts";
import type { Column } from "../../output.ts";
import { describeDiscounts, type PricePlan } from "./discounts.ts";

export const planColumns: Column<PricePlan>[] = [
  { key: "name" },
  { key: "description" },
  { key: "discounts", get: (plan) => describeDiscounts(plan.discounts), only: "table" },
  { key: "discounts", get: (plan) => JSON.stringify(plan.discounts), only: "csv" },
  { key: "account_count", header: "ACCOUNTS" },
  { key: "updated_at", header: "UPDATED" },
];

/** Every price plan (admin token, viewer role). */
export const plansListCommand = (): Command =>
  actionCommand(
    new Command("list").description("Every price plan with its discounts and how many accounts are on it (admin token)"),
    ["vendctl plans list", "vendctl plans list --json"],
    async (ctx) => {
      const plans = await unwrap(ctx.clients.admin().GET("/admin/v1/price-plans"));
      await ctx.printer.listAll(planColumns, plans);
    },
  );
