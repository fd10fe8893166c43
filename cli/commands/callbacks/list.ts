import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { contextOf, withExample } from "../../context.ts";
import { addPagingOptions, type PagingFlags, printPages } from "../../paging.ts";
import { callbackColumns } from "../../views.ts";

interface CallbacksListFlags extends PagingFlags {
  reference?: string;
  provider?: string;
}

export const callbacksListCommand = withExample(
  addPagingOptions(
    new Command("list")
      .description("Stored provider callbacks, newest first (admin token)")
      .option("--reference <ref>", "only callbacks for this transaction")
      .option("--provider <name>", "only callbacks from this provider"),
  ),
  "vendctl callbacks list --reference txn_4kq9Zr2mXc81LwPb7sTfYhQe",
).action(async (flags: CallbacksListFlags, command: Command) => {
  const ctx = contextOf(command);
  const client = ctx.clients.admin();
  const filters = { reference: flags.reference, provider: flags.provider };
  await printPages(
    ctx,
    callbackColumns,
    flags,
    (page) => unwrap(client.GET("/admin/v1/callbacks", { params: { query: { ...filters, ...page } } })),
    () => "More callbacks: use --all or --max N",
  );
});
