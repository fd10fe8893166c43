import { Command, Option } from "commander";
import { modes } from "../../../generated/constants.ts";
import type { components } from "../../../generated/openapi-fetch-client.ts";
import { withExample } from "../../context.ts";
import type { Column } from "../../output.ts";
import { type PagingFlags, pagedListCommand, queryPages } from "../../paging.ts";

type AdminTransaction = components["schemas"]["AdminTransaction"];

interface StuckFlags extends PagingFlags {
  account?: string;
  mode?: AdminTransaction["mode"];
}

const stuckColumns: Column<AdminTransaction>[] = [
  { key: "reference" },
  { key: "account_id", header: "ACCOUNT" },
  { key: "mode" },
  { key: "service" },
  { key: "network" },
  { key: "provider" },
  { key: "price_kobo", money: true },
  { key: "created_at", header: "CREATED" },
  { key: "stuck_raised_at", header: "RAISED" },
];

/** Stuck orders: still pending past STUCK_AFTER_MINUTES, newest first, for an operator to re-query or resolve. */
export const transactionsStuckCommand = (): Command =>
  pagedListCommand(
    withExample(
      new Command("stuck")
        .description("List stuck orders: pending longer than STUCK_AFTER_MINUTES, any account (admin token)")
        .option("--account <id>", "only this account's orders")
        .addOption(new Option("--mode <mode>", "only this mode").choices(modes)),
      "vendctl transactions stuck --all --jsonl",
    ),
    { columns: stuckColumns, more: "stuck orders" },
    (ctx, flags: StuckFlags) => {
      const client = ctx.clients.admin();
      const filters = { stuck: true, account_id: flags.account, mode: flags.mode };
      return queryPages(filters, (query) => client.GET("/admin/v1/transactions", { params: { query } }));
    },
  );
