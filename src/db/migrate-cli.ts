import { loadConfig } from "../load-config.ts";
import { databaseOf, openDatabase } from "./client.ts";
import { DataDirLockedError, DataDirUnusableError } from "./data-dir-lock.ts";
import { runMigrations } from "./migrate.ts";

const config = loadConfig();
let handle: Awaited<ReturnType<typeof openDatabase>>;
try {
  handle = await openDatabase({ ...databaseOf(config), dataDir: config.dataDir });
} catch (error) {
  // A running server applied the migrations when it started; a directory that cannot be used is said in one line.
  if (error instanceof DataDirLockedError || error instanceof DataDirUnusableError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}
await runMigrations(handle);
await handle.close();
console.log(`Migrations applied (${handle.kind}).`);
