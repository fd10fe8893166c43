import { fileURLToPath } from "node:url";
import type { PgliteDatabase } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import type { DbHandle } from "./client.ts";

const migrationsFolder = fileURLToPath(new URL("./migrations", import.meta.url));
const migrationLockId = 7_311_042;

/** Applies every committed migration; the one path used by start-up, tests and `bun run migrate`. */
export async function runMigrations(handle: DbHandle): Promise<void> {
  if (handle.kind === "pglite" || !handle.url) {
    await migratePglite(handle.db as unknown as PgliteDatabase, { migrationsFolder });
    return;
  }
  // One dedicated connection holding an advisory lock, so several processes starting
  // together against one database apply each migration exactly once.
  const client = postgres(handle.url, { max: 1, onnotice: () => {} });
  try {
    await client`select pg_advisory_lock(${migrationLockId})`;
    await migratePostgres(drizzle(client), { migrationsFolder });
  } finally {
    await client`select pg_advisory_unlock(${migrationLockId})`.catch(() => {});
    await client.end({ timeout: 5 });
  }
}
