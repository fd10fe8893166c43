import { Command } from "commander";
import { commandGroup } from "../context.ts";
import { logsListCommand } from "./logs/list.ts";
import { logsShowCommand } from "./logs/show.ts";
import { logsTailCommand } from "./logs/tail.ts";

/** `vendctl logs` alone is `vendctl logs list`. */
export const logsCommand = (): Command => {
  const command = new Command("logs").description(
    "Request logs: every API request and its answer, kept 7 days by default: list them (`vendctl logs` alone), show " +
      "one with its bodies, or follow them live. An API key sees its account's requests in its mode; an admin token every account's",
  );
  command.addCommand(logsListCommand(), { isDefault: true });
  return commandGroup(
    command,
    [logsShowCommand(), logsTailCommand()],
    "vendctl logs --status 4xx",
    "vendctl logs show req_6bTq0cWk2Zr9YpLhV3sD",
    "vendctl logs tail --status 5xx",
  );
};
