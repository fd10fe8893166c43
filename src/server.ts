import { recordAudit } from "./admin/audit-trail.ts";
import { buildApp } from "./app.ts";
import { AuthGuard, throttleSubject } from "./auth/guard.ts";
import { KeyUsageRecorder } from "./auth/key-usage.ts";
import { idleRegistry, startRegistrySync } from "./auth/registry-sync.ts";
import { createAuthenticate } from "./auth/resolve-principal.ts";
import type { Config } from "./config.ts";
import { workChannel } from "./db/channels.ts";
import { type Database, type DbHandle, openDatabase } from "./db/client.ts";
import { primaryReads, type ReadRouter, startReplicaRouter } from "./db/replica.ts";
import { getOrCreateSetting } from "./db/settings.ts";
import type { AppDeps, Caches } from "./deps.ts";
import { AppError } from "./errors.ts";
import { recordClientAddress } from "./http/context.ts";
import type { RunIdempotent } from "./http/idempotent.ts";
import { RateLimiter } from "./http/rate-limit.ts";
import { traceRequest } from "./http/request-span.ts";
import { errorResponse, jsonResponse } from "./http/respond.ts";
import { loadSpec } from "./http/spec.ts";
import { compileValidators } from "./http/validation.ts";
import { runIdempotent } from "./idempotency/protocol.ts";
import { subscribeCacheEviction } from "./lib/caches.ts";
import { CursorCodec } from "./lib/cursor.ts";
import { randomBase62 } from "./lib/random.ts";
import { routableRequest } from "./lib/routable-request.ts";
import { TtlCache } from "./lib/ttl-cache.ts";
import type { Logger } from "./logger.ts";
import { createMetrics, type Metrics } from "./metrics/metrics.ts";
import { acceptLanes } from "./orders/accept-lanes.ts";
import { FinalityWaiters } from "./orders/waiters.ts";
import { callbackProviders } from "./providers/callback-providers.ts";
import { checkRoutingAgainstCatalogue } from "./providers/catalogue-check.ts";
import { createProviders } from "./providers/registry.ts";
import type { ProviderAdapter } from "./providers/types.ts";
import { type RecorderDeps, RequestLogRecorder } from "./request-logs/recorder.ts";
import { configuredSecrets } from "./request-logs/redact.ts";
import { keepAliveMsFor, RequestLogStreams } from "./request-logs/stream.ts";
import { createTracing, type SpanExporter } from "./tracing/tracing.ts";

/** At most one NOTIFY per interval, however many vends are accepted. */
function debouncedNotify(database: DbHandle, channel: string, logger: Logger, intervalMs = 20): () => void {
  let scheduled = false;
  return () => {
    if (scheduled) return;
    scheduled = true;
    setTimeout(() => {
      scheduled = false;
      database.notify(channel, "").catch((error) => logger.warn({ err: String(error) }, "work notify failed"));
    }, intervalMs);
  };
}

/** The replica's pool when DATABASE_READ_URL is set and this process serves the API; else reads on the primary. */
async function openReads(
  config: Config,
  primary: () => Database,
  metrics: Metrics,
  logger: Logger,
  servesApi: boolean,
): Promise<ReadRouter> {
  const events = {
    onRead: (target: "primary" | "replica") => metrics.readServed(target),
    onLag: (lagMs: number | undefined) => metrics.replicaLagSampled(lagMs),
    onReplicaFailure: (error: unknown) => logger.warn({ err: String(error) }, "read replica failed; reading the primary"),
  };
  if (!config.readReplica || !servesApi) return primaryReads(primary, events);
  const replica = await openDatabase({
    databaseUrl: config.readReplica.url,
    maxConnections: config.databasePoolSize,
    connectTimeoutSeconds: config.databaseConnectTimeoutSeconds,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
  });
  return startReplicaRouter({ primary, replica, maxLagMs: config.readReplica.maxLagMs, events });
}

/**
 * Wires the dependencies once: spec and validators compiled, instance secrets resolved, providers
 * (every configured provider plugin; `liveProviders` from a test stand in for the configured live ones),
 * tracing (a test's `spanExporter` takes the spans instead of the OTLP endpoint).
 */
