import { index, jsonb, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { eventTypes } from "../../../generated/constants.ts";
import { accountAndMode } from "./accounts.ts";
import { createdAt } from "./columns.ts";

/** The outbox: written in the same database transaction as the state change it reports. */
export const events = pgTable(
  "events",
  {
    id: text().primaryKey(),
    ...accountAndMode(),
    type: text({ enum: eventTypes }).notNull(),
    /** The transaction the event reports; null for events about something else (a batch, the wallet…). */
    transactionId: uuid("transaction_id"),
    payload: jsonb().$type<Record<string, unknown>>().notNull(),
    ...createdAt("clock"),
  },
  (t) => [index("events_listing_idx").on(t.accountId, t.mode, t.createdAt.desc(), t.id.desc())],
);
