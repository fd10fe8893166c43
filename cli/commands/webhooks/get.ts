import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { contextOf, withExample } from "../../context.ts";
import { endpointColumns } from "../../views.ts";

export const webhooksGetCommand = (): Command =>
  withExample(
    new Command("get")
      .description("Show one webhook endpoint: subscription, enabled or why not, secret rotation")
      .argument("<id>", "endpoint id"),
    "vendctl webhooks get 9d0c7c1e-0d7e-4a3c-9f8e-5b8a1e2d3c4f --json",
  ).action(async (id: string, _flags: unknown, command: Command) => {
    const ctx = contextOf(command);
    const endpoint = await unwrap(ctx.clients.api().GET("/api/v1/webhook-endpoints/{id}", { params: { path: { id } } }));
    await ctx.printer.record(endpoint, [
      ...endpointColumns,
      { key: "disabled_message", hideEmpty: true },
      { key: "previous_secret_expires_at", hideEmpty: true },
      { key: "updated_at" },
    ]);
  });
