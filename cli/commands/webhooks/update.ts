import { Command, Option } from "commander";
import type { components } from "../../../generated/openapi-fetch-client.ts";
import { endpointIdArgument } from "../../arguments.ts";
import { unwrap } from "../../client.ts";
import { confirmDestructive, yesOption } from "../../confirm-destructive.ts";
import { actionCommand } from "../../context.ts";
import { UsageError } from "../../errors.ts";
import { endpointColumns } from "../../views.ts";
import { parseEventTypes } from "./options.ts";

type UpdateRequest = components["schemas"]["WebhookEndpointUpdateRequest"];

interface UpdateFlags {
  url?: string;
  description?: string;
  enable?: boolean;
  events?: NonNullable<UpdateRequest["event_types"]> | "all";
  yes?: boolean;
}

export const webhooksUpdateCommand = (): Command =>
  actionCommand(
    new Command("update")
      .description(
        "Change a webhook endpoint: URL, description, enabled, subscribed event types. Enabling clears why it was disabled; " +
          "what it missed can be sent again with `webhooks resend-failed`. --disable asks to confirm on a terminal; --yes without one",
      )
      .addArgument(endpointIdArgument())
      .option("--url <url>", "a new URL (checked like on `webhooks add`)")
      .option("--description <text>", "a new description ('' clears it)")
      .addOption(new Option("--enable", "enable the endpoint (again)").conflicts("disable"))
      .addOption(new Option("--disable", "disable the endpoint: it gets no events until enabled").conflicts("enable"))
      .option("--events <types>", "subscribe to these event types only, comma-separated, or `all`", parseEventTypes)
      .addOption(yesOption("with --disable")),
    [
      "vendctl webhooks update 9d0c7c1e-0d7e-4a3c-9f8e-5b8a1e2d3c4f --enable",
      "vendctl webhooks update 9d0c7c1e-0d7e-4a3c-9f8e-5b8a1e2d3c4f --events transaction.failed,batch.completed",
    ],
    async (ctx, id: string, flags: UpdateFlags & { disable?: boolean }) => {
      const body: UpdateRequest = {
        ...(flags.url === undefined ? {} : { url: flags.url }),
        ...(flags.description === undefined ? {} : { description: flags.description === "" ? null : flags.description }),
        ...(flags.enable ? { enabled: true } : flags.disable ? { enabled: false } : {}),
        ...(flags.events === undefined ? {} : { event_types: flags.events === "all" ? null : flags.events }),
      };
      if (Object.keys(body).length === 0)
        throw new UsageError("nothing to change: give --url, --description, --enable, --disable or --events");
      if (flags.disable) {
        await confirmDestructive(ctx, flags.yes, `Disable webhook endpoint ${id}`, "It gets no events until it is enabled again");
      }
      const updated = await unwrap(ctx.clients.api().PATCH("/api/v1/webhook-endpoints/{id}", { params: { path: { id } }, body }));
      await ctx.printer.record(updated, [...endpointColumns, { key: "disabled_message", hideEmpty: true }]);
    },
  );
