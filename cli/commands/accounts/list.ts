import { Command } from "commander";
import { withExample } from "../../context.ts";
import { type PagingFlags, pagedListCommand, queryPages, resumable } from "../../paging.ts";
import { accountColumns } from "../../views.ts";

type AccountsListFlags = PagingFlags & { search?: string };

export const accountsListCommand = (): Command =>
  pagedListCommand(
    withExample(
      new Command("list")
        .description("List accounts, newest first")
        .option("--search <text>", "case-insensitive match on the name"),
      "vendctl accounts list --search acme --all",
    ),
    resumable(accountColumns, "accounts"),
    (ctx, flags: AccountsListFlags) => {
      const client = ctx.clients.admin();
      return queryPages({ search: flags.search }, (query) => client.GET("/admin/v1/accounts", { params: { query } }));
    },
  );
