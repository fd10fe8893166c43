import { Command } from "commander";
import { recordCommand } from "../../context.ts";
import { callbackColumns } from "../../views.ts";

export const callbacksReplayCommand = (): Command =>
  recordCommand(
    new Command("replay")
      .description("Run a stored callback again through the live code path (admin token)")
      .argument("<id>", "stored callback id (from `callbacks list`)"),
    ["vendctl callbacks replay 9d0c7c1e-0d7e-4a3c-9f8e-5b8a1e2d3c4f"],
    callbackColumns,
    (ctx, id: string) => ctx.clients.admin().POST("/admin/v1/callbacks/{id}/replay", { params: { path: { id } } }),
  );
