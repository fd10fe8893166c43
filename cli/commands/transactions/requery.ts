import { Command } from "commander";
import { transactionReferenceArgument } from "../../arguments.ts";
import { unwrap } from "../../client.ts";
import { actionCommand } from "../../context.ts";
import { printAdminTransaction } from "./inspect.ts";

/**
 * Asks the provider for the order's state now; a final answer is applied through the normal transition path.
 * Safe to repeat, so it does not ask to confirm.
 */
export const transactionsRequeryCommand = (): Command =>
  actionCommand(
    new Command("requery")
      .description("Ask the provider for an order's state now and apply a final answer (admin token, operator role)")
      .addArgument(transactionReferenceArgument()),
    ["vendctl transactions requery txn_4kq9Zr2mXc81LwPb7sTfYhQe"],
    async ({ clients, printer }, reference: string) => {
      const transaction = await unwrap(
        clients.admin().POST("/admin/v1/transactions/{reference}/requery", { params: { path: { reference } } }),
      );
      await printAdminTransaction(printer, transaction);
    },
  );
