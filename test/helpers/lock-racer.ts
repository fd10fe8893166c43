import { DataDirLockedError, lockDataDir } from "../../src/db/data-dir-lock.ts";

/** One contender in a lock race (test/process/data-dir-lock.test.ts): holds the lock until killed. */
const dir = process.argv[2] ?? "";
try {
  lockDataDir(dir);
  console.log(`won ${process.pid}`);
  setInterval(() => {}, 60_000);
} catch (error) {
  if (!(error instanceof DataDirLockedError)) throw error;
  console.log(`refused ${error.pid}`);
  process.exit(1);
}
