import { Command } from "commander";
import { commandGroup } from "../context.ts";
import { transactionsGetCommand } from "./transactions/get.ts";
import { transactionsInspectCommand } from "./transactions/inspect.ts";
import { transactionsListCommand } from "./transactions/list.ts";
import { transactionsRequeryCommand } from "./transactions/requery.ts";
import { transactionsResolveCommand } from "./transactions/resolve.ts";
import { transactionsStuckCommand } from "./transactions/stuck.ts";
import { transactionsWatchCommand } from "./transactions/watch.ts";

export const transactionsCommand = (): Command =>
  commandGroup(
    new Command("transactions")
      .alias("txn")
      .description(
        "List, show and watch transactions of the API key's account and mode; inspect any one, list stuck ones, re-query and resolve them (admin token)",
      ),
    [
      transactionsListCommand(),
      transactionsGetCommand(),
      transactionsWatchCommand(),
      transactionsInspectCommand(),
      transactionsStuckCommand(),
      transactionsRequeryCommand(),
      transactionsResolveCommand(),
    ],
    "vendctl transactions list --all --jsonl",
  );
