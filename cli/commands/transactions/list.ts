import { Command, Option } from "commander";
import { type TransactionStatus, transactionStatuses } from "../../../generated/constants.ts";
import { addCatalogueFilters, type CatalogueFilters } from "../../catalogue-filters.ts";
import { unwrap } from "../../client.ts";
import { withExample } from "../../context.ts";
import { type PagingFlags, pagedListCommand, resumable } from "../../paging.ts";
import { transactionColumns } from "../../views.ts";

interface ListFlags extends PagingFlags, CatalogueFilters {
  status?: TransactionStatus;
  destination?: string;
  from?: string;
  to?: string;
  search?: string;
}

const filterOptions = addCatalogueFilters(
  new Command("list")
    .description("List transactions, newest first; follows cursors with --all or --max and prints each page as it arrives")
    .addOption(new Option("--status <status>", "only this status").choices(transactionStatuses))
    .option("--destination <value>", "only this phone, meter or smartcard (the real number)"),
  "only this network, disco or biller",
  "only this service",
)
  .option("--from <time>", "created at or after (RFC 3339)")
  .option("--to <time>", "created at or before (RFC 3339)")
  .option("--search <text>", "match reference, client reference or destination");

export const transactionsListCommand = pagedListCommand(
  withExample(
    filterOptions,
    "vendctl transactions list --status successful --all --limit 50 --jsonl",
    "vendctl transactions list --service electricity --max 500 --csv > electricity.csv",
  ),
  {
    columns: transactionColumns,
    ...resumable(),
  },
  (ctx, flags: ListFlags) => {
    const client = ctx.clients.api();
    const { status, destination, network, service, from, to, search } = flags;
    const filters = { status, destination, network, service, from, to, search };
    return (page) => unwrap(client.GET("/api/v1/transactions", { params: { query: { ...filters, ...page } } }));
  },
);
