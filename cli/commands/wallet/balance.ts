import { Command } from "commander";
import { unwrap } from "../../client.ts";
import { contextOf, withExample } from "../../context.ts";
import { walletColumns } from "../../views.ts";

export const walletBalanceCommand = (): Command =>
  withExample(
    new Command("balance").description("Show the wallet of the API key's account and mode (amounts in kobo with --json)"),
    "vendctl wallet balance --json",
  ).action(async (_flags: unknown, command: Command) => {
    const ctx = contextOf(command);
    await ctx.printer.record(await unwrap(ctx.clients.api().GET("/api/v1/wallet")), walletColumns);
  });
