import { Command, Option } from "commander";
import { modes } from "../../../generated/constants.ts";
import type { components } from "../../../generated/openapi-fetch-client.ts";
import { withExample } from "../../context.ts";
import type { Column } from "../../output.ts";
import { type PagingFlags, pagedListCommand, queryPages, resumable } from "../../paging.ts";
import { addTransactionFilters, type TransactionFilters, transactionFilterQuery } from "../../transaction-filters.ts";
import { transactionColumns } from "../../views.ts";
import { adminGetCommand } from "../transactions/inspect.ts";

type AdminTransaction = components["schemas"]["AdminTransaction"];

interface AdminListFlags extends PagingFlags, TransactionFilters {
  account?: string;
  mode?: AdminTransaction["mode"];
  stuck?: boolean;
}

/** The client's transaction columns with the account and mode after the status, and the provider last. */
const adminListColumns: Column<AdminTransaction>[] = [
  ...transactionColumns.flatMap((column): Column<AdminTransaction>[] => {
    if (column.key === "mode") return [];
    if (column.key !== "status") return [column];
    return [column, { key: "account_id", header: "ACCOUNT" }, { key: "mode" }];
  }),
  { key: "provider" },
];

const adminListOptions = (): Command =>
  addTransactionFilters(
    new Command("list")
      .description("Search transactions across accounts, newest first (admin token)")
      .option("--account <id>", "only this account's transactions")
      .addOption(new Option("--mode <mode>", "only this mode").choices(modes)),
    "reference, client reference (prefix) or phone, meter or smartcard digits",
  ).option("--stuck", "only stuck orders: pending past STUCK_AFTER_MINUTES");

const adminTransactionsListCommand = (): Command =>
  pagedListCommand(
    withExample(
      adminListOptions(),
      "vendctl admin transactions list --search 08031234567 --from 2026-11-22",
      "vendctl admin transactions list --account 0b7f3c2e-9a1d-4f5e-8c6b-2d4e6f8a0b1c --status failed --all --jsonl",
    ),
    resumable(adminListColumns, "transactions"),
    (ctx, flags: AdminListFlags) => {
      const client = ctx.clients.admin();
      const filters = {
        account_id: flags.account,
        mode: flags.mode,
        ...transactionFilterQuery(flags),
        ...(flags.stuck ? { stuck: true } : {}),
      };
      return queryPages(filters, (query) => client.GET("/admin/v1/transactions", { params: { query } }));
    },
  );

export const adminTransactionsCommand = (): Command =>
  withExample(
    new Command("transactions")
      .alias("txn")
      .description("Transactions of every account (admin token)")
      .addCommand(adminTransactionsListCommand())
      .addCommand(adminGetCommand("get", "vendctl admin transactions get txn_4kq9Zr2mXc81LwPb7sTfYhQe")),
    "vendctl admin transactions list --status pending --all",
  );
