import { sql } from "drizzle-orm";
import { bigserial, index, integer, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { timestampMs } from "./columns.ts";
import { webhookDeliveries } from "./webhook-deliveries.ts";

export const webhookAttempts = pgTable(
  "webhook_attempts",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    deliveryId: uuid("delivery_id")
      .notNull()
      .references(() => webhookDeliveries.id),
    attempt: integer("attempt").notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
    durationMs: integer("duration_ms").notNull(),
    attemptedAt: timestampMs("attempted_at").notNull().default(sql`now()`),
  },
  (t) => [index("webhook_attempts_delivery_idx").on(t.deliveryId, t.attempt)],
);
