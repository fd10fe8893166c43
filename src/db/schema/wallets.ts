import { sql } from "drizzle-orm";
import { boolean, check, pgTable, uniqueIndex } from "drizzle-orm/pg-core";
import { modes } from "../../../generated/constants.ts";
import { accountAndMode } from "./accounts.ts";
import { insertedAt, kobo, oneOf, uuidPrimaryKey } from "./columns.ts";

export const wallets = pgTable(
  "wallets",
  {
    id: uuidPrimaryKey(),
    ...accountAndMode(),
    balanceKobo: kobo("balance_kobo").notNull().default(0),
    heldKobo: kobo("held_kobo").notNull().default(0),
    /** `wallet.balance_low` is sent when the available balance falls below this; null: no alert. */
    lowBalanceThresholdKobo: kobo("low_balance_threshold_kobo"),
    /** True once the alert was sent for the current crossing; cleared when the balance is back at or above. */
    lowBalanceAlerted: boolean("low_balance_alerted").notNull().default(false),
    updatedAt: insertedAt("updated_at"),
  },
  (t) => [
    uniqueIndex("wallets_account_mode_idx").on(t.accountId, t.mode),
    check("wallets_held_nonneg", sql`${t.heldKobo} >= 0`),
    check("wallets_available_nonneg", sql`${t.balanceKobo} - ${t.heldKobo} >= 0`),
    check("wallets_mode_check", oneOf(t.mode, modes)),
    check("wallets_low_balance_threshold_nonneg", sql`${t.lowBalanceThresholdKobo} >= 0`),
  ],
);
