import { sql } from "drizzle-orm";
import { bigserial, check, index, pgTable, primaryKey, text, uuid } from "drizzle-orm/pg-core";
import { ledgerEntryKinds } from "../../../generated/constants.ts";
import { createdAt, kobo, oneOf, uuidReference } from "./columns.ts";
import { wallets } from "./wallets.ts";

/**
 * Append-only. Each row moves the wallet by (balance_delta, held_delta); the wallet
 * always equals the sum of its entries, which the reconciliation check proves. Partition-ready (migration 0012):
 * the primary key includes `created_at`; the id stays unique through its sequence.
 */
export const ledgerEntries = pgTable(
  "ledger_entries",
  {
    id: bigserial({ mode: "number" }).notNull(),
    walletId: uuidReference("wallet_id", () => wallets.id),
    kind: text({ enum: ledgerEntryKinds }).notNull(),
    amountKobo: kobo("amount_kobo").notNull(),
    balanceDeltaKobo: kobo("balance_delta_kobo").notNull(),
    heldDeltaKobo: kobo("held_delta_kobo").notNull(),
    balanceAfterKobo: kobo("balance_after_kobo").notNull(),
    heldAfterKobo: kobo("held_after_kobo").notNull(),
    transactionId: uuid("transaction_id"),
    note: text(),
    ...createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.id, t.createdAt] }),
    index("ledger_wallet_idx").on(t.walletId, t.id),
    index("ledger_transaction_idx").on(t.transactionId),
    check("ledger_amount_positive", sql`${t.amountKobo} > 0`),
    check("ledger_kind_check", oneOf(t.kind, ledgerEntryKinds)),
  ],
);
