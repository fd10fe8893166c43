import type { OperatorRole } from "../../generated/constants.ts";
import type { components } from "../../generated/openapi-types.ts";
import { readLocalAccess } from "../admin/local-access.ts";
import { createOperator } from "../admin/operators.ts";
import { DataDirLockedError, DataDirUnusableError } from "../db/data-dir-lock.ts";
import { runMigrations } from "../db/migrate.ts";
import { AppError } from "../errors.ts";
import { openSettingsDatabase, readSettings, StartUpError } from "./start-up.ts";

/**
 * Bootstrap: `vend operator create --name ada --role admin` creates an operator straight in the
 * database (the one DATABASE_URL or VEND_DATA_DIR names) and prints its token once. For a first operator
 * when no `ADMIN_TOKEN` is configured; with one, `POST /admin/v1/operators` does the same over HTTP. Beside
 * a running embedded server (which holds the directory locked) it asks that server, with the local secret
 * the server left in the directory.
 */
type OperatorCreated = components["schemas"]["OperatorCreated"];

function printCreated(created: OperatorCreated): void {
  console.log(`Created operator ${created.operator.name} (${created.operator.role}, ${created.operator.id}).`);
  console.log(`Token (shown once, store it now): ${created.token}`);
}

/** One line and exit 1: what went wrong and what to do, never a stack. */
function fail(message: string): never {
  throw new StartUpError(message);
}

/** Through the running server that holds the directory: `POST /admin/v1/operators` as local-bootstrap. */
async function createThroughRunningServer(locked: DataDirLockedError, name: string, role: OperatorRole): Promise<void> {
  const access = readLocalAccess(locked.dataDir);
  const instead = "stop it and run this again, or use `vendctl operators create` with ADMIN_TOKEN";
  if (!access || access.pid !== locked.pid) {
    fail(
      `Data directory ${locked.dataDir} is in use by vend process pid ${locked.pid}, which takes no local requests: ${instead}`,
    );
  }
  let res: Response;
  try {
    res = await fetch(`${access.url}/admin/v1/operators`, {
      method: "POST",
      headers: { authorization: `Bearer ${access.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ name, role }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch {
    fail(`The vend server (pid ${locked.pid}) holding ${locked.dataDir} does not answer at ${access.url}: ${instead}`);
  }
  const body = (await res.json().catch(() => ({}))) as { message?: string; data?: OperatorCreated };
  if (res.status !== 201 || !body.data) fail(body.message ?? `The running server answered ${res.status}`);
  printCreated(body.data);
}

/** `vend operator create`: in the database the settings name, or through the embedded server that holds it. */
export async function createFirstOperator(name: string, role: OperatorRole): Promise<void> {
  const config = readSettings();
  let handle: Awaited<ReturnType<typeof openSettingsDatabase>>;
  try {
    handle = await openSettingsDatabase(config);
  } catch (error) {
    if (error instanceof DataDirLockedError) return createThroughRunningServer(error, name, role);
    if (error instanceof DataDirUnusableError) fail(error.message);
    throw error;
  }
  try {
    await runMigrations(handle);
    printCreated(await createOperator(handle.db, { name, role }, "bootstrap"));
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    fail(error.message);
  } finally {
    await handle.close();
  }
}
