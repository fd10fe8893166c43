import { sql } from "drizzle-orm";
import { bigserial, check, index, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { kobo, timestampMs } from "./columns.ts";
import { wallets } from "./wallets.ts";

/**
 * Append-only. Each row moves the wallet by (balance_delta, held_delta); the wallet
 * always equals the sum of its entries, which the reconciliation check proves.
 */
export const ledgerEntries = pgTable(
  "ledger_entries",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    walletId: uuid("wallet_id")
      .notNull()
      .references(() => wallets.id),
    kind: text("kind", { enum: ["fund", "credit", "hold", "capture", "release"] }).notNull(),
    amountKobo: kobo("amount_kobo").notNull(),
    balanceDeltaKobo: kobo("balance_delta_kobo").notNull(),
    heldDeltaKobo: kobo("held_delta_kobo").notNull(),
    balanceAfterKobo: kobo("balance_after_kobo").notNull(),
    heldAfterKobo: kobo("held_after_kobo").notNull(),
    transactionId: uuid("transaction_id"),
    note: text("note"),
    createdAt: timestampMs("created_at").notNull().default(sql`now()`),
  },
  (t) => [
    index("ledger_wallet_idx").on(t.walletId, t.id),
    index("ledger_transaction_idx").on(t.transactionId),
    check("ledger_amount_positive", sql`${t.amountKobo} > 0`),
    check("ledger_kind_check", sql`${t.kind} in ('fund', 'credit', 'hold', 'capture', 'release')`),
  ],
);
