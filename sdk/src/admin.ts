export { VendAdmin, type VendAdminOptions } from "./admin/admin-client.js";
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
export type { CallOptions, IdempotentCallOptions } from "./core/options.js";
export { type Page, PageList } from "./core/paging.js";
export type * from "./generated/admin/types.gen.js";
