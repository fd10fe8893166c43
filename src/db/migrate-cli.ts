import { loadConfig } from "../load-config.ts";
import { openDatabase } from "./client.ts";
import { runMigrations } from "./migrate.ts";

const config = loadConfig();
const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
await runMigrations(handle);
await handle.close();
console.log(`Migrations applied (${handle.kind}).`);
