import { sql } from "drizzle-orm";
import { check, pgTable, uniqueIndex } from "drizzle-orm/pg-core";
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
    updatedAt: insertedAt("updated_at"),
  },
  (t) => [
    uniqueIndex("wallets_account_mode_idx").on(t.accountId, t.mode),
    check("wallets_held_nonneg", sql`${t.heldKobo} >= 0`),
    check("wallets_available_nonneg", sql`${t.balanceKobo} - ${t.heldKobo} >= 0`),
    check("wallets_mode_check", oneOf(t.mode, modes)),
  ],
);
