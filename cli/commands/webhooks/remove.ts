import { Command } from "commander";
import { endpointIdArgument } from "../../arguments.ts";
import { unwrap, type VendClient } from "../../client.ts";
import { confirmDestructive, willAsk, yesOption } from "../../confirm-destructive.ts";
import { actionCommand } from "../../context.ts";

/** The endpoint's URL, to show what is being removed; undefined when it is not listed. */
async function urlOf(api: VendClient, id: string): Promise<string | undefined> {
  const endpoints = await unwrap(api.GET("/api/v1/webhook-endpoints"));
  return endpoints.find((e) => e.id === id)?.url;
}

export const webhooksRemoveCommand = (): Command =>
  actionCommand(
    new Command("remove")
      .alias("rm")
      .description("Remove a webhook endpoint; it gets no more events. Asks to confirm on a terminal; --yes without one")
      .addArgument(endpointIdArgument())
      .addOption(yesOption()),
    ["vendctl webhooks remove 9d0c7c1e-0d7e-4a3c-9f8e-5b8a1e2d3c4f --yes"],
    async (ctx, id: string, flags: { yes?: boolean }) => {
      const api = ctx.clients.api();
      const url = willAsk(ctx, flags.yes) ? await urlOf(api, id) : undefined;
      await confirmDestructive(
        ctx,
        flags.yes,
        `Remove webhook endpoint ${id}${url ? ` (${url})` : ""}`,
        "It gets no more events",
      );
      const removed = await unwrap(api.DELETE("/api/v1/webhook-endpoints/{id}", { params: { path: { id } } }));
      await ctx.printer.record(removed, [{ key: "id" }, { key: "deleted" }]);
    },
  );
