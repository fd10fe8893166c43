import { sql } from "drizzle-orm";
import { index, integer, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { providerCallbackStatuses } from "../../../generated/constants.ts";
import { createdAt, timestampMs } from "./columns.ts";

/**
 * The sandbox provider's own book of orders, keyed by our reference (its request id). It lives
 * in the database so that any process can re-query it, and `vend_count` shows whether an order
 * was ever sent twice.
 */
export const sandboxOrders = pgTable(
  "sandbox_orders",
  {
    reference: text().primaryKey(),
    providerReference: text("provider_reference").notNull(),
    status: text({ enum: ["successful", "failed", "pending"] }).notNull(),
    /** What a pending order becomes when its callback is due (null: stays pending). */
    eventualStatus: text("eventual_status", { enum: providerCallbackStatuses }),
    vendCount: integer("vend_count").notNull().default(1),
    result: jsonb().$type<Record<string, string>>().notNull().default({}),
    callbackDueAt: timestampMs("callback_due_at"),
    callbackSentAt: timestampMs("callback_sent_at"),
    ...createdAt(),
  },
  (t) => [
    index("sandbox_orders_callback_due_idx").on(t.callbackDueAt).where(sql`${t.callbackSentAt} is null`),
    // Retention: the oldest first, up to the cutoff.
    index("sandbox_orders_retention_idx").on(t.createdAt),
  ],
);