export async function createDeps(
  config: Config,
  database: DbHandle,
  logger: Logger,
  liveProviders?: ProviderAdapter[],
  spanExporter?: SpanExporter,
  options: { servesApi?: boolean } = {},
): Promise<AppDeps> {
  await checkRoutingAgainstCatalogue(database.db, config.routing);
  const spec = loadSpec();
  const cursorSecret = config.cursorSecret ?? (await getOrCreateSetting(database.db, "cursor_secret", () => randomBase62(48)));
  const caches: Caches = {
    products: new TtlCache(30_000),
    pricePlans: new TtlCache(30_000),
    accountPlans: new TtlCache(30_000, 100_000),
  };
  await subscribeCacheEviction(database, caches, logger);
  // Until `deps` exists the handle's database is the one; from then on whatever `deps.db` is (a test may swap it).
  let credentialsDb = () => database.db;
  // A worker-only process authenticates nobody: it keeps no registry current (no LISTEN connection, no heartbeats).
  const credentialSync =
    options.servesApi === false
      ? idleRegistry(config.keyPropagationMs)
      : await startRegistrySync(database, () => credentialsDb(), config.keyPropagationMs, logger);
  const authGuard = new AuthGuard(config.authFailuresPerMinute);
  const providers = createProviders(database.db, config, logger, liveProviders);
  await providers.health.refresh();
  await providers.health.start(database);
  const metrics = createMetrics({
    database,
    stuckAfterMinutes: config.operations.stuckAfterMinutes,
    processMetrics: config.operations.metricsEnabled,
  });
  // Like `credentialsDb`: the handle's database until `deps` exists, then whatever `deps.db` is.
  let readsPrimary = () => database.db;
  const reads = await openReads(config, () => readsPrimary(), metrics, logger, options.servesApi !== false);
  // Secrets no pattern catches, replaced wherever they turn up in a recorded request; the local admin secret is set
  // once the server listens. The recorder reads the database and the logger at each use (a test may swap them).
  const secrets = configuredSecrets(config);
  let withLocalSecret: string[] = secrets;
  const recorderDeps: RecorderDeps = {
    get db() {
      return deps.db;
    },
    get logger() {
      return deps.logger;
    },
    metrics,
    secrets: () => {
      const local = deps.localAdminSecret;
      if (local && withLocalSecret.at(-1) !== local) withLocalSecret = [...secrets, local];
      return local ? withLocalSecret : secrets;
    },
    clientSubject: throttleSubject,
  };
  const deps: Omit<AppDeps, "authenticate" | "runIdempotent" | "recordAdminAction"> = {
    config,
    database,
    db: database.db,
    reads,
    logger,
    metrics,
    spec,
    validators: compileValidators(spec),
    rateLimiter: new RateLimiter({
      perMinute: config.rateLimitPerMinute,
      maxBlock: config.rateLimitMaxBlock || undefined,
      db: () => deps.db,
      logger: () => deps.logger,
    }),
    authGuard,
    credentials: credentialSync.registry,
    credentialSync,
    clientBudget: (client) => authGuard.status(client),
    keyUsage: new KeyUsageRecorder(),
    cursors: new CursorCodec(cursorSecret),
    caches,
    providers,
    callbackProviders: callbackProviders(config),
    waiters: await FinalityWaiters.start(database),
    // Reads `deps` at each use, like the waiters' callers: a test that swaps the database swaps it here too. The
    // keep-alive fits the listener's idle timeout (listenFirst: REQUEST_TIMEOUT_SECONDS + 10, at most 255).
    requestLogStreams: new RequestLogStreams(
      database,
      () => deps.db,
      () => deps.logger,
      {
        keepAliveMs: keepAliveMsFor(Math.min(255, config.requestTimeoutSeconds + 10)),
        checkMs: 1000,
      },
    ),
    // Reads `deps` at each batch (a test may swap the database or the logger); the local admin secret is set later.
    requestLogs: new RequestLogRecorder(() => recorderDeps, config.requestLogs),
    acceptLanes: acceptLanes(() => deps.db, config.databasePoolSize),
    announceWork: debouncedNotify(database, workChannel, logger),
    tracing: createTracing(config.operations, spanExporter),
  };
  credentialsDb = () => deps.db;
  readsPrimary = () => deps.db;
  // Both read `deps` at each call, so a test that swaps the database swaps it for them too.
  return Object.assign(deps, {
    authenticate: createAuthenticate(deps),
    runIdempotent: runIdempotent satisfies RunIdempotent,
    recordAdminAction: recordAudit,
  });
}

