import { index, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";
import { createdAt, timestampMs } from "./columns.ts";

/**
 * A completed idempotent request. Written in the same database transaction as the work it
 * records, so it is never seen half-done; a concurrent duplicate is held off by an advisory lock.
 * Scope is `account:<id>:<mode>` or `admin`; with method, path and key it is the primary key.
 */
export const idempotencyRecords = pgTable(
  "idempotency_records",
  {
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
    // The key is the row's identity: one index to write per accept, not a surrogate id's as well.
    primaryKey({ name: "idempotency_scope_idx", columns: [t.scope, t.method, t.path, t.key] }),
    // Rows arrive in expiry order, so a block-range index finds the expired ones for almost no write cost.
    index("idempotency_expiry_idx").using("brin", t.expiresAt),
  ],
);
