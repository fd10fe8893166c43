import { isDatabaseUnavailable } from "../db/unavailable.ts";
import { AppError, errorEnvelope } from "../errors.ts";
import type { RequestRecorder } from "../lib/answered-request.ts";
import { type Logger, logAccess } from "../logger.ts";
import { contextOf } from "./context.ts";

export function jsonResponse(request: Request, status: number, body: string, headers: Record<string, string> = {}): Response {
  const context = contextOf(request);
  // Kept as sent for the request log (redacted and cut only when the log is written, after the answer).
  context.responseBody = body;
  return new Response(body, {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "x-request-id": context.id, ...headers },
  });
}

/** The one place an error becomes an HTTP answer; anything not an AppError is a logged 500. */
export function errorResponse(request: Request, error: unknown, logger: Logger): Response {
  const context = contextOf(request);
  let appError: AppError;
  if (error instanceof AppError) {
    appError = error;
  } else if (isDatabaseUnavailable(error)) {
    logger.error({ request_id: context.id, operation: context.operationId }, "database unavailable");
    appError = new AppError("SERVICE_UNAVAILABLE", "The service is temporarily unavailable; retry shortly", null, {
      "retry-after": "5",
    });
  } else {
    logger.error(
      {
        request_id: context.id,
        operation: context.operationId,
        err: error,
      },
      "unhandled error",
    );
    appError = new AppError("INTERNAL_ERROR", `Internal error; quote request id ${context.id} to support`);
  }
  context.errorCode = appError.code;
  return jsonResponse(request, appError.status, JSON.stringify(errorEnvelope(appError)), appError.headers);
}

/** Where each answer is counted: the operation (or `(unmatched)`), its status and its duration. */
export interface AnswerCounter {
  httpAnswered(operation: string, status: number, seconds: number): void;
}

/**
 * The access line of one request, its count in the metrics, and (unless `recorded` is false) its record in the
 * request log. The access line holds no field that could hold a key, a body value or a destination; the record
 * is handed over raw and redacted when it is written, off the request path (src/request-logs/).
 */
export function logResponse(
  deps: { logger: Logger; metrics: AnswerCounter; requestLogs: RequestRecorder },
  request: Request,
  response: Response,
  route: string,
  recorded = true,
): void {
  const { logger } = deps;
  const context = contextOf(request);
  const elapsedMs = performance.now() - context.startedAt;
  deps.metrics.httpAnswered(context.operationId ?? "(unmatched)", response.status, elapsedMs / 1000);
  if (recorded && deps.requestLogs.enabled) {
    deps.requestLogs.record({
      arrivedAt: performance.timeOrigin + context.startedAt,
      requestId: context.id,
      accountId: context.accountId,
      mode: context.mode,
      keyId: context.keyId,
      keyPrefix: context.keyPrefix,
      operator: context.operator,
      method: request.method,
      route,
      url: request.url,
      status: response.status,
      errorCode: context.errorCode,
      idempotencyKey: request.headers.get("idempotency-key"),
      idempotentReplayed: context.idempotentReplayed === true,
      durationMs: elapsedMs,
      clientIp: context.ip,
      userAgent: request.headers.get("user-agent"),
      requestBody: context.requestBody,
      responseBody: context.responseBody,
    });
  }
  if (!logger.isLevelEnabled("info")) return;
  logAccess(logger, {
    request_id: context.id,
    method: request.method,
    route,
    operation: context.operationId,
    account_id: context.accountId,
    operator: context.operator,
    status: response.status,
    duration_ms: Math.round(elapsedMs * 10) / 10,
  });
}
