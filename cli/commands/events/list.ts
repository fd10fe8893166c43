import { Command, Option } from "commander";
import { type EventType, eventTypes } from "../../../generated/constants.ts";
import { withExample } from "../../context.ts";
import { type PagingFlags, pagedListCommand, queryPages, resumable } from "../../paging.ts";
import { eventColumns } from "../../views.ts";

type EventsListFlags = PagingFlags & { type?: EventType };

export const eventsListCommand = (): Command =>
  pagedListCommand(
    withExample(
      new Command("list")
        .description("Webhook events, newest first, with their delivery state per endpoint")
        .addOption(new Option("--type <type>", "only this event type").choices(eventTypes)),
      "vendctl events list --type transaction.failed --all --jsonl",
    ),
    resumable(eventColumns, "events"),
    (ctx, flags: EventsListFlags) => {
      const client = ctx.clients.api();
      return queryPages({ type: flags.type }, (query) => client.GET("/api/v1/events", { params: { query } }));
    },
  );
