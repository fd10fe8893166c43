import { runMigrations, schemaState } from "../db/migrate.ts";
import { refuseNewerSchema, untilDatabaseAnswers } from "./service.ts";
import { openSettingsDatabase, readSettings, StartUpError } from "./start-up.ts";

/**
 * `vend migrate`: applies the pending migrations and says how many. `--check` applies nothing: it lists the
 * pending ones and exits 1 while there are any (a deployment's gate before it rolls processes).
 */
export async function runMigrate(options: { check?: boolean }): Promise<void> {
  const config = readSettings();
  const database = await openSettingsDatabase(config);
  try {
    // At boot the database may still be starting: wait for it as `vend serve` does.
    const { pending } = await untilDatabaseAnswers(config, async () => {
      await refuseNewerSchema(database, config);
      return schemaState(database);
    });
    if (options.check) {
      if (pending.length === 0) {
        console.log(`The database schema is up to date (${database.kind}).`);
        return;
      }
      for (const migration of pending) console.log(`pending: ${migration.tag}`);
      throw new StartUpError(`${pending.length} migration${pending.length === 1 ? " is" : "s are"} pending: run vend migrate`);
    }
    await runMigrations(database, (step) => console.error(`Migrating: ${step.number} of ${step.total}, ${step.name}`));
    console.log(
      pending.length === 0
        ? `The database schema is up to date (${database.kind}); nothing to apply.`
        : `Migrations applied (${database.kind}): ${pending.length}.`,
    );
  } finally {
    await database.close();
  }
}
