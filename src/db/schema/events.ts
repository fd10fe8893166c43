import { index, jsonb, pgTable, primaryKey, text, uuid } from "drizzle-orm/pg-core";
import { eventTypes } from "../../../generated/constants.ts";
import { accountAndMode } from "./accounts.ts";
import { createdAt } from "./columns.ts";

/**
 * The outbox: written in the same database transaction as the state change it reports. Partition-ready (migration
 * 0012): the primary key includes `created_at`; ids are made by the service with 143 random bits (`evt_…`).
 */
export const events = pgTable(
  "events",
  {
    id: text().notNull(),
    ...accountAndMode(),
    type: text({ enum: eventTypes }).notNull(),
    /** The transaction the event reports; null for events about something else (a batch, the wallet…). */
    transactionId: uuid("transaction_id"),
    payload: jsonb().$type<Record<string, unknown>>().notNull(),
    ...createdAt("clock"),
  },
  (t) => [
    primaryKey({ columns: [t.id, t.createdAt] }),
    index("events_listing_idx").on(t.accountId, t.mode, t.createdAt.desc(), t.id.desc()),
  ],
);
