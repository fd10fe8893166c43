import { Command, Option } from "commander";
import { type EventType, eventTypes } from "../../../generated/constants.ts";
import { unwrap } from "../../client.ts";
import { contextOf, withExample } from "../../context.ts";
import { addPagingOptions, type PagingFlags, printPages } from "../../paging.ts";
import { eventColumns } from "../../views.ts";

interface EventsListFlags extends PagingFlags {
  type?: EventType;
}

export const eventsListCommand = withExample(
  addPagingOptions(
    new Command("list")
      .description("Webhook events, newest first, with their delivery state per endpoint")
      .addOption(new Option("--type <type>", "only this event type").choices(eventTypes)),
  ),
  "vendctl events list --type transaction.failed --all --jsonl",
).action(async (flags: EventsListFlags, command: Command) => {
  const ctx = contextOf(command);
  const client = ctx.clients.api();
  await printPages(
    ctx,
    eventColumns,
    flags,
    (page) => unwrap(client.GET("/api/v1/events", { params: { query: { type: flags.type, ...page } } })),
    () => "More events: use --all or --max N",
  );
});
