import { createAccount, hasAnyAccount } from "./accounts/service.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { openDatabase } from "./db/client.ts";
import { runMigrations } from "./db/migrate.ts";
import { createLogger } from "./logger.ts";
import { createDeps, startServer } from "./server.ts";
import { startBackground } from "./worker/background.ts";

/** `--no-worker`: API only. `--worker-only`: background work only. Default: both in one process. */
const args = new Set(process.argv.slice(2));
const runApi = !args.has("--worker-only");
const runWorker = !args.has("--no-worker");

function readConfig() {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
}

const config = readConfig();
const logger = createLogger(config.logLevel);
const database = await openDatabase({
  databaseUrl: config.databaseUrl,
  dataDir: config.dataDir,
  maxConnections: config.databasePoolSize,
});
await runMigrations(database);
const deps = await createDeps(config, database, logger);

if (runApi && !(await hasAnyAccount(database.db))) {
  const created = await createAccount(database.db, "default");
  const testKey = created.keys.find((k) => k.mode === "test");
  // Printed once, on the start that created it; only its hash is stored.
  console.log(`\nCreated account "default" (${created.account.id}).\nTest API key (shown once, store it now): ${testKey?.key}\n`);
}

const server = runApi ? startServer(deps, { port: config.port, hostname: config.host }) : undefined;
const apiBaseUrl = config.publicBaseUrl ?? server?.url ?? `http://127.0.0.1:${config.port}`;
const background = runWorker ? startBackground(deps, apiBaseUrl) : undefined;
if (server) {
  logger.info(
    { url: server.url, database: database.kind, worker: runWorker, admin_api: Boolean(config.adminToken) },
    "vend service listening",
  );
  console.log(`Vend API listening on ${server.url} (database: ${database.kind}); API reference at ${server.url}/docs`);
} else {
  logger.info({ database: database.kind, api: apiBaseUrl }, "vend worker running");
  console.log(`Vend worker running (database: ${database.kind}; sandbox callbacks to ${apiBaseUrl})`);
}

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "shutting down");
  // Stop taking requests, let in-flight work finish (leases still held are given back), then close.
  await server?.stop();
  await background?.stop();
  await deps.waiters.stop();
  await database.close();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
