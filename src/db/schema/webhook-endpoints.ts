import { index, pgTable, text } from "drizzle-orm/pg-core";
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
    ...createdAt(),
    deletedAt: timestampMs("deleted_at"),
  },
  (t) => [index("webhook_endpoints_account_idx").on(t.accountId, t.mode)],
);
