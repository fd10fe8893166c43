import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { contextOf, withExample } from "../../context.ts";
import { callbackColumns } from "../../views.ts";

export const callbacksReplayCommand = (): Command =>
  withExample(
    new Command("replay")
      .description("Run a stored callback again through the live code path (admin token)")
      .argument("<id>", "stored callback id (from `callbacks list`)"),
    "vendctl callbacks replay 9d0c7c1e-0d7e-4a3c-9f8e-5b8a1e2d3c4f",
  ).action(async (id: string, _flags: unknown, command: Command) => {
    const ctx = contextOf(command);
    const replayed = await unwrap(ctx.clients.admin().POST("/admin/v1/callbacks/{id}/replay", { params: { path: { id } } }));
    await ctx.printer.record(replayed, callbackColumns);
  });
