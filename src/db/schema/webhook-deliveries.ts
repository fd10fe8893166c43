import { sql } from "drizzle-orm";
import { index, integer, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { timestampMs } from "./columns.ts";
import { events } from "./events.ts";
import { webhookEndpoints } from "./webhook-endpoints.ts";

export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    eventId: text("event_id")
      .notNull()
      .references(() => events.id),
    endpointId: uuid("endpoint_id")
      .notNull()
      .references(() => webhookEndpoints.id),
    status: text("status", { enum: ["pending", "succeeded", "failed"] }).notNull(),
    attempts: integer("attempts").notNull().default(0),
    nextAttemptAt: timestampMs("next_attempt_at"),
    leaseExpiresAt: timestampMs("lease_expires_at"),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    createdAt: timestampMs("created_at").notNull().default(sql`now()`),
    updatedAt: timestampMs("updated_at").notNull().default(sql`now()`),
  },
  (t) => [
    uniqueIndex("webhook_deliveries_event_endpoint_idx").on(t.eventId, t.endpointId),
    index("webhook_deliveries_due_idx").on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
  ],
);
