import { Command } from "commander";
import { withExample } from "../context.ts";
import { eventsListCommand } from "./events/list.ts";
import { eventsResendCommand } from "./events/resend.ts";

export const eventsCommand = (): Command =>
  withExample(
    new Command("events")
      .description("Webhook events of the API key's account and mode")
      .addCommand(eventsListCommand())
      .addCommand(eventsResendCommand()),
    "vendctl events list --all",
  );
