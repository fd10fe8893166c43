import type { CredentialRegistry } from "./auth/credential-registry.ts";
import type { AuthGuard } from "./auth/guard.ts";
import type { KeyUsageRecorder } from "./auth/key-usage.ts";
import type { RegistrySync } from "./auth/registry-sync.ts";
import type { Config } from "./config.ts";
import type { Database, DbHandle } from "./db/client.ts";
import type { ReadRouter } from "./db/replica.ts";
import type { Executor } from "./db/transaction.ts";
import type { RunIdempotent } from "./http/idempotent.ts";
import type { AdminAction, Authenticate } from "./http/operations.ts";
import type { RateLimiter, RateLimitStatus } from "./http/rate-limit.ts";
import type { ApiSpec } from "./http/spec.ts";
import type { OperationValidators } from "./http/validation.ts";
import type { CursorCodec } from "./lib/cursor.ts";
import type { Logger } from "./logger.ts";
import type { Metrics } from "./metrics/metrics.ts";
import type { AcceptLanes } from "./orders/accept-lanes.ts";
import type { AccountPlanCache, PricePlanCache } from "./orders/plan-pricing.ts";
import type { ProductCache } from "./orders/product-cache.ts";
import type { FinalityWaiters } from "./orders/waiters.ts";
import type { CallbackProviders } from "./providers/callback-providers.ts";
import type { Providers } from "./providers/registry.ts";
import type { RequestLogRecorder } from "./request-logs/recorder.ts";
import type { RequestLogStreams } from "./request-logs/stream.ts";
import type { Tracing } from "./tracing/tracing.ts";

/**
 * Hot-path lookups every vend makes, per process. Entries live briefly and are evicted in every process
 * on one database by NOTIFY when an operator changes them (src/lib/caches.ts).
 */
export interface Caches {
  products: ProductCache;
  /** Price plans with their discounts, by name. */
  pricePlans: PricePlanCache;
  /** Each account's price plan name, by account id. */
  accountPlans: AccountPlanCache;
}

/** Everything the app and its services need, built once by main.ts or a test. */
export interface AppDeps {
  config: Config;
  database: DbHandle;
  db: Database;
  /**
   * Operator reads and the catalogue: on the read replica while it keeps up (DATABASE_READ_URL), else on
   * the primary. A client's own reads, which may follow its writes, use `db`.
   */
  reads: ReadRouter;
  logger: Logger;
  /** This process's Prometheus registry and the recorders that feed it. */
  metrics: Metrics;
  spec: ApiSpec;
  validators: Map<string, OperationValidators>;
  /** Requests per API key per window, shared by every process on the database. */
  rateLimiter: RateLimiter;
  /** A client address's failure budget, for the RateLimit headers of answers to requests without a usable key. */
  clientBudget(client: string): RateLimitStatus | undefined;
  /** Failed-authentication budget per client address and the memory of unknown keys. */
  authGuard: AuthGuard;
  /** Writes each key's `last_used_at`, at most once a minute, beside the requests. */
  keyUsage: KeyUsageRecorder;
  /**
   * Set by an embedded `npm start`: the secret it wrote to its data directory, accepted as the admin
   * bearer (`local-bootstrap`) from a loopback peer only, so operator tools work beside the running server.
   */
  localAdminSecret?: string;
  /** Every usable API key and operator token, by hash, kept current by NOTIFY (src/auth/credential-registry.ts). */
  credentials: CredentialRegistry;
  /** Keeps `credentials` current; stopped on shutdown. */
  credentialSync: RegistrySync;
  /** Authentication as the http layer runs it before each operation. */
  authenticate: Authenticate;
  /** Writes the audit entry of an admin change, on the change's own transaction. */
  recordAdminAction(db: Executor, action: AdminAction): Promise<void>;
  /** The Idempotency-Key protocol, as the http layer runs it for idempotent operations. */
  runIdempotent: RunIdempotent;
  cursors: CursorCodec;
  caches: Caches;
  providers: Providers;
  callbackProviders: CallbackProviders;
  waiters: FinalityWaiters;
  /** Records each API request a moment after its answer, in batches (src/request-logs/recorder.ts); stopped after the drain. */
  requestLogs: RequestLogRecorder;
  /** This process's live request-log streams: one LISTEN, one reader, fanned out (src/request-logs/stream.ts). */
  requestLogStreams: RequestLogStreams;
  /** The accept statements' lanes: one statement in flight per lane, the accepts that arrive meanwhile in its next. */
  acceptLanes: AcceptLanes;
  /** Tells workers (debounced NOTIFY) that new work was accepted. */
  announceWork(): void;
  /** Spans for requests, jobs and outgoing calls; a no-op unless an OTLP endpoint is configured. */
  tracing: Tracing;
}
