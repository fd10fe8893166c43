import type { ErrorCode, ValidationError as FieldError } from "../generated/client/types.gen.js";

export type { FieldError };

export interface VendErrorFields {
  /** The envelope's `code` (`ErrorCode`), or the SDK's own: `CONNECTION_ERROR`, `WEBHOOK_VERIFICATION_FAILED`, `HTTP_<status>`. */
  code: ErrorCode | (string & {});
  /** The HTTP status; null when no answer arrived. */
  status: number | null;
  message: string;
  /** The `X-Request-Id` of the answer: quote it to support. */
  requestId: string | null;
  /** The `Idempotency-Key` the request carried: send the same request with it to retry safely. */
  idempotencyKey: string | null;
  /** The answer's body as received (the error envelope, or text). */
  raw: unknown;
  headers: Headers | null;
  cause?: unknown;
}

/** Every error the SDK throws. */
export class VendError extends Error {
  readonly code: VendErrorFields["code"];
  readonly status: number | null;
  readonly requestId: string | null;
  readonly idempotencyKey: string | null;
  readonly raw: unknown;
  readonly headers: Headers | null;

  constructor(fields: VendErrorFields) {
    super(fields.message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = new.target.name;
    this.code = fields.code;
    this.status = fields.status;
    this.requestId = fields.requestId;
    this.idempotencyKey = fields.idempotencyKey;
    this.raw = fields.raw;
    this.headers = fields.headers;
  }
}

/** `400` (the request is invalid; `fieldErrors` names each problem) or `422` (`IDEMPOTENCY_KEY_REUSED`). */
export class ValidationError extends VendError {
  get fieldErrors(): FieldError[] {
    const data = isRecord(this.raw) && isRecord(this.raw.data) ? this.raw.data : undefined;
    return Array.isArray(data?.errors) ? (data.errors as FieldError[]) : [];
  }
}
/** `401`: the API key or token is missing, unknown, revoked or expired. */
export class AuthenticationError extends VendError {}
/** `403`: the key may not do this (`TEST_MODE_ONLY`, `IP_NOT_ALLOWED`, `FORBIDDEN`). */
export class PermissionError extends VendError {}
/** `402 WALLET_INSUFFICIENT_FUNDS`: fund the wallet, then vend again with a new idempotency key. */
export class InsufficientFundsError extends VendError {}
/** `404`: no such resource for this account and mode (`NOT_FOUND`, `CUSTOMER_NOT_FOUND`). */
export class NotFoundError extends VendError {}
/** `409`: `CONFLICT`, or `IDEMPOTENCY_IN_PROGRESS` still after every retry. */
export class ConflictError extends VendError {}
/** `429 RATE_LIMITED`, still after every retry. */
export class RateLimitError extends VendError {
  /** Seconds the server asked to wait (`Retry-After`), when it said. */
  get retryAfter(): number | null {
    return retryAfterSeconds(this.headers?.get("retry-after") ?? null);
  }
}
/** `503` (`SERVICE_UNAVAILABLE`, `NO_ROUTE`), still after every retry. */
export class ServiceUnavailableError extends VendError {}
/** Any other answer that is not a success (`500`, `502`, `413`, …). */
export class APIError extends VendError {}
/** No answer: the connection failed or the request timed out, still after every retry. */
export class ConnectionError extends VendError {}
/** A webhook whose signature, timestamp or headers do not verify. */
export class WebhookVerificationError extends VendError {}

const errorClassByStatus: Record<number, typeof VendError> = {
  400: ValidationError,
  401: AuthenticationError,
  402: InsufficientFundsError,
  403: PermissionError,
  404: NotFoundError,
  409: ConflictError,
  422: ValidationError,
  429: RateLimitError,
  503: ServiceUnavailableError,
};

/** The error for an answer that is not a success, from its status, body (parsed envelope or text) and headers. */
export function errorFromResponse(status: number, body: unknown, headers: Headers, idempotencyKey: string | null): VendError {
  const envelope = isRecord(body) ? body : {};
  const code = typeof envelope.code === "string" ? envelope.code : `HTTP_${status}`;
  const message = typeof envelope.message === "string" ? envelope.message : `HTTP ${status}`;
  const ErrorClass = errorClassByStatus[status] ?? APIError;
  return new ErrorClass({ code, status, message, requestId: headers.get("x-request-id"), idempotencyKey, raw: body, headers });
}

/** `Retry-After` as seconds: a number of seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === "") return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const at = Date.parse(value);
  return Number.isFinite(at) ? Math.max(0, (at - now) / 1000) : null;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
