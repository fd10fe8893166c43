import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { readMigrationFiles } from "drizzle-orm/migrator";

/** The committed migrations: drizzle-kit's folder (SQL files and `meta/_journal.json`). */
export const migrationsFolder = fileURLToPath(new URL("./migrations", import.meta.url));

/** The committed migrations as 12 hex digits of a SHA-256 over each one's time and hash, in order: it changes when one is added or edited. */
export function migrationsDigest(): string {
  const hash = createHash("sha256");
  for (const migration of readMigrationFiles({ migrationsFolder })) hash.update(`${migration.folderMillis}:${migration.hash}\n`);
  return hash.digest("hex").slice(0, 12);
}
