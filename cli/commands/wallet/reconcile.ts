import { Command } from "commander";
import type { components } from "../../../generated/openapi-fetch-client.ts";
import { unwrap } from "../../client.ts";
import { contextOf, withExample } from "../../context.ts";
import type { Column } from "../../output.ts";

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

/**
 * `wallet reconcile`, or the top-level `reconcile` kept for existing scripts: every wallet, or one
 * account's, against its ledger; exit 1 when any differs.
 */
export function reconcileCommandNamed(path: "wallet reconcile" | "reconcile", description: string): Command {
  return withExample(
    new Command("reconcile").description(description).option("--account <id>", "check only this account's wallets"),
    `vendctl ${path}`,
    `vendctl ${path} --account 0b7f3c2e-9a1d-4f5e-8c6b-2d4e6f8a0b1c --json`,
  ).action(async (flags: { account?: string }, command: Command) => {
    const ctx = contextOf(command);
    const query = flags.account === undefined ? {} : { account_id: flags.account };
    const report = await unwrap(ctx.clients.admin().GET("/admin/v1/reconciliation", { params: { query } }));
    const { printer } = ctx;
    if (printer.format === "json") {
      await printer.record(report, []);
    } else if (printer.format === "table" && report.balanced) {
      await printer.write(`Books balanced: ${report.wallets_checked} wallets checked\n`);
    } else {
      await printer.listAll(discrepancyColumns, report.discrepancies);
    }
    if (!report.balanced) {
      const count = report.discrepancies.length;
      throw new BooksUnbalancedError(`Books unbalanced: ${count} of ${report.wallets_checked} wallets differ from their ledger`);
    }
  });
}

export const walletReconcileCommand = (): Command =>
  reconcileCommandNamed(
    "wallet reconcile",
    "Check every wallet (or one account's with --account) against its ledger (admin token); exits 1 and lists the wallets that differ when the books do not balance",
  );
