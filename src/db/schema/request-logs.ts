import { sql } from "drizzle-orm";
import { boolean, index, pgTable, real, smallint, text, uuid } from "drizzle-orm/pg-core";
import { serialPrimaryKey, timestampMs } from "./columns.ts";

/**
 * Every answered request to the client API, the provider callbacks and the admin API (src/request-logs/): what
 * was sent and what was answered, for support staff and for the client itself. Written in batches by the process
 * that answered, a moment after the answer; ids are given in the order batches commit (one writer at a time), so
 * a live tail reading `id > last` never misses one. Secrets are never stored; destinations are masked as in
 * answers. Kept RETENTION_REQUEST_LOGS_DAYS days.
 */
export const requestLogs = pgTable(
  "request_logs",
  {
    id: serialPrimaryKey(),
    /** When the request arrived (the database's clock, less the time it waited in the buffer). */
    createdAt: timestampMs("created_at").notNull(),
    requestId: text("request_id").notNull(),
    accountId: uuid("account_id"),
    mode: text({ enum: ["test", "live"] }),
    keyId: uuid("key_id"),
    keyPrefix: text("key_prefix"),
    operator: text(),
    method: text().notNull(),
    route: text().notNull(),
    path: text().notNull(),
    query: text(),
    status: smallint().notNull(),
    errorCode: text("error_code"),
    idempotencyKey: text("idempotency_key"),
    idempotentReplayed: boolean("idempotent_replayed").notNull().default(false),
    durationMs: real("duration_ms").notNull(),
    clientIp: text("client_ip"),
    userAgent: text("user_agent"),
    requestBody: text("request_body"),
    requestBodyTruncated: boolean("request_body_truncated").notNull().default(false),
    responseBody: text("response_body"),
    responseBodyTruncated: boolean("response_body_truncated").notNull().default(false),
  },
  (t) => [
    // A key's own records, newest first (the client list and stream).
    index("request_logs_scope_idx").on(t.accountId, t.mode, t.id.desc()).where(sql`${t.accountId} is not null`),
    // One request by its id.
    index("request_logs_request_id_idx").on(t.requestId),
    // Retention and time ranges: rows are written in time order, so a BRIN summary is enough and costs
    // almost nothing to keep.
    index("request_logs_created_brin_idx").using("brin", t.createdAt),
  ],
);
