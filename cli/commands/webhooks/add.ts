import { Command } from "commander";
import type { EventType } from "../../../generated/constants.ts";
import { recordCommand } from "../../context.ts";
import { shownOnce } from "../../shown-once.ts";
import { endpointCreatedColumns } from "../../views.ts";
import { parseEventTypes } from "./options.ts";

export const webhooksAddCommand = (): Command =>
  recordCommand(
    new Command("add")
      .description("Register a webhook endpoint; its signing secret (whsec_…) is shown only now")
      .argument("<url>", "where events are POSTed")
      .option("--description <text>", "what the endpoint is for")
      .option("--events <types>", "only these event types, comma-separated (default: all)", parseEventTypes),
    [
      "vendctl webhooks add https://example.com/hooks/vend --description 'Order service'",
      "vendctl webhooks add https://example.com/hooks/failures --events transaction.failed",
    ],
    shownOnce(
      endpointCreatedColumns,
      "Save this signing secret now: it is shown only once. If it is lost, add the endpoint again and remove this one.",
    ),
    (ctx, url: string, flags: { description?: string; events?: EventType[] | "all" }) => {
      const body = {
        url,
        ...(flags.description ? { description: flags.description } : {}),
        ...(flags.events && flags.events !== "all" ? { event_types: flags.events } : {}),
      };
      return ctx.clients.api().POST("/api/v1/webhook-endpoints", { body });
    },
  );
