import { sql } from "drizzle-orm";
import { check, index, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { accounts } from "./accounts.ts";
import { timestampMs } from "./columns.ts";

export const apiKeys = pgTable(
  "api_keys",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    accountId: uuid("account_id")
      .notNull()
      .references(() => accounts.id),
    mode: text("mode", { enum: ["test", "live"] }).notNull(),
    keyHash: text("key_hash").notNull(),
    prefix: text("prefix").notNull(),
    createdAt: timestampMs("created_at").notNull().default(sql`now()`),
    revokedAt: timestampMs("revoked_at"),
  },
  (t) => [
    uniqueIndex("api_keys_hash_idx").on(t.keyHash),
    index("api_keys_account_idx").on(t.accountId),
    check("api_keys_mode_check", sql`${t.mode} in ('test', 'live')`),
  ],
);
