import { Command } from "commander";
import { commandGroup } from "../context.ts";
import { adminTransactionsCommand } from "./admin/transactions.ts";

export const adminCommand = (): Command =>
  commandGroup(
    new Command("admin").description("Operator views across accounts (admin token)"),
    [adminTransactionsCommand()],
    "vendctl admin transactions list --search INV-10",
  );
