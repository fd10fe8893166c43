import { Command } from "commander";
import { withExample } from "../../context.ts";
import { type PagingFlags, pagedListCommand, queryPages, resumable } from "../../paging.ts";
import { callbackColumns } from "../../views.ts";

type CallbacksListFlags = PagingFlags & { reference?: string; provider?: string };

export const callbacksListCommand = (): Command =>
  pagedListCommand(
    withExample(
      new Command("list")
        .description("Stored provider callbacks, newest first (admin token)")
        .option("--reference <ref>", "only callbacks for this transaction")
        .option("--provider <name>", "only callbacks from this provider"),
      "vendctl callbacks list --reference txn_4kq9Zr2mXc81LwPb7sTfYhQe",
    ),
    resumable(callbackColumns, "callbacks"),
    (ctx, flags: CallbacksListFlags) => {
      const client = ctx.clients.admin();
      const filters = { reference: flags.reference, provider: flags.provider };
      return queryPages(filters, (query) => client.GET("/admin/v1/callbacks", { params: { query } }));
    },
  );
