import { Command } from "commander";
import type { components } from "../../../generated/openapi-fetch-client.ts";
import { transactionReferenceArgument } from "../../arguments.ts";
import { recordCommand } from "../../context.ts";
import type { Column, Printer } from "../../output.ts";
import { transactionDetailColumns } from "../../views.ts";

type Schemas = components["schemas"];
type AdminTransaction = Schemas["AdminTransaction"];

export const adminTransactionColumns: Column<AdminTransaction>[] = [
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

/** An admin transaction, then (on a table) every provider it was sent to with the request id each got. */
export async function printAdminTransaction(printer: Printer, transaction: AdminTransaction): Promise<void> {
  await printer.record(transaction, adminTransactionColumns);
  if (printer.format !== "table") return;
  const attempts = transaction.provider_attempts ?? [];
  await printer.write("\n");
  if (attempts.length === 0) await printer.write("No provider attempts yet.\n");
  else await printer.listAll(attemptColumns, attempts);
}

/** `transactions inspect` and `admin transactions get`: any account's transaction (admin token). */
export function adminGetCommand(name: string, example: string): Command {
  return recordCommand(
    new Command(name)
      .description("Show any account's transaction with its provider attempts (admin token)")
      .addArgument(transactionReferenceArgument()),
    [example],
    printAdminTransaction,
    ({ clients }, reference: string) =>
      clients.admin().GET("/admin/v1/transactions/{reference}", { params: { path: { reference } } }),
  );
}

export const transactionsInspectCommand = (): Command =>
  adminGetCommand("inspect", "vendctl transactions inspect txn_4kq9Zr2mXc81LwPb7sTfYhQe");
