import { sql } from "drizzle-orm";
import { index, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { accounts } from "./accounts.ts";
import { timestampMs } from "./columns.ts";

/** The outbox: written in the same database transaction as the state change it reports. */
export const events = pgTable(
  "events",
  {
    id: text("id").primaryKey(),
    accountId: uuid("account_id")
      .notNull()
      .references(() => accounts.id),
    mode: text("mode", { enum: ["test", "live"] }).notNull(),
    type: text("type", { enum: ["transaction.successful", "transaction.failed"] }).notNull(),
    transactionId: uuid("transaction_id").notNull(),
    payload: jsonb("payload").$type<Record<string, unknown>>().notNull(),
    createdAt: timestampMs("created_at").notNull().default(sql`clock_timestamp()`),
  },
  (t) => [index("events_listing_idx").on(t.accountId, t.mode, t.createdAt.desc(), t.id.desc())],
);
