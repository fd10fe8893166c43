import { Command } from "commander";
import { commandGroup } from "../context.ts";
import { walletAlertCommand } from "./wallet/alert.ts";
import { walletBalanceCommand } from "./wallet/balance.ts";
import { walletFundCommand } from "./wallet/fund.ts";
import { walletReconcileCommand } from "./wallet/reconcile.ts";
import { walletStatementCommand } from "./wallet/statement.ts";

export const walletCommand = (): Command =>
  commandGroup(
    new Command("wallet").description("Wallet balance, statement, funding and low-balance alert; check the books (admin token)"),
    [walletBalanceCommand(), walletStatementCommand(), walletFundCommand(), walletAlertCommand(), walletReconcileCommand()],
    "vendctl wallet fund 5000 && vendctl wallet balance",
    "vendctl wallet statement --all --csv > statement.csv",
  );
