import { Command, InvalidArgumentError, Option } from "commander";
import { type OperatorRole, operatorRoles } from "../generated/constants.ts";
import { partitionDatabase } from "./db/partition-history.ts";
import { defaultMonthsAhead } from "./db/partitions.ts";
import { versionLine } from "./lib/shared/version.ts";
import { createFirstOperator } from "./roles/create-operator.ts";
import { runMigrate } from "./roles/migrate.ts";
import { runRetentionNow } from "./roles/retention-run.ts";
import { runService } from "./roles/service.ts";
import { showConfig } from "./roles/show-config.ts";
import { isOneLineError, StartUpError } from "./roles/start-up.ts";

/**
 * `vend`, the one entry point: the roles are its commands. `vend` alone is the development default (the API
 * and the worker in one process, on the embedded database unless DATABASE_URL is set); production runs
 * `vend migrate`, then `vend serve` and `vend work` as separate processes. The same program is dist/vend.
 */
const wholeNumber = (value: string) => {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError("a whole number");
  return Number(value);
};

const program = new Command("vend")
  .description("The bill and top-up vending service")
  .version(versionLine("vend"), "-V, --version")
  .showHelpAfterError()
  // A usage mistake exits 2, as every command line tool's does (help and --version 0).
  .exitOverride((error) => process.exit(error.exitCode === 0 ? 0 : 2))
  .action(() => runService({ api: true, worker: true }));

program
  .command("serve")
  .description("Serve the API (no background work)")
  .action(() => runService({ api: true, worker: false }));

program
  .command("work")
  .description("Process orders, webhooks and the periodic tasks (no API; metrics on METRICS_PORT when enabled)")
  .action(() => runService({ api: false, worker: true }));

program
  .command("migrate")
  .description("Apply the pending database migrations")
  .option("--check", "apply nothing: list the pending migrations and exit 1 while there are any")
  .action((options: { check?: boolean }) => runMigrate(options));

program
  .command("config")
  .description("Validate the environment and print the effective settings, secrets redacted (exit 2 on a bad value)")
  .action(() => showConfig());

program
  .command("operator")
  .description("Operators of the admin API")
  .command("create")
  .description("Create an operator in the database and print its token once (for the first one)")
  .requiredOption("--name <name>", "the operator's name")
  .addOption(new Option("--role <role>", "the operator's role").choices(operatorRoles).makeOptionMandatory())
  .action((options: { name: string; role: OperatorRole }) => createFirstOperator(options.name, options.role));

program
  .command("partition")
  .description("Convert the PostgreSQL history tables to monthly partitions (DATABASE_URL; run after vend migrate)")
  .option("--months-ahead <n>", "months of partitions to create ahead", wholeNumber, defaultMonthsAhead)
  .action(async (options: { monthsAhead: number }) => {
    const refusal = await partitionDatabase(options.monthsAhead);
    if (refusal) throw new StartUpError(refusal, 2);
  });

program
  .command("retention")
  .description("Retention of operational rows (the RETENTION_* settings)")
  .command("run")
  .description("Run a retention pass now, as a worker does at start and every 10 minutes, and print the rows deleted per table")
  .option("--json", "print the pass as JSON: rows deleted by table, total, statements, longestMs, unfinished")
  .action((options: { json?: boolean }) => runRetentionNow(options));

try {
  await program.parseAsync();
} catch (error) {
  // What an operator can act on is one line; anything else is a bug and keeps its stack.
  if (!isOneLineError(error)) throw error;
  console.error(error.message);
  process.exit(error instanceof StartUpError ? error.exitCode : 1);
}
