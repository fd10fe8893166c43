import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { contextOf, integerOption, withExample } from "../../context.ts";
import { pageSize, streamPages } from "../../paging.ts";
import { accountColumns } from "../../views.ts";

interface AccountsListFlags {
  search?: string;
  limit?: number;
  all?: boolean;
  max?: number;
}

export const accountsListCommand = withExample(
  new Command("list")
    .description("List accounts, newest first")
    .option("--search <text>", "case-insensitive match on the name")
    .option("--limit <n>", "page size, 1 to 100", integerOption(1))
    .option("--all", "follow cursors to the last page")
    .option("--max <n>", "follow cursors until this many rows", integerOption(1)),
  "vendctl accounts list --search acme --all",
).action(async (flags: AccountsListFlags, command: Command) => {
  const ctx = contextOf(command);
  const client = ctx.clients.admin();
  const query = { search: flags.search, limit: pageSize(flags.limit, flags) };
  const writer = ctx.printer.list(accountColumns);
  const next = await streamPages(
    (cursor) => unwrap(client.GET("/admin/v1/accounts", { params: { query: { ...query, cursor } } })),
    writer,
    flags,
  );
  await writer.end();
  if (next) await ctx.printer.note("More accounts: use --all or --max N");
});
