import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { contextOf, withExample } from "../../context.ts";
import { warnShownOnce } from "../../shown-once.ts";
import { endpointCreatedColumns } from "../../views.ts";

export const webhooksAddCommand = withExample(
  new Command("add")
    .description("Register a webhook endpoint; its signing secret (whsec_…) is shown only now")
    .argument("<url>", "where events are POSTed")
    .option("--description <text>", "what the endpoint is for"),
  "vendctl webhooks add https://example.com/hooks/vend --description 'Order service'",
).action(async (url: string, flags: { description?: string }, command: Command) => {
  const ctx = contextOf(command);
  const body = { url, ...(flags.description ? { description: flags.description } : {}) };
  const created = await unwrap(ctx.clients.api().POST("/api/v1/webhook-endpoints", { body }));
  await ctx.printer.record(created, endpointCreatedColumns);
  await warnShownOnce(
    "Save this signing secret now: it is shown only once. If it is lost, add the endpoint again and remove this one.",
  );
});
