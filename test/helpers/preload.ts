import { afterAll } from "bun:test";
import { exercised } from "./contract.ts";
import { reportCoverage, saveExercised } from "./contract-coverage.ts";
import { dropAllTestDatabases } from "./database.ts";

afterAll(async () => {
  await dropAllTestDatabases();
  // In a parallel run this runs after each file: the runner adds the files' operations up.
  const dir = process.env.VEND_TEST_COVERAGE_DIR;
  if (dir) return saveExercised(dir, exercised);
  // Coverage of the contract: only meaningful for a whole-suite run.
  if (process.env.CONTRACT_COVERAGE === "1" && !reportCoverage(exercised)) process.exitCode = 1;
});
