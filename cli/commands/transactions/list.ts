import { Command, Option } from "commander";
import { type ServiceCode, serviceCodes, type TransactionStatus, transactionStatuses } from "../../../generated/constants.ts";
import { unwrap } from "../../client.ts";
import { contextOf, withExample } from "../../context.ts";
import { addPagingOptions, type PagingFlags, printPages } from "../../paging.ts";
import { transactionColumns } from "../../views.ts";

interface ListFlags extends PagingFlags {
  status?: TransactionStatus;
  destination?: string;
  network?: string;
  service?: ServiceCode;
  from?: string;
  to?: string;
  search?: string;
}

export const transactionsListCommand = withExample(
  addPagingOptions(
    new Command("list")
      .description("List transactions, newest first; follows cursors with --all or --max and prints each page as it arrives")
      .addOption(new Option("--status <status>", "only this status").choices(transactionStatuses))
      .option("--destination <value>", "only this phone, meter or smartcard (the real number)")
      .option("--network <code>", "only this network, disco or biller")
      .addOption(new Option("--service <service>", "only this service").choices(serviceCodes))
      .option("--from <time>", "created at or after (RFC 3339)")
      .option("--to <time>", "created at or before (RFC 3339)")
      .option("--search <text>", "match reference, client reference or destination"),
    "page size, 1 to 100 (default 25; 100 with --all)",
    "start at this cursor (printed when more rows exist)",
  ),
  "vendctl transactions list --status successful --all --limit 50 --jsonl",
  "vendctl transactions list --service electricity --max 500 --csv > electricity.csv",
).action(async (flags: ListFlags, command: Command) => {
  const ctx = contextOf(command);
  const client = ctx.clients.api();
  const { status, destination, network, service, from, to, search } = flags;
  const filters = { status, destination, network, service, from, to, search };
  await printPages(
    ctx,
    transactionColumns,
    flags,
    (page) => unwrap(client.GET("/api/v1/transactions", { params: { query: { ...filters, ...page } } })),
    (next) => `More rows: add --cursor ${next} (or use --all)`,
  );
});
