import { Command, Option } from "commander";
import { unwrap } from "../../client.ts";
import { contextOf, integerOption, withExample } from "../../context.ts";
import { pageSize, streamPages } from "../../paging.ts";
import { transactionColumns } from "../../views.ts";

const statuses = ["created", "queued", "processing", "pending", "successful", "failed", "reversed", "refunded"] as const;
const services = ["airtime", "data", "cable", "electricity"] as const;

interface ListFlags {
  status?: (typeof statuses)[number];
  destination?: string;
  network?: string;
  service?: (typeof services)[number];
  from?: string;
  to?: string;
  search?: string;
  limit?: number;
  cursor?: string;
  all?: boolean;
  max?: number;
}

export const transactionsListCommand = withExample(
  new Command("list")
    .description("List transactions, newest first; follows cursors with --all or --max and prints each page as it arrives")
    .addOption(new Option("--status <status>", "only this status").choices(statuses))
    .option("--destination <value>", "only this phone, meter or smartcard (the real number)")
    .option("--network <code>", "only this network, disco or biller")
    .addOption(new Option("--service <service>", "only this service").choices(services))
    .option("--from <time>", "created at or after (RFC 3339)")
    .option("--to <time>", "created at or before (RFC 3339)")
    .option("--search <text>", "match reference, client reference or destination")
    .option("--limit <n>", "page size, 1 to 100 (default 25; 100 with --all)", integerOption(1))
    .option("--cursor <cursor>", "start at this cursor (printed when more rows exist)")
    .option("--all", "follow cursors to the last page")
    .option("--max <n>", "follow cursors until this many rows", integerOption(1)),
  "vendctl transactions list --status successful --all --limit 50 --jsonl",
  "vendctl transactions list --service electricity --max 500 --csv > electricity.csv",
).action(async (flags: ListFlags, command: Command) => {
  const ctx = contextOf(command);
  const client = ctx.clients.api();
  const limit = pageSize(flags.limit, flags);
  const filters = {
    status: flags.status,
    destination: flags.destination,
    network: flags.network,
    service: flags.service,
    from: flags.from,
    to: flags.to,
    search: flags.search,
    limit,
  };
  const writer = ctx.printer.list(transactionColumns);
  const next = await streamPages(
    (cursor) => unwrap(client.GET("/api/v1/transactions", { params: { query: { ...filters, cursor } } })),
    writer,
    flags,
  );
  await writer.end();
  if (next) await ctx.printer.note(`More rows: add --cursor ${next} (or use --all)`);
});
