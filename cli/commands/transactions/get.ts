import { Command } from "commander";
import { transactionReferenceArgument } from "../../arguments.ts";
import { recordCommand } from "../../context.ts";
import { transactionDetailColumns } from "../../views.ts";

export const transactionsGetCommand = (): Command =>
  recordCommand(
    new Command("get").description("Show one transaction").addArgument(transactionReferenceArgument()),
    ["vendctl transactions get txn_4kq9Zr2mXc81LwPb7sTfYhQe --json"],
    transactionDetailColumns,
    (ctx, reference: string) => ctx.clients.api().GET("/api/v1/transactions/{reference}", { params: { path: { reference } } }),
  );
