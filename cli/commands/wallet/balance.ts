import { Command } from "commander";
import { recordCommand } from "../../context.ts";
import { walletColumns } from "../../views.ts";

export const walletBalanceCommand = (): Command =>
  recordCommand(
    new Command("balance").description("Show the wallet of the API key's account and mode (amounts in kobo with --json)"),
    ["vendctl wallet balance --json"],
    walletColumns,
    (ctx) => ctx.clients.api().GET("/api/v1/wallet"),
  );
