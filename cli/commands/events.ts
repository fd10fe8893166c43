import { Command } from "commander";
import { commandGroup } from "../context.ts";
import { eventsListCommand } from "./events/list.ts";
import { eventsResendCommand } from "./events/resend.ts";

export const eventsCommand = (): Command =>
  commandGroup(
    new Command("events").description("Webhook events of the API key's account and mode"),
    [eventsListCommand(), eventsResendCommand()],
    "vendctl events list --all",
  );
