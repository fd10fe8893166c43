import { countAccounts, createAccount } from "./accounts/service.ts";
import { ConfigError, loadConfig } from "./config.ts";
import { openDatabase } from "./db/client.ts";
import { runMigrations } from "./db/migrate.ts";
import { deleteExpiredIdempotencyRecords } from "./idempotency/service.ts";
import { createLogger } from "./logger.ts";
import { createDeps, startServer } from "./server.ts";

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

if ((await countAccounts(database.db)) === 0) {
  const created = await createAccount(database.db, "default");
  const testKey = created.keys.find((k) => k.mode === "test");
  // Printed once, on the start that created it; only its hash is stored.
  console.log(`\nCreated account "default" (${created.account.id}).\nTest API key (shown once, store it now): ${testKey?.key}\n`);
}

const server = startServer(deps, { port: config.port, hostname: config.host });
logger.info({ url: server.url, database: database.kind, admin_api: Boolean(config.adminToken) }, "vend service listening");
console.log(`Vend API listening on ${server.url} (database: ${database.kind}); API reference at ${server.url}/docs`);

// Idempotency records are retained 24 hours; sweep the expired ones hourly.
const sweep = setInterval(() => {
  deleteExpiredIdempotencyRecords(database.db)
    .then((removed) => removed > 0 && logger.info({ removed }, "expired idempotency records removed"))
    .catch((error) => logger.warn({ err: String(error) }, "idempotency sweep failed"));
}, 3600_000);
sweep.unref();

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "shutting down");
  clearInterval(sweep);
  await server.stop();
  await database.close();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));
