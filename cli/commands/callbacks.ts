import { Command } from "commander";
import { commandGroup } from "../context.ts";
import { callbacksListCommand } from "./callbacks/list.ts";
import { callbacksReplayCommand } from "./callbacks/replay.ts";
import { callbacksSendCommand } from "./callbacks/send.ts";

export const callbacksCommand = (): Command =>
  commandGroup(
    new Command("callbacks")
      .summary("List, replay (admin) or send (QA) provider callbacks")
      .description("Provider callbacks: list and replay stored ones (admin token), or send a signed sandbox callback (QA)"),
    [callbacksListCommand(), callbacksReplayCommand(), callbacksSendCommand()],
    "vendctl callbacks send txn_4kq9Zr2mXc81LwPb7sTfYhQe --status successful",
  );
