import { Command } from "commander";
import type { components } from "../../generated/openapi-fetch-client.ts";
import { unwrap } from "../client.ts";
import { contextOf, withExample } from "../context.ts";
import type { Column } from "../output.ts";

type WalletDiscrepancy = components["schemas"]["WalletDiscrepancy"];

const discrepancyColumns: Column<WalletDiscrepancy>[] = [
  { key: "wallet_id", header: "WALLET" },
  { key: "account_id", header: "ACCOUNT" },
  { key: "mode" },
  { key: "balance_kobo", money: true },
  { key: "ledger_balance_kobo", header: "LEDGER_BALANCE", money: true },
  { key: "held_kobo", money: true },
  { key: "ledger_held_kobo", header: "LEDGER_HELD", money: true },
];

/** The books do not balance: reported like any failed API check (exit 1), after the discrepancies are printed. */
class BooksUnbalancedError extends Error {}

export const reconcileCommand = withExample(
  new Command("reconcile").description(
    "Check every wallet against its ledger (admin token); exits 1 and lists the wallets that differ when the books do not balance",
  ),
  "vendctl reconcile",
  "vendctl reconcile --json",
).action(async (_flags: unknown, command: Command) => {
  const ctx = contextOf(command);
  const report = await unwrap(ctx.clients.admin().GET("/admin/v1/reconciliation"));
  const { printer } = ctx;
  if (printer.format === "json") {
    await printer.record(report, []);
  } else if (printer.format === "table" && report.balanced) {
    await printer.write(`Books balanced: ${report.wallets_checked} wallets checked\n`);
  } else {
    const writer = printer.list(discrepancyColumns);
    await writer.rows(report.discrepancies);
    await writer.end();
  }
  if (!report.balanced) {
    const count = report.discrepancies.length;
    throw new BooksUnbalancedError(`Books unbalanced: ${count} of ${report.wallets_checked} wallets differ from their ledger`);
  }
});
