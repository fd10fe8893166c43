import { parseArgs } from "node:util";
import type { OperatorRole } from "../../generated/constants.ts";
import { operatorRoles } from "../../generated/constants.ts";
import { openDatabase } from "../db/client.ts";
import { runMigrations } from "../db/migrate.ts";
import { AppError } from "../errors.ts";
import { loadConfig } from "../load-config.ts";
import { createOperator } from "./operators.ts";

/**
 * Bootstrap: `npm run operator:create -- --name ada --role admin` creates an operator straight in the
 * database (the one DATABASE_URL or VEND_DATA_DIR names) and prints its token once. For a first operator
 * when no `ADMIN_TOKEN` is configured; with one, `POST /admin/v1/operators` does the same over HTTP.
 */
const usage = `Usage: npm run operator:create -- --name NAME --role ${operatorRoles.join("|")}`;
const { values } = parseArgs({ options: { name: { type: "string" }, role: { type: "string" } }, strict: true });
const role = values.role as OperatorRole | undefined;
if (!values.name || !role || !operatorRoles.includes(role)) {
  console.error(usage);
  process.exit(2);
}
const config = loadConfig();
const handle = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
try {
  await runMigrations(handle);
  const created = await createOperator(handle.db, { name: values.name, role }, "bootstrap");
  console.log(`Created operator ${created.operator.name} (${created.operator.role}, ${created.operator.id}).`);
  console.log(`Token (shown once, store it now): ${created.token}`);
} catch (error) {
  if (!(error instanceof AppError)) throw error;
  console.error(error.message);
  process.exitCode = 1;
} finally {
  await handle.close();
}
