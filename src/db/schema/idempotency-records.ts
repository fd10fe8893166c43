import { index, integer, pgTable, text, uniqueIndex } from "drizzle-orm/pg-core";
import { createdAt, timestampMs, uuidPrimaryKey } from "./columns.ts";

/**
 * A completed idempotent request. Written in the same database transaction as the work it
 * records, so it is never seen half-done; a concurrent duplicate is held off by an advisory lock.
 * Scope is `account:<id>:<mode>` or `admin`; with method, path and key it is unique.
 */
export const idempotencyRecords = pgTable(
  "idempotency_records",
  {
    id: uuidPrimaryKey(),
    scope: text().notNull(),
    method: text().notNull(),
    path: text().notNull(),
    key: text().notNull(),
    fingerprint: text().notNull(),
    responseStatus: integer("response_status").notNull(),
    responseBody: text("response_body").notNull(),
    ...createdAt(),
    expiresAt: timestampMs("expires_at").notNull(),
  },
  (t) => [
    uniqueIndex("idempotency_scope_idx").on(t.scope, t.method, t.path, t.key),
    index("idempotency_expiry_idx").on(t.expiresAt),
  ],
);
