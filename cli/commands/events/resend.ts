import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { contextOf, withExample } from "../../context.ts";
import { eventColumns } from "../../views.ts";

export const eventsResendCommand = (): Command =>
  withExample(
    new Command("resend").description("Send an event again to every current endpoint").argument("<id>", "event id (evt_…)"),
    "vendctl events resend evt_2mXc81LwPb7sTfYhQe4kq9Zr",
  ).action(async (id: string, _flags: unknown, command: Command) => {
    const ctx = contextOf(command);
    const event = await unwrap(ctx.clients.api().POST("/api/v1/events/{id}/resend", { params: { path: { id } } }));
    await ctx.printer.record(event, eventColumns);
  });
