import { and, eq, sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import { queryRows } from "../db/rows.ts";
import { wallets } from "../db/schema/index.ts";
import type { Executor } from "../db/transaction.ts";
import { notFound } from "../errors.ts";
import { credit, fund } from "../ledger/movements.ts";
import { updateLowBalanceThreshold } from "../ledger/wallet-rows.ts";
import type { Scope } from "../lib/scope.ts";

type Wallet = components["schemas"]["Wallet"];
type WalletMovement = components["schemas"]["WalletMovement"];
type WalletRow = typeof wallets.$inferSelect;

export const presentWallet = (row: Pick<WalletRow, "mode" | "balanceKobo" | "heldKobo" | "lowBalanceThresholdKobo">): Wallet => ({
  mode: row.mode,
  currency: "NGN",
  balance_kobo: row.balanceKobo,
  held_kobo: row.heldKobo,
  available_kobo: row.balanceKobo - row.heldKobo,
  low_balance_threshold_kobo: row.lowBalanceThresholdKobo,
});

const walletWhere = (ref: Scope) => and(eq(wallets.accountId, ref.accountId), eq(wallets.mode, ref.mode));

export async function getWallet(db: Executor, ref: Scope): Promise<Wallet> {
  const [row] = await db.select().from(wallets).where(walletWhere(ref));
  if (!row) throw notFound("Wallet");
  return presentWallet(row);
}

/**
 * Sets the wallet's low-balance threshold (null: no alert), through the ledger that owns the wallet rows
 * (`updateLowBalanceThreshold`). `404` when the account has no such wallet.
 */
export async function setLowBalanceThreshold(db: Executor, ref: Scope, thresholdKobo: number | null): Promise<Wallet> {
  const row = await updateLowBalanceThreshold(db, ref, thresholdKobo);
  if (!row) throw notFound("Wallet");
  return presentWallet(row);
}

interface DepositRow {
  balance_kobo: number | string;
  held_kobo: number | string;
  low_balance_threshold_kobo: number | string | null;
  id: number | string;
  kind: WalletMovement["entry"]["kind"];
  amount_kobo: number | string;
  balance_after_kobo: number | string;
  held_after_kobo: number | string;
  note: string | null;
  created_ms: number | string;
}

/**
 * Adds money to a wallet (`fund` for test self-service, `credit` for operators) in one statement:
 * the wallet and its ledger entry move together. `404` when the account has no such wallet.
 */
export async function creditWallet(
  db: Executor,
  ref: Scope,
  input: { amountKobo: number; kind: "fund" | "credit"; note?: string },
): Promise<WalletMovement> {
  const movement = input.kind === "fund" ? fund(ref, input.amountKobo, input.note) : credit(ref, input.amountKobo, input.note);
  const [row] = await queryRows<DepositRow>(
    db,
    sql`with ${movement.wallet}, ${movement.entry}
        select w.balance_kobo, w.held_kobo, (select low_balance_threshold_kobo from wallets where id = w.id), e.id, e.kind, e.amount_kobo, e.balance_after_kobo, e.held_after_kobo, e.note, e.created_ms
        from ${movement.walletRow.name} w, ${movement.entryRow.name} e`,
  );
  if (!row) throw notFound("Account");
  return {
    entry: {
      id: Number(row.id),
      wallet_mode: ref.mode,
      kind: row.kind,
      amount_kobo: Number(row.amount_kobo),
      balance_after_kobo: Number(row.balance_after_kobo),
      held_after_kobo: Number(row.held_after_kobo),
      transaction_reference: null,
      note: row.note,
      created_at: new Date(Number(row.created_ms)).toISOString(),
    },
    wallet: presentWallet({
      mode: ref.mode,
      balanceKobo: Number(row.balance_kobo),
      heldKobo: Number(row.held_kobo),
      lowBalanceThresholdKobo: row.low_balance_threshold_kobo === null ? null : Number(row.low_balance_threshold_kobo),
    }),
  };
}
