import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { contextOf, withExample } from "../../context.ts";

export const webhooksRemoveCommand = withExample(
  new Command("remove").alias("rm").description("Remove a webhook endpoint").argument("<id>", "endpoint id"),
  "vendctl webhooks remove 9d0c7c1e-0d7e-4a3c-9f8e-5b8a1e2d3c4f",
).action(async (id: string, _flags: unknown, command: Command) => {
  const ctx = contextOf(command);
  const removed = await unwrap(ctx.clients.api().DELETE("/api/v1/webhook-endpoints/{id}", { params: { path: { id } } }));
  await ctx.printer.record(removed, [{ key: "id" }, { key: "deleted" }]);
});
