import { localUrlOf, writeLocalAccess } from "../admin/local-access.ts";
import { hasActiveOperator } from "../admin/operators.ts";
import { startBackground } from "../background.ts";
import type { Config } from "../config.ts";
import { type DbHandle, databaseOf, openDatabase } from "../db/client.ts";
import { runMigrations, SchemaNewerError, type SchemaState, schemaState } from "../db/migrate.ts";
import { isDatabaseUnavailable } from "../db/unavailable.ts";
import type { AppDeps } from "../deps.ts";
import { bufferedStdout, createLogger, type Logger } from "../logger.ts";
import { startMetricsServer } from "../metrics/metrics-server.ts";
import { createDeps, type Listener, listenFirst, startServer } from "../server.ts";
import { createAccount, hasAnyAccount } from "../wallet/account-records.ts";
import { readSettings, StartUpError } from "./start-up.ts";

/** Which parts one process runs: `vend serve` the API, `vend work` the worker, the development default both. */
export interface Roles {
  api: boolean;
  worker: boolean;
}

/** Past the grace period: stopping the worker and closing the database get this long before the process exits anyway. */
const closeAllowanceMs = 5000;
/** Of that allowance, what writing the last request-log records may take (a database that does not answer). */
const requestLogsStopMs = 2000;

/**
 * What start-up is doing, one line each on stderr with the seconds since the process started: a first start
 * on the embedded database takes a while on a slow machine, and silence looks like a hang. Quiet below
 * LOG_LEVEL=info.
 */
function progressOf(config: Config) {
  return ["info", "debug", "trace"].includes(config.logLevel)
    ? (step: string) => console.error(`${step} [${(performance.now() / 1000).toFixed(1)} s]`)
    : undefined;
}

function openConfiguredDatabase(config: Config, logger: Logger, progress: ((step: string) => void) | undefined) {
  return openDatabase({
    ...databaseOf(config),
    dataDir: config.dataDir,
    maxConnections: config.databasePoolSize,
    connectTimeoutSeconds: config.databaseConnectTimeoutSeconds,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    events: {
      onUnreachable: (closed) => logger.error({ closed_connections: closed }, "database does not answer; connections closed"),
      onReadOnly: () => logger.warn("the database server is read-only (failover under way?); connection dropped"),
      onWarning: (message) => logger.warn(message),
      onFailure: (error) => logger.fatal({ err: error.message }, "embedded database failed; answering 503 until it is reopened"),
      onReopened: () => logger.warn("embedded database reopened"),
      onProgress: progress,
    },
  });
}

/** Listens, or says in one line why it cannot (the port taken, an address this host does not have). */
function listen(config: Config, logger: Logger): Listener {
  try {
    return listenFirst({ port: config.port, hostname: config.host, requestTimeoutSeconds: config.requestTimeoutSeconds }, logger);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "EADDRINUSE") throw new StartUpError(`port ${config.port} is in use: set PORT`);
    if (code === "EADDRNOTAVAIL") throw new StartUpError(`HOST ${config.host} is not an address of this machine: set HOST`);
    if (code === "EACCES") throw new StartUpError(`port ${config.port} needs privileges this process lacks: set PORT`);
    throw error;
  }
}

/** The first line of an error and its code, for a log line an operator reads. */
function causeOf(error: unknown): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  const text = String(message ?? error).split("\n")[0] ?? "";
  return typeof code === "string" && !text.includes(code) ? `${text} (${code})` : text;
}

/**
 * Runs `attempt` until the database answers: a refused connection, too many clients, a name that does not
 * resolve yet, a server starting up or a standby still in recovery are retried with backoff (0.5 s doubling
 * to 10 s), one line on stderr each, for DATABASE_START_TIMEOUT_SECONDS; then one line naming the cause.
 * Any other failure of the database (a wrong password, a missing database) is one line at once.
 */
export async function untilDatabaseAnswers<T>(config: Config, attempt: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + config.databaseStartTimeoutSeconds * 1000;
  let delayMs = 500;
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (error instanceof StartUpError) throw error;
      if (!isDatabaseUnavailable(error)) throw new StartUpError(`the database refused to start this process: ${causeOf(error)}`);
      if (Date.now() + delayMs > deadline)
        throw new StartUpError(
          `the database did not answer within ${config.databaseStartTimeoutSeconds} s (DATABASE_START_TIMEOUT_SECONDS): ${causeOf(error)}`,
        );
      console.error(`The database does not answer (attempt ${tries}: ${causeOf(error)}); retrying in ${delayMs / 1000} s`);
      await Bun.sleep(delayMs);
      delayMs = Math.min(delayMs * 2, 10_000);
    }
  }
}

