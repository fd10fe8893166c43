import { Command, Option } from "commander";
import { type Mode, modes } from "../../../generated/constants.ts";
import { unwrap } from "../../client.ts";
import { contextOf, withExample } from "../../context.ts";
import { warnShownOnce } from "../../shown-once.ts";
import { apiKeyCreatedColumns } from "../../views.ts";

export const keysCreateCommand = withExample(
  new Command("create")
    .description("Create an API key for an account (the full key is shown only now)")
    .argument("<account-id>", "account id")
    .addOption(new Option("--mode <mode>", "key mode").choices(modes).makeOptionMandatory()),
  "vendctl keys create 0b7f3c2e-9a1d-4f5e-8c6b-2d4e6f8a0b1c --mode live",
).action(async (accountId: string, flags: { mode: Mode }, command: Command) => {
  const ctx = contextOf(command);
  const created = await unwrap(
    ctx.clients.admin().POST("/admin/v1/accounts/{account_id}/keys", {
      params: { path: { account_id: accountId } },
      body: { mode: flags.mode },
    }),
  );
  await ctx.printer.record(created, apiKeyCreatedColumns);
  await warnShownOnce(
    "Save this key now: it is shown only once. If it is lost, create another and revoke this one (vendctl keys revoke).",
  );
});
