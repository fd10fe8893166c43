import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { contextOf, withExample } from "../../context.ts";
import { addPagingOptions, type PagingFlags, printPages } from "../../paging.ts";
import { accountColumns } from "../../views.ts";

interface AccountsListFlags extends PagingFlags {
  search?: string;
}

export const accountsListCommand = withExample(
  addPagingOptions(
    new Command("list")
      .description("List accounts, newest first")
      .option("--search <text>", "case-insensitive match on the name"),
  ),
  "vendctl accounts list --search acme --all",
).action(async (flags: AccountsListFlags, command: Command) => {
  const ctx = contextOf(command);
  const client = ctx.clients.admin();
  await printPages(
    ctx,
    accountColumns,
    flags,
    (page) => unwrap(client.GET("/admin/v1/accounts", { params: { query: { search: flags.search, ...page } } })),
    () => "More accounts: use --all or --max N",
  );
});
