import { sql } from "drizzle-orm";
import { index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { timestampMs } from "./columns.ts";

/** Scope is `account:<id>:<mode>` or `admin`; with method, path and key it is unique. */
export const idempotencyRecords = pgTable(
  "idempotency_records",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    scope: text("scope").notNull(),
    method: text("method").notNull(),
    path: text("path").notNull(),
    key: text("key").notNull(),
    fingerprint: text("fingerprint").notNull(),
    state: text("state", { enum: ["in_progress", "completed"] }).notNull(),
    responseStatus: integer("response_status"),
    responseBody: text("response_body"),
    responseHeaders: jsonb("response_headers").$type<Record<string, string>>(),
    lockedUntil: timestampMs("locked_until"),
    createdAt: timestampMs("created_at").notNull().default(sql`now()`),
    expiresAt: timestampMs("expires_at").notNull(),
  },
  (t) => [
    uniqueIndex("idempotency_scope_idx").on(t.scope, t.method, t.path, t.key),
    index("idempotency_expiry_idx").on(t.expiresAt),
  ],
);
