import { and, eq, sql } from "drizzle-orm";
import type { components } from "../../generated/openapi-types.ts";
import type { Mode } from "../auth/keys.ts";
import { queryRows } from "../db/rows.ts";
import { ledgerEntries, wallets } from "../db/schema/index.ts";
import { type Executor, withTransaction } from "../db/transaction.ts";
import { notFound } from "../errors.ts";

type Wallet = components["schemas"]["Wallet"];
type WalletMovement = components["schemas"]["WalletMovement"];
type WalletRow = typeof wallets.$inferSelect;
type LedgerKind = (typeof ledgerEntries.$inferInsert)["kind"];

export interface WalletRef {
  accountId: string;
  mode: Mode;
}

export const presentWallet = (row: WalletRow): Wallet => ({
  mode: row.mode,
  currency: "NGN",
  balance_kobo: row.balanceKobo,
  held_kobo: row.heldKobo,
  available_kobo: row.balanceKobo - row.heldKobo,
});

const walletWhere = (ref: WalletRef) => and(eq(wallets.accountId, ref.accountId), eq(wallets.mode, ref.mode));

export async function getWallet(db: Executor, ref: WalletRef): Promise<Wallet> {
  const [row] = await db.select().from(wallets).where(walletWhere(ref));
  if (!row) throw notFound("Wallet");
  return presentWallet(row);
}

interface Movement {
  kind: LedgerKind;
  amountKobo: number;
  balanceDelta: number;
  heldDelta: number;
  transactionId?: string;
  transactionReference?: string;
  note?: string;
}

/** Appends the ledger entry for a movement already applied to `wallet` (its after-values). */
async function appendLedger(tx: Executor, wallet: WalletRow, movement: Movement): Promise<WalletMovement> {
  const [entry] = await tx
    .insert(ledgerEntries)
    .values({
      walletId: wallet.id,
      kind: movement.kind,
      amountKobo: movement.amountKobo,
      balanceDeltaKobo: movement.balanceDelta,
      heldDeltaKobo: movement.heldDelta,
      balanceAfterKobo: wallet.balanceKobo,
      heldAfterKobo: wallet.heldKobo,
      transactionId: movement.transactionId,
      note: movement.note,
    })
    .returning();
  if (!entry) throw new Error("ledger insert returned nothing");
  return {
    entry: {
      id: entry.id,
      wallet_mode: wallet.mode,
      kind: entry.kind,
      amount_kobo: entry.amountKobo,
      balance_after_kobo: entry.balanceAfterKobo,
      held_after_kobo: entry.heldAfterKobo,
      transaction_reference: movement.transactionReference ?? null,
      note: entry.note,
      created_at: entry.createdAt.toISOString(),
    },
    wallet: presentWallet(wallet),
  };
}

/** Adds money to a wallet (`fund` for test self-service, `credit` for operators). */
export async function creditWallet(
  db: Executor,
  ref: WalletRef,
  input: { amountKobo: number; kind: "fund" | "credit"; note?: string },
): Promise<WalletMovement> {
  return withTransaction(db, async (tx) => {
    const [wallet] = await tx
      .update(wallets)
      .set({ balanceKobo: sql`${wallets.balanceKobo} + ${input.amountKobo}`, updatedAt: sql`now()` })
      .where(walletWhere(ref))
      .returning();
    if (!wallet) throw notFound("Account");
    return appendLedger(tx, wallet, {
      kind: input.kind,
      amountKobo: input.amountKobo,
      balanceDelta: input.amountKobo,
      heldDelta: 0,
      note: input.note,
    });
  });
}

export interface WalletDiscrepancy {
  walletId: string;
  balanceKobo: number;
  ledgerBalanceKobo: number;
  heldKobo: number;
  ledgerHeldKobo: number;
}

/** Every wallet whose balance or hold differs from the sum of its ledger; empty when the books balance. */
export async function reconcileWallets(db: Executor): Promise<WalletDiscrepancy[]> {
  const rows = await queryRows<Record<string, string | number>>(
    db,
    sql`select w.id, w.balance_kobo, w.held_kobo,
               coalesce(sum(l.balance_delta_kobo), 0) as ledger_balance,
               coalesce(sum(l.held_delta_kobo), 0) as ledger_held
        from wallets w left join ledger_entries l on l.wallet_id = w.id
        group by w.id
        having w.balance_kobo <> coalesce(sum(l.balance_delta_kobo), 0)
            or w.held_kobo <> coalesce(sum(l.held_delta_kobo), 0)`,
  );
  return rows.map((r) => ({
    walletId: String(r.id),
    balanceKobo: Number(r.balance_kobo),
    ledgerBalanceKobo: Number(r.ledger_balance),
    heldKobo: Number(r.held_kobo),
    ledgerHeldKobo: Number(r.ledger_held),
  }));
}
