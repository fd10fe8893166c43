import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { actionCommand } from "../../context.ts";
import { endpointColumns } from "../../views.ts";

export const webhooksListCommand = (): Command =>
  actionCommand(
    new Command("list").description("List the webhook endpoints of the API key's account and mode"),
    ["vendctl webhooks list --json"],
    async (ctx) => {
      await ctx.printer.listAll(endpointColumns, await unwrap(ctx.clients.api().GET("/api/v1/webhook-endpoints")));
    },
  );
