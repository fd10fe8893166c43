import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { contextOf, integerOption, withExample } from "../../context.ts";
import { pageSize, streamPages } from "../../paging.ts";
import { callbackColumns } from "../../views.ts";

interface CallbacksListFlags {
  reference?: string;
  provider?: string;
  limit?: number;
  all?: boolean;
  max?: number;
}

export const callbacksListCommand = withExample(
  new Command("list")
    .description("Stored provider callbacks, newest first (admin token)")
    .option("--reference <ref>", "only callbacks for this transaction")
    .option("--provider <name>", "only callbacks from this provider")
    .option("--limit <n>", "page size, 1 to 100", integerOption(1))
    .option("--all", "follow cursors to the last page")
    .option("--max <n>", "follow cursors until this many rows", integerOption(1)),
  "vendctl callbacks list --reference txn_4kq9Zr2mXc81LwPb7sTfYhQe",
).action(async (flags: CallbacksListFlags, command: Command) => {
  const ctx = contextOf(command);
  const client = ctx.clients.admin();
  const query = { reference: flags.reference, provider: flags.provider, limit: pageSize(flags.limit, flags) };
  const writer = ctx.printer.list(callbackColumns);
  const next = await streamPages(
    (cursor) => unwrap(client.GET("/admin/v1/callbacks", { params: { query: { ...query, cursor } } })),
    writer,
    flags,
  );
  await writer.end();
  if (next) await ctx.printer.note("More callbacks: use --all or --max N");
});
