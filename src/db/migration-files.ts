import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { MigrationMeta } from "drizzle-orm/migrator";
import { migrationFiles } from "../../generated/migrations.ts";

/** The committed migrations' folder (drizzle-kit's SQL files and `meta/_journal.json`), for the tools that write it. */
export const migrationsFolder = fileURLToPath(new URL("./migrations", import.meta.url));

/** A committed migration as drizzle applies it, with its journal tag. */
export interface CommittedMigration extends MigrationMeta {
  tag: string;
}

/**
 * Every committed migration in order, as drizzle's `readMigrationFiles` reads them (statements split at its
 * breakpoints, the SHA-256 of the whole file), but from the files generated/migrations.ts imports: the source
 * tree's, or the copies `bun build --compile` embedded in dist/vend.
 */
export function committedMigrations(): CommittedMigration[] {
  return migrationFiles.map(({ tag, when, breakpoints, path }) => {
    const query = readFileSync(path, "utf8");
    return {
      tag,
      sql: query.split("--> statement-breakpoint"),
      bps: breakpoints,
      folderMillis: when,
      hash: createHash("sha256").update(query).digest("hex"),
    };
  });
}

/** The committed migrations as 12 hex digits of a SHA-256 over each one's time and hash, in order: it changes when one is added or edited. */
export function migrationsDigest(): string {
  const hash = createHash("sha256");
  for (const migration of committedMigrations()) hash.update(`${migration.folderMillis}:${migration.hash}\n`);
  return hash.digest("hex").slice(0, 12);
}
