import type { components } from "../../generated/openapi-types.ts";
import type { requestLogs } from "../db/schema/index.ts";

export type RequestLog = components["schemas"]["RequestLog"];
export type RequestLogDetail = components["schemas"]["RequestLogDetail"];
export type RequestLogRow = typeof requestLogs.$inferSelect;
/** A record as listed and streamed: every column but the bodies (never read for a listing). */
export type ListedLogRow = Omit<RequestLogRow, "requestBody" | "requestBodyTruncated" | "responseBody" | "responseBodyTruncated">;

/** A record as the contract's RequestLog: what a listing and a stream show (no bodies). */
export function presentRequestLog(row: ListedLogRow): RequestLog {
  return {
    id: String(row.id),
    request_id: row.requestId,
    created_at: row.createdAt.toISOString(),
    account_id: row.accountId,
    mode: row.mode,
    key_id: row.keyId,
    key_prefix: row.keyPrefix,
    operator: row.operator,
    method: row.method,
    route: row.route,
    path: row.path,
    query: row.query,
    status: row.status,
    error_code: row.errorCode,
    idempotency_key: row.idempotencyKey,
    idempotent_replayed: row.idempotentReplayed,
    duration_ms: row.durationMs,
    client_ip: row.clientIp,
    user_agent: row.userAgent,
  };
}

/** A record with its bodies, as stored (redacted and cut when written). */
export function presentRequestLogDetail(row: RequestLogRow): RequestLogDetail {
  return {
    ...presentRequestLog(row),
    request_body: row.requestBody,
    request_body_truncated: row.requestBodyTruncated,
    response_body: row.responseBody,
    response_body_truncated: row.responseBodyTruncated,
  };
}
