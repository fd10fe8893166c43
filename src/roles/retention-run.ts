import type { Config } from "../config.ts";
import { DataDirLockedError } from "../db/data-dir-lock.ts";
import { createLogger } from "../logger.ts";
import { type RetentionPass, retentionEveryMs, runRetentionPass } from "../retention/pass.ts";
import { retentionKinds, retentionVariables } from "../retention/retention-settings.ts";
import { retentionStatements } from "./retention-statements.ts";
import { refuseNewerSchema } from "./service.ts";
import { openSettingsDatabase, readSettings, StartUpError } from "./start-up.ts";

/** The database the settings name; beside a running embedded server (which holds the directory), one line saying so. */
async function openForRetention(config: Config) {
  try {
    return await openSettingsDatabase(config);
  } catch (error) {
    if (!(error instanceof DataDirLockedError)) throw error;
    throw new StartUpError(
      `Data directory ${error.dataDir} is in use by a running vend process (pid ${error.pid}): stop it to run a pass now (vend and vend work run one themselves at start and every ${retentionEveryMs / 60_000} minutes)`,
    );
  }
}

function printPass(pass: RetentionPass, kind: string, config: Config): void {
  const statements = `${pass.statements} statement${pass.statements === 1 ? "" : "s"}`;
  console.log(
    `Retention pass (${kind}): ${pass.total} row${pass.total === 1 ? "" : "s"} deleted in ${statements}, the longest ${Math.round(pass.longestMs)} ms.`,
  );
  const width = Math.max(0, ...Object.keys(pass.deleted).map((table) => table.length));
  for (const [table, rows] of Object.entries(pass.deleted)) console.log(`  ${table.padEnd(width)}  ${rows}`);
  const kept = retentionKinds.filter((k) => config.retention.days[k] === 0).map((k) => retentionVariables[k].variable);
  if (kept.length > 0) console.log(`Kept (setting 0): ${kept.join(", ")}.`);
  if (pass.unfinished)
    console.log(
      `Stopped after RETENTION_PASS_SECONDS (${config.retention.passSeconds}) with rows left: run it again, or the workers' next pass goes on.`,
    );
}

/**
 * `vend retention run`: one retention pass now, with the RETENTION_* settings, as every worker runs at start and
 * on its schedule (it shares rows with theirs, each taken once). Prints the rows it deleted per table (`--json`:
 * the pass as data) and exits 0, also when the pass stopped at its time bound with rows left.
 */
export async function runRetentionNow(options: { json?: boolean }): Promise<void> {
  const config = readSettings();
  const database = await openForRetention(config);
  try {
    // As a starting process: not on a schema a newer release migrated (unless ALLOW_NEWER_SCHEMA), nor an older one.
    const { pending } = await refuseNewerSchema(database, config);
    if (pending.length > 0)
      throw new StartUpError(
        `${pending.length} migration${pending.length === 1 ? " is" : "s are"} pending: run vend migrate first`,
      );
    // The pass logs nothing itself; warnings from below go to stderr, so stdout is only the result.
    const logger = createLogger(config.logLevel, process.stderr);
    const pass = await runRetentionPass({ db: database.db, config, logger }, retentionStatements);
    if (options.json) console.log(JSON.stringify({ ...pass, longestMs: Math.round(pass.longestMs) }));
    else printPass(pass, database.kind, config);
  } finally {
    await database.close();
  }
}
