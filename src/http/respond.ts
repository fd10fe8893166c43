import { AppError, errorEnvelope } from "../errors.ts";
import { type Logger, logAccess } from "../logger.ts";
import { contextOf } from "./context.ts";

export function jsonResponse(request: Request, status: number, body: string, headers: Record<string, string> = {}): Response {
  return new Response(body, {
    status,
    headers: { "content-type": "application/json; charset=utf-8", "x-request-id": contextOf(request).id, ...headers },
  });
}

/**
 * Driver and socket codes plus SQLSTATEs that mean "the database cannot serve this now" rather than a
 * bug: connection failures, a statement cut by statement_timeout (57014), a session ended for idling in
 * a transaction (25P03), the embedded engine stopped after a storage failure (DATABASE_UNAVAILABLE).
 * Whole classes: 08 connection exception, 53 insufficient resources (disk full 53100, out of memory,
 * too many connections), 58 system errors (I/O errors on the data files).
 */
const unavailableCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECTION_CLOSED",
  "CONNECT_TIMEOUT",
  "DATABASE_UNAVAILABLE",
  "57P01",
  "57P02",
  "57P03",
  "57014",
  "25P03",
]);
const unavailableClasses = ["08", "53", "58"];

/** True for errors that mean the database cannot be reached (driver errors may sit in a `cause` chain). */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && depth < 5; depth++) {
    const { code, message, cause, severity } = current as {
      code?: unknown;
      message?: unknown;
      cause?: unknown;
      severity?: unknown;
    };
    if (typeof code === "string" && (unavailableCodes.has(code) || unavailableClasses.includes(code.slice(0, 2)))) return true;
    // PANIC: the server gave up on a storage failure. A file it may not open (42501 "could not open file")
    // is a data directory that became unwritable, not a privilege the application lacks.
    if (severity === "PANIC") return true;
    if (code === "42501" && typeof message === "string" && /^could not \w+ (file|directory)/.test(message)) return true;
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
