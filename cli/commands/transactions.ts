import { Command } from "commander";
import { withExample } from "../context.ts";
import { transactionsGetCommand } from "./transactions/get.ts";
import { transactionsListCommand } from "./transactions/list.ts";
import { transactionsWatchCommand } from "./transactions/watch.ts";

export const transactionsCommand = withExample(
  new Command("transactions")
    .alias("txn")
    .description("List, show and watch transactions of the API key's account and mode")
    .addCommand(transactionsListCommand)
    .addCommand(transactionsGetCommand)
    .addCommand(transactionsWatchCommand),
  "vendctl transactions list --all --jsonl",
);
