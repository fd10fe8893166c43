import type { Config } from "../config.ts";
import { type DbHandle, databaseOf, openDatabase, roleTimeouts } from "../db/client.ts";
import { runMigrations } from "../db/migrate.ts";
import { createPartitionsAhead } from "../db/partitions.ts";
import { grantServiceRole, userOf } from "../db/service-grants.ts";
import { refuseNewerSchema, untilDatabaseAnswers } from "./service.ts";
import { readSettings, StartUpError } from "./start-up.ts";

/**
 * The database as the migration step opens it: as the owner role (DATABASE_MIGRATION_URL) where one is set,
 * else as the service's own role (one role for both), else the embedded directory.
 */
function openAsOwner(config: Config): Promise<DbHandle> {
  if (config.databaseMigrationUrl) return openDatabase({ databaseUrl: config.databaseMigrationUrl, maxConnections: 1 });
  return openDatabase({ ...databaseOf(config), dataDir: config.dataDir, maxConnections: 1 });
}

/**
 * Behind a transaction pooler the service role's timeouts are its defaults in the database, set over the
 * service's own direct connection (a role may set its own defaults) before anything goes through the pooler:
 * a server connection the pooler opened earlier would keep the old ones for as long as it lives.
 */
async function setPoolerTimeouts(config: Config): Promise<string | undefined> {
  if (config.databasePooler !== "transaction" || !config.databaseDirectUrl) return undefined;
  if (!(await roleTimeouts(config.databaseDirectUrl, config.databaseStatementTimeoutMs, "set"))) return undefined;
  return `set ${userOf(config.databaseDirectUrl) || "the service role"}'s statement_timeout to ${config.databaseStatementTimeoutMs} ms`;
}

/**
 * What the owner does besides the migrations, so the service's role needs no more than DML: the grants on every
 * table (when the owner is another role) and the partitions of the months ahead.
 */
async function prepareForService(config: Config, owner: DbHandle): Promise<string[]> {
  const done: string[] = [];
  const serviceUser = config.databaseUrl ? userOf(config.databaseDirectUrl ?? config.databaseUrl) : "";
  if (config.databaseMigrationUrl && serviceUser && serviceUser !== userOf(config.databaseMigrationUrl)) {
    await grantServiceRole(config.databaseMigrationUrl, serviceUser);
    done.push(`granted ${serviceUser} what the service uses`);
  }
  if (owner.kind === "postgres") {
    const made = await createPartitionsAhead(owner.db);
    if (made > 0) done.push(`created ${made} partition${made === 1 ? "" : "s"} ahead`);
  }
  return done;
}

/**
 * `vend migrate`: applies the pending migrations as the owner role and prepares the database for the service's
 * role (grants, timeouts, partitions ahead), and says what it did. `--check` applies nothing: it lists the
 * pending migrations and exits 1 while there are any (a deployment's gate before it rolls processes).
 */
export async function runMigrate(options: { check?: boolean }): Promise<void> {
  const config = readSettings();
  const timeouts = options.check ? undefined : await untilDatabaseAnswers(config, () => setPoolerTimeouts(config));
  const database = await openAsOwner(config);
  try {
    // At boot the database may still be starting: wait for it as `vend serve` does.
    const { pending } = await untilDatabaseAnswers(config, () => refuseNewerSchema(database, config));
    if (options.check) {
      if (pending.length === 0) {
        console.log(`The database schema is up to date (${database.kind}).`);
        return;
      }
      for (const migration of pending) console.log(`pending: ${migration.tag}`);
      throw new StartUpError(`${pending.length} migration${pending.length === 1 ? " is" : "s are"} pending: run vend migrate`);
    }
    await runMigrations(database, (step) => console.error(`Migrating: ${step.number} of ${step.total}, ${step.name}`));
    const prepared = [...(timeouts ? [timeouts] : []), ...(await prepareForService(config, database))];
    console.log(
      pending.length === 0
        ? `The database schema is up to date (${database.kind}); nothing to apply.`
        : `Migrations applied (${database.kind}): ${pending.length}.`,
    );
    for (const line of prepared) console.log(`Then ${line}.`);
  } finally {
    await database.close();
  }
}
