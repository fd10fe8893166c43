import { type Config, ConfigError } from "../config.ts";
import { databaseOf, openDatabase } from "../db/client.ts";
import { DataDirLockedError, DataDirUnusableError } from "../db/data-dir-lock.ts";
import { loadConfig } from "../load-config.ts";

/**
 * A start-up failure the operator can act on: said in one line on stderr, never with a stack, and the
 * process exits with `exitCode` (1; a bad setting 2 where the command is about settings).
 */
export class StartUpError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** Errors whose message is already the one line an operator needs. */
export function isOneLineError(error: unknown): error is Error {
  return (
    error instanceof StartUpError ||
    error instanceof ConfigError ||
    error instanceof DataDirLockedError ||
    error instanceof DataDirUnusableError
  );
}

/** The configuration, or a StartUpError naming the bad variable. */
export function readSettings(exitCode = 1): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) throw new StartUpError(error.message, exitCode);
    throw error;
  }
}

/** The database the settings name (DATABASE_URL, else the embedded directory), for one-shot commands. */
export function openSettingsDatabase(config: Config) {
  return openDatabase({ ...databaseOf(config), dataDir: config.dataDir });
}
