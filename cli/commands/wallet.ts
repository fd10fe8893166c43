import { Command } from "commander";
import { withExample } from "../context.ts";
import { walletBalanceCommand } from "./wallet/balance.ts";
import { walletFundCommand } from "./wallet/fund.ts";

export const walletCommand = withExample(
  new Command("wallet").description("Wallet balance and funding").addCommand(walletBalanceCommand).addCommand(walletFundCommand),
  "vendctl wallet fund 5000 && vendctl wallet balance",
);
