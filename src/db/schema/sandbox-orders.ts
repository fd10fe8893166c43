import { sql } from "drizzle-orm";
import { integer, jsonb, pgTable, text } from "drizzle-orm/pg-core";
import { timestampMs } from "./columns.ts";

/** The sandbox provider's own book of orders, keyed by our reference (its request id). */
export const sandboxOrders = pgTable("sandbox_orders", {
  reference: text("reference").primaryKey(),
  providerReference: text("provider_reference").notNull(),
  status: text("status", { enum: ["successful", "failed", "pending"] }).notNull(),
  vendCount: integer("vend_count").notNull().default(1),
  result: jsonb("result").$type<Record<string, string>>().notNull().default({}),
  callbackDueAt: timestampMs("callback_due_at"),
  createdAt: timestampMs("created_at").notNull().default(sql`now()`),
});
