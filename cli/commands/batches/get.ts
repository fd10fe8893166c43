import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { actionCommand } from "../../context.ts";
import { batchDetailColumns } from "../../views.ts";

export const batchesGetCommand = (): Command =>
  actionCommand(
    new Command("get")
      .description(
        "Show one batch: its orders counted by status as they stand, and its rejections (list its orders with transactions list --batch-id)",
      )
      .argument("<id>", "batch id (vend bulk --json and batches list name it)"),
    [
      "vendctl batches get 5b0c7c1e-0d7e-4a3c-9f8e-5b8a1e2d3c4f",
      "vendctl transactions list --batch-id 5b0c7c1e-0d7e-4a3c-9f8e-5b8a1e2d3c4f --all --csv",
    ],
    async (ctx, id: string) => {
      const detail = await unwrap(
        ctx.clients.api().GET("/api/v1/vend/batches/{id}", { params: { path: { id }, query: { limit: 1 } } }),
      );
      await ctx.printer.record(detail.batch, batchDetailColumns);
    },
  );
