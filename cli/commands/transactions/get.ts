import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { contextOf, withExample } from "../../context.ts";
import { transactionDetailColumns } from "../../views.ts";

export const transactionsGetCommand = (): Command =>
  withExample(
    new Command("get").description("Show one transaction").argument("<reference>", "transaction reference (txn_…)"),
    "vendctl transactions get txn_4kq9Zr2mXc81LwPb7sTfYhQe --json",
  ).action(async (reference: string, _flags: unknown, command: Command) => {
    const ctx = contextOf(command);
    const transaction = await unwrap(
      ctx.clients.api().GET("/api/v1/transactions/{reference}", { params: { path: { reference } } }),
    );
    await ctx.printer.record(transaction, transactionDetailColumns);
  });
