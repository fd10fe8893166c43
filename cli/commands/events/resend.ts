import { Command } from "commander";
import { recordCommand } from "../../context.ts";
import { eventColumns } from "../../views.ts";

export const eventsResendCommand = (): Command =>
  recordCommand(
    new Command("resend").description("Send an event again to every current endpoint").argument("<id>", "event id (evt_…)"),
    ["vendctl events resend evt_2mXc81LwPb7sTfYhQe4kq9Zr"],
    eventColumns,
    (ctx, id: string) => ctx.clients.api().POST("/api/v1/events/{id}/resend", { params: { path: { id } } }),
  );
