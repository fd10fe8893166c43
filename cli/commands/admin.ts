import { Command } from "commander";
import { withExample } from "../context.ts";
import { adminTransactionsCommand } from "./admin/transactions.ts";

export const adminCommand = (): Command =>
  withExample(
    new Command("admin").description("Operator views across accounts (admin token)").addCommand(adminTransactionsCommand()),
    "vendctl admin transactions list --search INV-10",
  );
