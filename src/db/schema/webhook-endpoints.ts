import { sql } from "drizzle-orm";
import { index, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { accounts } from "./accounts.ts";
import { timestampMs } from "./columns.ts";

export const webhookEndpoints = pgTable(
  "webhook_endpoints",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    accountId: uuid("account_id")
      .notNull()
      .references(() => accounts.id),
    mode: text("mode", { enum: ["test", "live"] }).notNull(),
    url: text("url").notNull(),
    description: text("description"),
    secret: text("secret").notNull(),
    createdAt: timestampMs("created_at").notNull().default(sql`now()`),
    deletedAt: timestampMs("deleted_at"),
  },
  (t) => [index("webhook_endpoints_account_idx").on(t.accountId, t.mode)],
);
