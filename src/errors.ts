import type { components } from "../generated/openapi-types.ts";

export type ErrorCode = components["schemas"]["ErrorCode"];
export type FieldError = components["schemas"]["ValidationError"];

const statusByCode: Record<ErrorCode, number> = {
  VALIDATION_FAILED: 400,
  UNAUTHENTICATED: 401,
  WALLET_INSUFFICIENT_FUNDS: 402,
  TEST_MODE_ONLY: 403,
  FORBIDDEN: 403,
  IP_NOT_ALLOWED: 403,
  NOT_FOUND: 404,
  CUSTOMER_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  IDEMPOTENCY_IN_PROGRESS: 409,
  CALLBACK_CONFLICT: 409,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  PROVIDER_ERROR: 502,
  SERVICE_UNAVAILABLE: 503,
  NO_ROUTE: 503,
};

export function httpStatusOf(code: ErrorCode): number {
  return statusByCode[code];
}

/** The one error type services throw; the HTTP layer maps it to the envelope. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly data: Record<string, unknown> | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  get status(): number {
    return httpStatusOf(this.code);
  }
}

export function validationError(errors: FieldError[], message = "Request validation failed"): AppError {
  return new AppError("VALIDATION_FAILED", message, { errors });
}

export function notFound(what = "Resource"): AppError {
  return new AppError("NOT_FOUND", `${what} not found`);
}

/** The first of `rows`, or `404 NOT_FOUND` naming `what` when there is none. */
export async function firstOrNotFound<T>(rows: PromiseLike<T[]>, what: string): Promise<T> {
  const [row] = await rows;
  if (row === undefined) throw notFound(what);
  return row;
}

export interface Envelope<T> {
  success: boolean;
  code: string;
  message: string;
  data: T;
}

export function successEnvelope<T>(data: T, message = "OK"): Envelope<T> {
  return { success: true, code: "OK", message, data };
}

export function errorEnvelope(error: AppError): Envelope<Record<string, unknown> | null> {
  return { success: false, code: error.code, message: error.message, data: error.data };
}
