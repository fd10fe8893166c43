import { Command } from "commander";
import { withExample } from "../../context.ts";
import { type PagingFlags, pagedListCommand, queryPages, resumable } from "../../paging.ts";
import { addTransactionFilters, type TransactionFilters, transactionFilterQuery } from "../../transaction-filters.ts";
import { transactionColumns } from "../../views.ts";

interface ListFlags extends PagingFlags, TransactionFilters {
  clientReference?: string;
  batchId?: string;
}

const filterOptions = (): Command =>
  addTransactionFilters(
    new Command("list").description(
      "List transactions, newest first; follows cursors with --all or --max and prints each page as it arrives",
    ),
    "match reference, client reference or destination",
  )
    .option("--client-reference <ref>", "only this client_reference, exactly (find an order whose answer was lost)")
    .option("--batch-id <id>", "only the orders of this batch (vend bulk --json names its batches)");

export const transactionsListCommand = (): Command =>
  pagedListCommand(
    withExample(
      filterOptions(),
      "vendctl transactions list --status successful --all --limit 50 --jsonl",
      "vendctl transactions list --service electricity --max 500 --csv > electricity.csv",
      "vendctl transactions list --from 2026-11-01 --to 2026-11-30 --all --jsonl",
      "vendctl transactions list --client-reference order-1001",
      "vendctl transactions list --batch-id 5b0c7c1e-0d7e-4a3c-9f8e-5b8a1e2d3c4f --all --csv",
    ),
    resumable(transactionColumns),
    (ctx, flags: ListFlags) => {
      const client = ctx.clients.api();
      const filters = { ...transactionFilterQuery(flags), client_reference: flags.clientReference, batch_id: flags.batchId };
      return queryPages(filters, (query) => client.GET("/api/v1/transactions", { params: { query } }));
    },
  );
