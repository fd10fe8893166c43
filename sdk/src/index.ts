export { VendClient, type VendClientOptions } from "./client.js";
export {
  APIError,
  AuthenticationError,
  ConflictError,
  ConnectionError,
  type FieldError,
  InsufficientFundsError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ServiceUnavailableError,
  ValidationError,
  VendError,
  WebhookVerificationError,
} from "./core/errors.js";
export type { StreamOptions } from "./core/event-stream.js";
export type { CallOptions, IdempotentCallOptions, WaitOptions } from "./core/options.js";
export { type Page, PageList } from "./core/paging.js";
export type { ConnectionOptions } from "./core/requester.js";
export {
  type ConstructEventOptions,
  constructEvent,
  type VendWebhookEvent,
  type WebhookHeaders,
  type WebhookPayload,
} from "./core/webhook-signature.js";
export type * from "./generated/client/types.gen.js";
export { isFinal, type WaitForOptions } from "./resources/transactions.js";
export type { VendOptions } from "./resources/vends.js";
