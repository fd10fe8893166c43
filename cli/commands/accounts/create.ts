import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { actionCommand } from "../../context.ts";
import { warnShownOnce } from "../../shown-once.ts";
import { accountCreatedColumns } from "../../views.ts";

export const accountsCreateCommand = (): Command =>
  actionCommand(
    new Command("create")
      .description("Create an account with its wallets and one test and one live key (shown only now)")
      .requiredOption("--name <name>", "account name"),
    ["vendctl accounts create --name 'Acme Stores' --json"],
    async (ctx, flags: { name: string }) => {
      const created = await unwrap(ctx.clients.admin().POST("/admin/v1/accounts", { body: { name: flags.name } }));
      await ctx.printer.record(created, accountCreatedColumns);
      await warnShownOnce(
        "Save these keys now: they are shown only once. If one is lost, create another (vendctl keys create) and revoke it.",
      );
    },
  );
