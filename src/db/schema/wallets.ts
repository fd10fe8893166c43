import { sql } from "drizzle-orm";
import { check, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { accounts } from "./accounts.ts";
import { kobo, timestampMs } from "./columns.ts";

export const wallets = pgTable(
  "wallets",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    accountId: uuid("account_id")
      .notNull()
      .references(() => accounts.id),
    mode: text("mode", { enum: ["test", "live"] }).notNull(),
    balanceKobo: kobo("balance_kobo").notNull().default(0),
    heldKobo: kobo("held_kobo").notNull().default(0),
    updatedAt: timestampMs("updated_at").notNull().default(sql`now()`),
  },
  (t) => [
    uniqueIndex("wallets_account_mode_idx").on(t.accountId, t.mode),
    check("wallets_held_nonneg", sql`${t.heldKobo} >= 0`),
    check("wallets_available_nonneg", sql`${t.balanceKobo} - ${t.heldKobo} >= 0`),
    check("wallets_mode_check", sql`${t.mode} in ('test', 'live')`),
  ],
);