/**
 * The first account and its test key, on the first start of the API on an empty database: only once the
 * server listens, so a start that cannot listen creates nothing and the next start still prints the key.
 */
async function createFirstAccount(database: DbHandle, progress: ((step: string) => void) | undefined): Promise<void> {
  if (await hasAnyAccount(database.db)) return;
  progress?.('Creating the first account "default"');
  const created = await createAccount(database.db, "default");
  const testKey = created.keys.find((k) => k.mode === "test");
  // Printed once, on the start that created it; only its hash is stored.
  console.log(`\nCreated account "default" (${created.account.id}).\nTest API key (shown once, store it now): ${testKey?.key}\n`);
}

/**
 * A process of an older release does not start on a schema a newer one migrated, unless ALLOW_NEWER_SCHEMA says
 * so. Returns how the schema stands.
 */
export async function refuseNewerSchema(database: DbHandle, config: Config): Promise<SchemaState> {
  const state = await schemaState(database);
  if (state.unknown === 0 || config.allowNewerSchema) return state;
  throw new StartUpError(
    `${new SchemaNewerError(state.unknown).message} (or set ALLOW_NEWER_SCHEMA=true to roll back to this one)`,
  );
}

/**
 * Pending migrations at start: applied by the process itself where its role owns the schema (one role, the
 * embedded database, development; behind a transaction pooler `vend migrate` sets the role's timeouts); a role that may not (the service's
 * least-privilege role) says in one line to run `vend migrate` as the owner. With nothing pending the
 * process runs no DDL at all.
 */
async function migrateAtStart(database: DbHandle, count: number, progress?: (step: string) => void) {
  try {
    await runMigrations(database, (step) => progress?.(`Migrating the database: ${step.number} of ${step.total}, ${step.name}`));
  } catch (error) {
    if ((error as { code?: unknown }).code !== "42501" && (error as { cause?: { code?: unknown } }).cause?.code !== "42501")
      throw error;
    throw new StartUpError(
      `${count} migration${count === 1 ? " is" : "s are"} pending and this role may not apply them: run vend migrate as the owner (DATABASE_MIGRATION_URL) first`,
    );
  }
}

