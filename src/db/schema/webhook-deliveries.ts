import { sql } from "drizzle-orm";
import { index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { eventDeliveryStatuses } from "../../../generated/constants.ts";
import { createdAndUpdatedAt, timestampMs, uuidPrimaryKey, uuidReference } from "./columns.ts";
import { webhookEndpoints } from "./webhook-endpoints.ts";

export const webhookDeliveries = pgTable(
  "webhook_deliveries",
  {
    id: uuidPrimaryKey(),
    /** An event's id; no foreign key (events may be partitioned): written from the event row in the same statement. */
    eventId: text("event_id").notNull(),
    endpointId: uuidReference("endpoint_id", () => webhookEndpoints.id),
    status: text({ enum: eventDeliveryStatuses }).notNull(),
    attempts: integer().notNull().default(0),
    nextAttemptAt: timestampMs("next_attempt_at"),
    leaseExpiresAt: timestampMs("lease_expires_at"),
    lastStatusCode: integer("last_status_code"),
    lastError: text("last_error"),
    ...createdAndUpdatedAt(),
  },
  (t) => [
    uniqueIndex("webhook_deliveries_event_endpoint_idx").on(t.eventId, t.endpointId),
    index("webhook_deliveries_due_idx").on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
    // Retention: final deliveries by status, the longest final first.
    index("webhook_deliveries_retention_idx").on(t.status, t.updatedAt).where(sql`${t.status} <> 'pending'`),
  ],
);
