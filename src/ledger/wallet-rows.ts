/**
 * The writes to `wallets` that move no money. The ledger owns the table: every balance change is a movement
 * (movements.ts); these open an account's wallets and set what a wallet alerts on.
 */
import { and, eq, sql } from "drizzle-orm";
import { wallets } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import type { Scope } from "../lib/scope.ts";

/** Opens an account's two wallets, test and live, empty. */
export async function openWallets(tx: Executor, accountId: string): Promise<void> {
  await tx.insert(wallets).values([
    { accountId, mode: "test" },
    { accountId, mode: "live" },
  ]);
}

/**
 * Sets the wallet's low-balance threshold (null: no alert) and returns the wallet; undefined when the account has
 * no such wallet. The wallets trigger (migration `0009_low_balance_alerts`) decides in the same update whether
 * this alerts at once (a threshold above the available balance, not yet alerted) or re-arms the alert.
 */
export async function updateLowBalanceThreshold(db: Executor, wallet: Scope, thresholdKobo: number | null) {
  const [row] = await db
    .update(wallets)
    .set({ lowBalanceThresholdKobo: thresholdKobo, updatedAt: sql`now()` })
    .where(and(eq(wallets.accountId, wallet.accountId), eq(wallets.mode, wallet.mode)))
    .returning();
  return row;
}
