import { sql } from "drizzle-orm";
import type { MigrationMeta } from "drizzle-orm/migrator";
import { drizzle } from "drizzle-orm/postgres-js";
import postgres from "postgres";
import { type DbHandle, openDatabase } from "./client.ts";
import { type CommittedMigration, committedMigrations, migrationsFolder } from "./migration-files.ts";
import { queryRows } from "./rows.ts";

const migrationLockId = 7_311_042;

/** Told as each migration starts: its place among all committed migrations and its name. */
export type MigrationProgress = (step: { number: number; total: number; name: string }) => void;

/** What drizzle's own `migrate` calls: the dialect applies, in one transaction, those newer than the last applied. */
interface Migrating {
  dialect: { migrate(migrations: MigrationMeta[], session: unknown, config: { migrationsFolder: string }): Promise<void> };
  session: unknown;
}

/**
 * Every committed migration, each reporting to `progress` when the dialect starts applying it (only
 * pending ones are iterated), so the single transaction drizzle applies them in is kept.
 */
function reportingMigrations(progress: MigrationProgress | undefined): MigrationMeta[] {
  const migrations = committedMigrations();
  if (!progress) return migrations;
  return migrations.map((migration, index) => {
    const step = { number: index + 1, total: migrations.length, name: migration.tag };
    const statements = migration.sql;
    const reporting = {
      *[Symbol.iterator]() {
        progress(step);
        yield* statements;
      },
    };
    return { ...migration, sql: reporting as unknown as string[] };
  });
}

async function applyMigrations(db: unknown, progress: MigrationProgress | undefined): Promise<void> {
  const { dialect, session } = db as Migrating;
  await dialect.migrate(reportingMigrations(progress), session, { migrationsFolder });
}

/** Applies every committed migration; the one path used by start-up, tests and `bun run migrate`. */
export async function runMigrations(handle: DbHandle, progress?: MigrationProgress): Promise<void> {
  const url = handle.directUrl ?? handle.url;
  if (handle.kind === "pglite" || !url) {
    await applyMigrations(handle.db, progress);
    return;
  }
  // One dedicated connection, with a session of its own (DATABASE_DIRECT_URL behind a transaction pooler),
  // holding an advisory lock, so several processes starting together against one database apply each
  // migration exactly once. The lock is the session's: it ends with the connection, however the process
  // ends; idle_in_transaction_session_timeout and a bounded wait keep a stuck holder from holding it for ever.
  const client = postgres(url, {
    max: 1,
    onnotice: () => {},
    connection: { application_name: "vend-migrate", idle_in_transaction_session_timeout: 60_000 },
  });
  try {
    await client`select pg_advisory_lock(${migrationLockId})`;
    await applyMigrations(drizzle(client), progress);
  } finally {
    await client`select pg_advisory_unlock(${migrationLockId})`.catch(() => {});
    await client.end({ timeout: 5 });
  }
}

/** How the database's schema stands against this code's committed migrations. */
export interface SchemaState {
  /** Committed migrations the database has not applied yet, in order. */
  pending: CommittedMigration[];
  /** Applied migrations this code does not know (a newer release migrated the database): how many. */
  unknown: number;
}

/**
 * Reads the migrations drizzle recorded as applied (none on a new database) and compares them with the
 * committed ones, as drizzle decides what to apply: by time, newer than the last applied.
 */
export async function schemaState(handle: DbHandle): Promise<SchemaState> {
  const [{ present } = { present: false }] = await queryRows<{ present: boolean }>(
    handle.db,
    sql`select to_regclass('drizzle.__drizzle_migrations') is not null as present`,
  );
  const applied = present
    ? await queryRows<{ hash: string; created_at: string | number }>(
        handle.db,
        sql`select hash, created_at from drizzle.__drizzle_migrations order by created_at`,
      )
    : [];
  const committed = committedMigrations();
  const known = new Set(committed.map((migration) => migration.hash));
  const last = applied.reduce((latest, row) => Math.max(latest, Number(row.created_at)), Number.NEGATIVE_INFINITY);
  return {
    pending: committed.filter((migration) => migration.folderMillis > last),
    unknown: applied.filter((row) => !known.has(row.hash)).length,
  };
}

/** Thrown when the database was migrated by a newer release than this code: running on it could write what that schema no longer means. */
export class SchemaNewerError extends Error {
  constructor(unknown: number) {
    super(
      `The database schema is newer than this release (${unknown} migration${unknown === 1 ? "" : "s"} it does not know): run the release that migrated it, or a later one`,
    );
  }
}

/**
 * A new in-memory embedded database with every committed migration applied, as a data directory image that
 * `openDatabase({ image })` starts from: the install's first-start image (scripts/embedded-image.ts) and the test
 * runs' template.
 */
export async function migratedEmbeddedImage(): Promise<Blob> {
  const handle = await openDatabase({ dataDir: "memory://" });
  try {
    await runMigrations(handle);
    const image = await handle.dumpImage?.();
    if (!image) throw new Error("the embedded database gave no image");
    return image;
  } finally {
    await handle.close();
  }
}
