import { AppError, errorEnvelope } from "../errors.ts";
import type { Logger } from "../logger.ts";
import { contextOf } from "./context.ts";

export function jsonResponse(request: Request, status: number, body: string, headers: Record<string, string> = {}): Response {
  return new Response(body, {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "x-request-id": contextOf(request).id, ...headers },
  });
}

const unavailableCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECTION_CLOSED",
  "CONNECT_TIMEOUT",
  "57P01",
  "57P03",
  "53300",
]);

/** True for errors that mean the database cannot be reached (driver errors may sit in a `cause` chain). */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const { code, message, cause } = current as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof code === "string" && (unavailableCodes.has(code) || code.startsWith("08"))) return true;
    if (typeof message === "string" && /PGlite is closed|database system is (shutting down|starting up)/i.test(message))
      return true;
    current = cause;
  }
  return false;
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
        err: error instanceof Error ? { message: error.message, stack: error.stack } : String(error),
      },
      "unhandled error",
    );
    appError = new AppError("INTERNAL_ERROR", `Internal error; quote request id ${context.id} to support`);
  }
  return jsonResponse(request, appError.status, JSON.stringify(errorEnvelope(appError)), appError.headers);
}

export function logResponse(logger: Logger, request: Request, response: Response, route?: string): void {
  const context = contextOf(request);
  logger.info(
    {
      request_id: context.id,
      method: request.method,
      route: route ?? new URL(request.url).pathname,
      operation: context.operationId,
      account_id: context.accountId,
      status: response.status,
      duration_ms: Math.round((performance.now() - context.startedAt) * 10) / 10,
    },
    "request",
  );
}
