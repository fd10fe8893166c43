import { Command } from "commander";
import { withExample } from "../context.ts";
import { transactionsGetCommand } from "./transactions/get.ts";
import { transactionsInspectCommand } from "./transactions/inspect.ts";
import { transactionsListCommand } from "./transactions/list.ts";
import { transactionsRequeryCommand } from "./transactions/requery.ts";
import { transactionsResolveCommand } from "./transactions/resolve.ts";
import { transactionsStuckCommand } from "./transactions/stuck.ts";
import { transactionsWatchCommand } from "./transactions/watch.ts";

export const transactionsCommand = (): Command =>
  withExample(
    new Command("transactions")
      .alias("txn")
      .description(
        "List, show and watch transactions of the API key's account and mode; inspect any one, list stuck ones, re-query and resolve them (admin token)",
      )
      .addCommand(transactionsListCommand())
      .addCommand(transactionsGetCommand())
      .addCommand(transactionsWatchCommand())
      .addCommand(transactionsInspectCommand())
      .addCommand(transactionsStuckCommand())
      .addCommand(transactionsRequeryCommand())
      .addCommand(transactionsResolveCommand()),
    "vendctl transactions list --all --jsonl",
  );