/** Runs the API, the worker or both until SIGTERM or SIGINT, then drains and exits. */
export async function runService(roles: Roles): Promise<void> {
  const startedAt = performance.now();
  const config = readSettings();
  const logger = createLogger(config.logLevel, bufferedStdout());
  const progress = progressOf(config);
  // Listening first: live while the database is awaited, and a port that is taken stops the start at once.
  const listener = roles.api ? listen(config, logger) : undefined;
  let opened: DbHandle | undefined;
  let deps: AppDeps;
  try {
    const handle = await openConfiguredDatabase(config, logger, progress);
    opened = handle;
    await untilDatabaseAnswers(config, async () => {
      const { pending } = await refuseNewerSchema(handle, config);
      if (pending.length > 0) await migrateAtStart(handle, pending.length, progress);
    });
    deps = await createDeps(config, handle, logger, undefined, undefined, { servesApi: roles.api });
  } catch (error) {
    listener?.stop(true);
    await opened?.close().catch(() => {});
    throw error;
  }
  const database = opened;
  const server = listener ? startServer(deps, listener) : undefined;
  if (server) await createFirstAccount(database, progress);
  const localAccess = server && database.kind === "pglite" ? offerLocalAccess(server.url) : undefined;

  /** Lets `vend operator create` work beside this server, which holds the embedded directory locked. */
  function offerLocalAccess(url: string) {
    const localUrl = localUrlOf(url);
    if (!localUrl || !config.dataDir || config.dataDir.startsWith("memory://")) return undefined;
    try {
      const access = writeLocalAccess(config.dataDir, localUrl);
      deps.localAdminSecret = access.secret;
      return access;
    } catch (error) {
      logger.warn({ err: String(error) }, "local access file not written; operator tools need the server stopped");
      return undefined;
    }
  }

  /** Which bearers the admin API takes, as `authenticateAdmin` decides: ADMIN_TOKEN, operator tokens, or nothing yet. */
  async function adminApiState(): Promise<string> {
    if (config.adminToken) return "admin token and operator tokens";
    return (await hasActiveOperator(database.db)) ? "operator tokens" : "off";
  }
  const apiBaseUrl = config.publicBaseUrl ?? server?.url ?? `http://127.0.0.1:${config.port}`;
  // Without the API there is no `/metrics` route: the worker serves its own on METRICS_PORT. Before any work is
  // claimed, so a port that is taken stops the start with no order left leased to a process that is gone.
  const { metricsEnabled, metricsPort, metricsToken } = config.operations;
  const metricsServer =
    !server && metricsEnabled
      ? startMetricsServer(deps.metrics, { port: metricsPort, hostname: config.host, token: metricsToken, logger })
      : undefined;
  const background = roles.worker ? startBackground(deps, apiBaseUrl) : undefined;
  const name = server ? "Vend API" : "Vend worker";
  if (server) {
    logger.info(
      { url: server.url, database: database.kind, worker: roles.worker, admin_api: await adminApiState() },
      "vend service listening",
    );
    console.log(`Vend API listening on ${server.url} (database: ${database.kind}); API reference at ${server.url}/docs`);
    if (database.kind === "pglite" && config.host === "127.0.0.1")
      console.log("Only this machine can reach it: set HOST=0.0.0.0 to listen on every interface.");
  } else {
    logger.info({ database: database.kind, api: apiBaseUrl, metrics: metricsServer?.url }, "vend worker running");
    const metricsAt = metricsServer ? `; metrics at ${metricsServer.url}/metrics` : "";
    console.log(`Vend worker running (database: ${database.kind}; sandbox callbacks to ${apiBaseUrl}${metricsAt})`);
  }

  let stopping = false;
  let stopStarted = 0;
  const elapsed = () => `${((performance.now() - stopStarted) / 1000).toFixed(1)} s`;
  async function shutdown(signal: string) {
    if (stopping) {
      // A second signal while draining: the operator wants out now.
      console.error(`${name} stopped at once (second ${signal}), after ${elapsed()}`);
      process.exit(1);
    }
    stopping = true;
    stopStarted = performance.now();
    const graceMs = config.shutdownGraceSeconds * 1000;
    const delayMs = server ? config.shutdownDelaySeconds * 1000 : 0;
    logger.info({ signal, grace_seconds: config.shutdownGraceSeconds, delay_seconds: delayMs / 1000 }, "shutting down");
    // Whatever hangs below (a database that no longer answers), the process still exits.
    setTimeout(
      () => {
        logger.error("shutdown did not finish in time; exiting");
        console.error(`${name} stopped without finishing its shutdown (${signal}), after ${elapsed()}`);
        process.exit(1);
      },
      delayMs + graceMs + closeAllowanceMs,
    );
    // Readiness fails and long-polls answer now; request-log streams end (a stream never ends by itself, and an
    // open one would hold the listener's close to the end of the grace period); the worker lets its jobs finish
    // and gives back its leases.
    deps.waiters.drain();
    deps.requestLogStreams.drain();
    const workerStopped = background?.stop();
    // Unready but still serving: a load balancer polling /readyz stops routing here before the listener closes.
    if (delayMs > 0) await Bun.sleep(delayMs);
    const answered = (await server?.stop(graceMs)) ?? true;
    if (!answered)
      logger.warn({ grace_seconds: config.shutdownGraceSeconds }, "requests still in flight after the grace period were cut");
    // Every request is answered: the records still waiting are written now, or dropped (and counted) past the bound.
    await deps.requestLogs.stop(requestLogsStopMs);
    await workerStopped;
    await metricsServer?.stop();
    await deps.waiters.stop();
    await deps.requestLogStreams.stop();
    await deps.credentialSync.stop();
    await deps.providers.health.stop();
    deps.metrics.close();
    await deps.tracing.shutdown().catch((error) => logger.warn({ err: String(error) }, "spans could not be exported"));
    localAccess?.remove();
    await deps.reads.close();
    await database.close();
    console.error(`${name} stopped (${signal}) in ${elapsed()}`);
    process.exit(0);
  }
  // During an outage the driver fails fast, and a rejection inside it that nobody awaits (seen while the
  // worker stops with the database silent) must not take the process down with every request in flight.
  // Anything else unhandled is a bug: log it and exit, as the runtime would.
  process.on("unhandledRejection", (reason) => {
    if (isDatabaseUnavailable(reason)) {
      logger.warn({ err: reason instanceof Error ? reason.message : String(reason) }, "unawaited database failure");
      return;
    }
    logger.fatal(
      { err: reason instanceof Error ? { message: reason.message, stack: reason.stack } : String(reason) },
      "unhandled rejection",
    );
    process.exit(1);
  });
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
  logger.debug({ start_seconds: (performance.now() - startedAt) / 1000 }, "started");
}
