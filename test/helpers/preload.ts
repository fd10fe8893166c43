import { afterAll } from "bun:test";
import { pendingOperations } from "../contract/pending-operations.ts";
import { allOperationIds, exercised } from "./contract.ts";
import { dropAllTestDatabases } from "./database.ts";

afterAll(async () => {
  await dropAllTestDatabases();
  // Coverage of the contract: only meaningful for a whole-suite run.
  if (process.env.CONTRACT_COVERAGE !== "1") return;
  const missing = allOperationIds.filter((id) => !exercised.has(id));
  const unexpected = missing.filter((id) => !pendingOperations.has(id));
  console.log(`\nContract coverage: ${exercised.size}/${allOperationIds.length} operations exercised.`);
  if (missing.length > 0) console.log(`Not exercised yet: ${missing.join(", ")}`);
  if (unexpected.length > 0) {
    console.error(`Implemented operations with no contract-checked test: ${unexpected.join(", ")}`);
    process.exitCode = 1;
  }
});
