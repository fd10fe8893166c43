import { Command, Option } from "commander";
import { unwrap } from "../../client.ts";
import { contextOf, integerOption, withExample } from "../../context.ts";
import { pageSize, streamPages } from "../../paging.ts";
import { eventColumns } from "../../views.ts";

interface EventsListFlags {
  type?: "transaction.successful" | "transaction.failed";
  limit?: number;
  all?: boolean;
  max?: number;
}

export const eventsListCommand = withExample(
  new Command("list")
    .description("Webhook events, newest first, with their delivery state per endpoint")
    .addOption(new Option("--type <type>", "only this event type").choices(["transaction.successful", "transaction.failed"]))
    .option("--limit <n>", "page size, 1 to 100", integerOption(1))
    .option("--all", "follow cursors to the last page")
    .option("--max <n>", "follow cursors until this many rows", integerOption(1)),
  "vendctl events list --type transaction.failed --all --jsonl",
).action(async (flags: EventsListFlags, command: Command) => {
  const ctx = contextOf(command);
  const client = ctx.clients.api();
  const query = { type: flags.type, limit: pageSize(flags.limit, flags) };
  const writer = ctx.printer.list(eventColumns);
  const next = await streamPages(
    (cursor) => unwrap(client.GET("/api/v1/events", { params: { query: { ...query, cursor } } })),
    writer,
    flags,
  );
  await writer.end();
  if (next) await ctx.printer.note("More events: use --all or --max N");
});
