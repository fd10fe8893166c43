import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { confirmDestructive, yesOption } from "../../confirm-destructive.ts";
import { actionCommand } from "../../context.ts";
import type { Column } from "../../output.ts";

interface AssignFlags {
  note?: string;
  yes?: boolean;
}

const assignedColumns: Column<{ id: string; name: string; price_plan: string }>[] = [
  { key: "id" },
  { key: "name" },
  { key: "price_plan", header: "PLAN" },
];

/** Moves an account to a plan; asks to confirm on a terminal, --yes without one. */
export const plansAssignCommand = (): Command =>
  actionCommand(
    new Command("assign")
      .description(
        "Move an account to a price plan (admin token, operator role): its next orders, test and live, are priced by " +
          "it. Asks to confirm on a terminal; --yes without one",
      )
      .argument("<account-id>", "the account's id (vendctl accounts list --search NAME)")
      .argument("<plan>", "plan name")
      .option("--note <text>", "recorded in the audit entry")
      .addOption(yesOption()),
    ["vendctl plans assign 4f0c…-account-id gold --note 'October volume' --yes"],
    async (ctx, accountId: string, plan: string, flags: AssignFlags) => {
      await confirmDestructive(
        ctx,
        flags.yes,
        `Move account ${accountId} to price plan ${plan}`,
        "Its next orders pay that plan's prices",
      );
      const body = { plan, note: flags.note };
      const account = await unwrap(
        ctx.clients
          .admin()
          .PUT("/admin/v1/accounts/{account_id}/price-plan", { params: { path: { account_id: accountId } }, body }),
      );
      await ctx.printer.record(account, assignedColumns);
    },
  );
