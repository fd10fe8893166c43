import { boolean, index, pgTable, text } from "drizzle-orm/pg-core";
import { accountAndMode } from "./accounts.ts";
import { createdAt, timestampMs, uuidPrimaryKey } from "./columns.ts";

export const webhookEndpoints = pgTable(
  "webhook_endpoints",
  {
    id: uuidPrimaryKey(),
    ...accountAndMode(),
    url: text().notNull(),
    description: text(),
    secret: text().notNull(),
    /** The secret before the last rotation; it also signs until `previous_secret_expires_at`. */
    previousSecret: text("previous_secret"),
    previousSecretExpiresAt: timestampMs("previous_secret_expires_at"),
    /** Event types delivered here; null: every type. */
    eventTypes: text("event_types").array(),
    enabled: boolean().notNull().default(true),
    /** Why the endpoint was disabled (by its owner, or automatically after failing every delivery). */
    disabledReason: text("disabled_reason"),
    disabledAt: timestampMs("disabled_at"),
    /** Start of the current run of failed delivery attempts with no success; null after a success. */
    failingSince: timestampMs("failing_since"),
    ...createdAt(),
    updatedAt: timestampMs("updated_at"),
    deletedAt: timestampMs("deleted_at"),
  },
  (t) => [index("webhook_endpoints_account_idx").on(t.accountId, t.mode)],
);