export interface RunningServer {
  url: string;
  port: number;
  /**
   * Drains, then stops: requests that arrive from now on are answered `503` with `Retry-After` and
   * `Connection: close` (so a client that connected meanwhile is answered, never reset), in-flight
   * requests finish, and the listener closes once nothing has arrived for a moment, or when `graceMs`
   * runs out, whichever comes first; whatever is still open then is closed. Resolves true when every
   * request was answered. `0` closes at once.
   */
  stop(graceMs?: number): Promise<boolean>;
}

/**
 * No transport cap: Bun's own 413 would answer without the envelope or X-Request-Id. The app reads at
 * most 64 KiB of a body (src/http/pipeline/read-body.ts) and answers the 413 envelope past that.
 */
const transportBodyLimit = Number.MAX_SAFE_INTEGER;
/** How long the listener must see no new request before it closes during a drain. */
const quietMs = 250;

function drainingResponse(request: Request, logger: Logger): Response {
  const error = new AppError("SERVICE_UNAVAILABLE", "The server is shutting down; retry shortly", null, {
    "retry-after": "1",
    connection: "close",
  });
  return errorResponse(request, error, logger);
}

/** The answer while the process waits for its database: live (`/healthz`), not ready, nothing else served. */
function startingResponse(raw: Request, logger: Logger): Response {
  const request = routableRequest(raw);
  if (request.method === "GET" && /^\/healthz\/?$/.test(new URL(request.url).pathname))
    return jsonResponse(request, 200, JSON.stringify({ success: true, code: "OK", message: "OK", data: { status: "ok" } }));
  const error = new AppError("SERVICE_UNAVAILABLE", "Starting: waiting for the database", null, { "retry-after": "1" });
  return errorResponse(request, error, logger);
}

/** A listener that answers while the process starts; startServer then serves the API on it. */
export type Listener = ReturnType<typeof Bun.serve>;

/**
 * Listens before the database is reached, so a start that cannot listen stops before anything is created
 * and a start that waits for its database is live (`/healthz` 200) but not ready (`503` to everything else).
 */
export function listenFirst(
  options: { port: number; hostname: string; requestTimeoutSeconds: number },
  logger: Logger,
): Listener {
  return Bun.serve({
    port: options.port,
    hostname: options.hostname,
    maxRequestBodySize: transportBodyLimit,
    // Long-polls run up to REQUEST_TIMEOUT_SECONDS; the idle timeout must not cut them short.
    idleTimeout: Math.min(255, options.requestTimeoutSeconds + 10),
    fetch: (request) => startingResponse(request, logger),
  });
}

/** Serves the API on a listener that `listenFirst` opened, or on a new one at `port` and `hostname`. */
export function startServer(deps: AppDeps, at: Listener | { port: number; hostname: string }): RunningServer {
  const server =
    "reload" in at ? at : listenFirst({ ...at, requestTimeoutSeconds: deps.config.requestTimeoutSeconds }, deps.logger);
  const app = buildApp(deps);
  const routeOf = (operationId: string) => deps.spec.byId.get(operationId)?.path;
  let draining = false;
  let inFlight = 0;
  let lastArrival = 0;
  server.reload({
    fetch: async (raw: Request, server: Listener) => {
      const request = recordClientAddress(routableRequest(raw), server.requestIP(raw)?.address, deps.config.trustProxy);
      lastArrival = Date.now();
      if (draining) return drainingResponse(request, deps.logger);
      inFlight += 1;
      try {
        return await traceRequest(deps.tracing, request, routeOf, () => app.fetch(request));
      } finally {
        inFlight -= 1;
      }
    },
  } as Parameters<Listener["reload"]>[0]);
  const port = server.port ?? 0;
  const host = !server.hostname || server.hostname === "0.0.0.0" ? "127.0.0.1" : server.hostname;
  return {
    url: `http://${host}:${port}`,
    port,
    stop: async (graceMs = 0) => {
      draining = true;
      const deadline = Date.now() + graceMs;
      while (Date.now() < deadline && (inFlight > 0 || Date.now() - lastArrival < quietMs)) await Bun.sleep(25);
      const answered = server.stop().then(() => true);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const expired = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), Math.max(0, deadline - Date.now()));
      });
      const drained = await Promise.race([answered, expired]);
      clearTimeout(timer);
      if (!drained) await server.stop(true);
      await deps.keyUsage.settle();
      return drained;
    },
  };
}
