import { Command } from "commander";
import { endpointIdArgument } from "../../arguments.ts";
import { recordCommand } from "../../context.ts";
import { endpointColumns } from "../../views.ts";

export const webhooksGetCommand = (): Command =>
  recordCommand(
    new Command("get")
      .description("Show one webhook endpoint: subscription, enabled or why not, secret rotation")
      .addArgument(endpointIdArgument()),
    ["vendctl webhooks get 9d0c7c1e-0d7e-4a3c-9f8e-5b8a1e2d3c4f --json"],
    [
      ...endpointColumns,
      { key: "disabled_message", hideEmpty: true },
      { key: "previous_secret_expires_at", hideEmpty: true },
      { key: "updated_at" },
    ],
    (ctx, id: string) => ctx.clients.api().GET("/api/v1/webhook-endpoints/{id}", { params: { path: { id } } }),
  );
