import { createAccount, hasAnyAccount } from "./accounts/account-records.ts";
import { localUrlOf, writeLocalAccess } from "./admin/local-access.ts";
import { hasActiveOperator } from "./admin/operators.ts";
import { startBackground } from "./background.ts";
import { ConfigError } from "./config.ts";
import { databaseOf, openDatabase } from "./db/client.ts";
import { DataDirLockedError, DataDirUnusableError } from "./db/data-dir-lock.ts";
import { runMigrations } from "./db/migrate.ts";
import { isDatabaseUnavailable } from "./db/unavailable.ts";
import { loadConfig } from "./load-config.ts";
import { bufferedStdout, createLogger } from "./logger.ts";
import { startMetricsServer } from "./metrics/metrics-server.ts";
import { createDeps, startServer } from "./server.ts";

/** `--no-worker`: API only. `--worker-only`: background work only. Default: both in one process. */
const args = new Set(process.argv.slice(2));
const runApi = !args.has("--worker-only");
const runWorker = !args.has("--no-worker");

/** A bad setting stops start-up with its message alone (no stack): it names the variable or file entry. */
async function configured<T>(read: () => T | Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
}

const config = await configured(loadConfig);
const logger = createLogger(config.logLevel, bufferedStdout());

/**
 * What start-up is doing, one line each on stderr with the seconds since the process started: a first start
 * on the embedded database takes a while on a slow machine, and silence looks like a hang. Quiet below
 * LOG_LEVEL=info.
 */
const progress = ["info", "debug", "trace"].includes(config.logLevel)
  ? (step: string) => console.error(`${step} [${(performance.now() / 1000).toFixed(1)} s]`)
  : undefined;

async function openConfiguredDatabase() {
  try {
    return await openDatabase({
      ...databaseOf(config),
      dataDir: config.dataDir,
      maxConnections: config.databasePoolSize,
      connectTimeoutSeconds: config.databaseConnectTimeoutSeconds,
      statementTimeoutMs: config.databaseStatementTimeoutMs,
      events: {
        onUnreachable: (closed) => logger.error({ closed_connections: closed }, "database does not answer; connections closed"),
        onReadOnly: () => logger.warn("the database server is read-only (failover under way?); connection dropped"),
        onWarning: (message) => logger.warn(message),
        onFailure: (error) =>
          logger.fatal({ err: error.message }, "embedded database failed; answering 503 until it is reopened"),
        onReopened: () => logger.warn("embedded database reopened"),
        onProgress: progress,
      },
    });
  } catch (error) {
    if (error instanceof DataDirLockedError || error instanceof DataDirUnusableError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
}

const database = await openConfiguredDatabase();
await runMigrations(database, (step) => progress?.(`Migrating the database: ${step.number} of ${step.total}, ${step.name}`));
const deps = await configured(() => createDeps(config, database, logger, undefined, undefined, { servesApi: runApi }));

if (runApi && !(await hasAnyAccount(database.db))) {
  progress?.('Creating the first account "default"');
  const created = await createAccount(database.db, "default");
  const testKey = created.keys.find((k) => k.mode === "test");
  // Printed once, on the start that created it; only its hash is stored.
  console.log(`\nCreated account "default" (${created.account.id}).\nTest API key (shown once, store it now): ${testKey?.key}\n`);
}

const server = runApi ? startServer(deps, { port: config.port, hostname: config.host }) : undefined;
const localAccess = server && database.kind === "pglite" ? offerLocalAccess(server.url) : undefined;

/** Lets `npm run operator:create` work beside this server, which holds the embedded directory locked. */
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
const background = runWorker ? startBackground(deps, apiBaseUrl) : undefined;
// Without the API there is no `/metrics` route: the worker serves its own on METRICS_PORT.
const { metricsEnabled, metricsPort, metricsToken } = config.operations;
const metricsServer =
  !server && metricsEnabled
    ? startMetricsServer(deps.metrics, { port: metricsPort, hostname: config.host, token: metricsToken, logger })
    : undefined;
if (server) {
  logger.info(
    { url: server.url, database: database.kind, worker: runWorker, admin_api: await adminApiState() },
    "vend service listening",
  );
  console.log(`Vend API listening on ${server.url} (database: ${database.kind}); API reference at ${server.url}/docs`);
} else {
  logger.info({ database: database.kind, api: apiBaseUrl, metrics: metricsServer?.url }, "vend worker running");
  const metricsAt = metricsServer ? `; metrics at ${metricsServer.url}/metrics` : "";
  console.log(`Vend worker running (database: ${database.kind}; sandbox callbacks to ${apiBaseUrl}${metricsAt})`);
}

/** Past the grace period: stopping the worker and closing the database get this long before the process exits anyway. */
const closeAllowanceMs = 5000;

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) {
    // A second signal while draining: the operator wants out now.
    process.exit(1);
  }
  stopping = true;
  const graceMs = config.shutdownGraceSeconds * 1000;
  const delayMs = server ? config.shutdownDelaySeconds * 1000 : 0;
  logger.info({ signal, grace_seconds: config.shutdownGraceSeconds, delay_seconds: delayMs / 1000 }, "shutting down");
  // Whatever hangs below (a database that no longer answers), the process still exits.
  setTimeout(
    () => {
      logger.error("shutdown did not finish in time; exiting");
      process.exit(1);
    },
    delayMs + graceMs + closeAllowanceMs,
  );
  // Readiness fails and long-polls answer now; the worker lets its jobs finish and gives back its leases.
  deps.waiters.drain();
  const workerStopped = background?.stop();
  // Unready but still serving: a load balancer polling /readyz stops routing here before the listener closes.
  if (delayMs > 0) await Bun.sleep(delayMs);
  const answered = (await server?.stop(graceMs)) ?? true;
  if (!answered)
    logger.warn({ grace_seconds: config.shutdownGraceSeconds }, "requests still in flight after the grace period were cut");
  await workerStopped;
  await metricsServer?.stop();
  await deps.waiters.stop();
  await deps.credentialSync.stop();
  await deps.providers.health.stop();
  deps.metrics.close();
  await deps.tracing.shutdown().catch((error) => logger.warn({ err: String(error) }, "spans could not be exported"));
  localAccess?.remove();
  await deps.reads.close();
  await database.close();
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
