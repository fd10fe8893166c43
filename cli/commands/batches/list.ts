import { Command, Option } from "commander";
import { withExample } from "../../context.ts";
import { addDateRange } from "../../dates.ts";
import { type PagingFlags, pagedListCommand, queryPages, resumable } from "../../paging.ts";
import { batchColumns } from "../../views.ts";

interface ListFlags extends PagingFlags {
  from?: string;
  to?: string;
  completed?: boolean;
  open?: boolean;
}

const filterOptions = (): Command =>
  addDateRange(
    new Command("list")
      .description(
        "List bulk orders (vend bulk batches) newest first, each with its orders counted by status; " +
          "follows cursors with --all or --max and prints each page as it arrives",
      )
      .addOption(new Option("--completed", "only batches whose orders are all final").conflicts("open"))
      .addOption(new Option("--open", "only batches with orders still in progress").conflicts("completed")),
  );

export const batchesListCommand = (): Command =>
  pagedListCommand(
    withExample(
      filterOptions(),
      "vendctl batches list --open",
      "vendctl batches list --from 2026-11-01 --to 2026-11-30 --all --csv > batches.csv",
    ),
    resumable(batchColumns, "batches"),
    (ctx, flags: ListFlags) => {
      const client = ctx.clients.api();
      const completed = flags.completed ? true : flags.open ? false : undefined;
      const filters = { from: flags.from, to: flags.to, completed };
      return queryPages(filters, (query) => client.GET("/api/v1/vend/batches", { params: { query } }));
    },
  );
