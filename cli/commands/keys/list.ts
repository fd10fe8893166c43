import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { contextOf, withExample } from "../../context.ts";
import { apiKeyColumns } from "../../views.ts";

export const keysListCommand = withExample(
  new Command("list").description("List an account's API keys (display prefixes only)").argument("<account-id>", "account id"),
  "vendctl keys list 0b7f3c2e-9a1d-4f5e-8c6b-2d4e6f8a0b1c",
).action(async (accountId: string, _flags: unknown, command: Command) => {
  const ctx = contextOf(command);
  const params = { path: { account_id: accountId } };
  await ctx.printer.listAll(
    apiKeyColumns,
    await unwrap(ctx.clients.admin().GET("/admin/v1/accounts/{account_id}/keys", { params })),
  );
});
