import { Command } from "commander";
import { transactionReferenceArgument } from "../../arguments.ts";
import { recordCommand } from "../../context.ts";
import { printAdminTransaction } from "./inspect.ts";

/**
 * Asks the provider for the order's state now; a final answer is applied through the normal transition path.
 * Safe to repeat, so it does not ask to confirm.
 */
export const transactionsRequeryCommand = (): Command =>
  recordCommand(
    new Command("requery")
      .description("Ask the provider for an order's state now and apply a final answer (admin token, operator role)")
      .addArgument(transactionReferenceArgument()),
    ["vendctl transactions requery txn_4kq9Zr2mXc81LwPb7sTfYhQe"],
    printAdminTransaction,
    ({ clients }, reference: string) =>
      clients.admin().POST("/admin/v1/transactions/{reference}/requery", { params: { path: { reference } } }),
  );
