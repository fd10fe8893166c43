import { Command } from "commander";
import type { components } from "../../generated/openapi-fetch-client.ts";
import { unwrap } from "../client.ts";
import { contextOf, withExample } from "../context.ts";
import type { Column } from "../output.ts";
import { transactionDetailColumns } from "../views.ts";
import { transactionsGetCommand } from "./transactions/get.ts";
import { transactionsListCommand } from "./transactions/list.ts";
import { transactionsResolveCommand } from "./transactions/resolve.ts";
import { transactionsStuckCommand } from "./transactions/stuck.ts";
import { transactionsWatchCommand } from "./transactions/watch.ts";

type Schemas = components["schemas"];

const inspectColumns: Column<Schemas["AdminTransaction"]>[] = [
  ...transactionDetailColumns,
  { key: "account_id", header: "ACCOUNT" },
  { key: "provider" },
];

const attemptColumns: Column<Schemas["ProviderAttempt"]>[] = [
  { key: "provider" },
  { key: "request_id" },
  { key: "status" },
  { key: "answer_ms" },
  { key: "sent_at", header: "SENT" },
  { key: "message" },
];

/** The admin view: any account's transaction, and every provider it was sent to with the request id each got. */
const transactionsInspectCommand = withExample(
  new Command("inspect")
    .description("Show any account's transaction with its provider attempts (admin token)")
    .argument("<reference>", "transaction reference (txn_…)"),
  "vendctl transactions inspect txn_4kq9Zr2mXc81LwPb7sTfYhQe",
).action(async (reference: string, _flags: unknown, command: Command) => {
  const { clients, printer } = contextOf(command);
  const transaction = await unwrap(
    clients.admin().GET("/admin/v1/transactions/{reference}", { params: { path: { reference } } }),
  );
  await printer.record(transaction, inspectColumns);
  if (printer.format !== "table") return;
  const attempts = transaction.provider_attempts ?? [];
  await printer.write("\n");
  if (attempts.length === 0) await printer.write("No provider attempts yet.\n");
  else await printer.listAll(attemptColumns, attempts);
});

export const transactionsCommand = withExample(
  new Command("transactions")
    .alias("txn")
    .description(
      "List, show and watch transactions of the API key's account and mode; inspect any one, list stuck ones and resolve them (admin token)",
    )
    .addCommand(transactionsListCommand)
    .addCommand(transactionsGetCommand)
    .addCommand(transactionsWatchCommand)
    .addCommand(transactionsInspectCommand)
    .addCommand(transactionsStuckCommand)
    .addCommand(transactionsResolveCommand),
  "vendctl transactions list --all --jsonl",
);
