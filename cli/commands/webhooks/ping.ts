import { Command } from "commander";
import { endpointIdArgument } from "../../arguments.ts";
import { unwrap } from "../../client.ts";
import { actionCommand } from "../../context.ts";
import { pingColumns } from "../../views.ts";

export const webhooksPingCommand = (): Command =>
  actionCommand(
    new Command("ping")
      .description(
        "Send a signed test event (webhook_endpoint.ping) to one endpoint now, enabled or not, and show how it answered. " +
          "Exits 1 when it did not answer 2xx",
      )
      .addArgument(endpointIdArgument()),
    ["vendctl webhooks ping 9d0c7c1e-0d7e-4a3c-9f8e-5b8a1e2d3c4f"],
    async (ctx, id: string) => {
      const result = await unwrap(ctx.clients.api().POST("/api/v1/webhook-endpoints/{id}/ping", { params: { path: { id } } }));
      await ctx.printer.record(result, pingColumns);
      // After the outcome is printed: exit 1 with the reason, as for an API error.
      if (!result.delivered) throw new Error(`the endpoint did not accept the ping: ${result.error ?? "no 2xx answer"}`);
    },
  );
