import { Command } from "commander";
import { recordCommand } from "../../context.ts";
import { shownOnce } from "../../shown-once.ts";
import { accountCreatedColumns } from "../../views.ts";

export const accountsCreateCommand = (): Command =>
  recordCommand(
    new Command("create")
      .description("Create an account with its wallets and one test and one live key (shown only now)")
      .requiredOption("--name <name>", "account name"),
    ["vendctl accounts create --name 'Acme Stores' --json"],
    shownOnce(
      accountCreatedColumns,
      "Save these keys now: they are shown only once. If one is lost, create another (vendctl keys create) and revoke it.",
    ),
    (ctx, flags: { name: string }) => ctx.clients.admin().POST("/admin/v1/accounts", { body: { name: flags.name } }),
  );
