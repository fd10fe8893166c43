import { isDatabaseUnavailable } from "../db/unavailable.ts";
import { AppError, errorEnvelope } from "../errors.ts";
import { type Logger, logAccess } from "../logger.ts";
import { contextOf } from "./context.ts";

export function jsonResponse(request: Request, status: number, body: string, headers: Record<string, string> = {}): Response {
  return new Response(body, {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "x-request-id": contextOf(request).id, ...headers },
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
  return jsonResponse(request, appError.status, JSON.stringify(errorEnvelope(appError)), appError.headers);
}

/** Where each answer is counted: the operation (or `(unmatched)`), its status and its duration. */
export interface AnswerCounter {
  httpAnswered(operation: string, status: number, seconds: number): void;
}

/** The access line of one request, and its count in the metrics: add no field that could hold a key, a body value or a destination. */
export function logResponse(
  deps: { logger: Logger; metrics: AnswerCounter },
  request: Request,
  response: Response,
  route: string,
): void {
  const { logger } = deps;
  const context = contextOf(request);
  deps.metrics.httpAnswered(
    context.operationId ?? "(unmatched)",
    response.status,
    (performance.now() - context.startedAt) / 1000,
  );
  if (!logger.isLevelEnabled("info")) return;
  logAccess(logger, {
    request_id: context.id,
    method: request.method,
    route,
    operation: context.operationId,
    account_id: context.accountId,
    operator: context.operator,
    status: response.status,
    duration_ms: Math.round((performance.now() - context.startedAt) * 10) / 10,
  });
}
