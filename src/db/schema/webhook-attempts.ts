import { index, integer, pgTable, text } from "drizzle-orm/pg-core";
import { insertedAt, serialPrimaryKey, uuidReference } from "./columns.ts";
import { webhookDeliveries } from "./webhook-deliveries.ts";

export const webhookAttempts = pgTable(
  "webhook_attempts",
  {
    id: serialPrimaryKey(),
    deliveryId: uuidReference("delivery_id", () => webhookDeliveries.id),
    attempt: integer().notNull(),
    statusCode: integer("status_code"),
    error: text(),
    durationMs: integer("duration_ms").notNull(),
    attemptedAt: insertedAt("attempted_at"),
  },
  (t) => [
    index("webhook_attempts_delivery_idx").on(t.deliveryId, t.attempt),
    // Retention: the oldest first, up to the cutoff.
    index("webhook_attempts_retention_idx").on(t.attemptedAt),
  ],
);
