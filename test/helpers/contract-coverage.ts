import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBase62 } from "../../src/lib/random.ts";
import { pendingOperations } from "../contract/pending-operations.ts";
import { allOperationIds } from "./contract.ts";

/**
 * Contract coverage over a whole run. A parallel run (`npm test`) has each test file write the operations it
 * exercised into the runner's directory (`VEND_TEST_COVERAGE_DIR`); the runner adds them up at the end.
 */
export function saveExercised(dir: string, exercised: Set<string>): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${process.pid}-${randomBase62(8)}.json`), JSON.stringify([...exercised]));
}

export function loadExercised(dir: string): Set<string> {
  const ids = new Set<string>();
  let files: string[] = [];
  try {
    files = readdirSync(dir);
  } catch {
    // No file exercised anything.
  }
  for (const file of files) for (const id of JSON.parse(readFileSync(join(dir, file), "utf8")) as string[]) ids.add(id);
  return ids;
}

/** Prints the coverage; false when an implemented operation has no contract-checked test. */
export function reportCoverage(exercised: Set<string>): boolean {
  const missing = allOperationIds.filter((id) => !exercised.has(id));
  const unexpected = missing.filter((id) => !pendingOperations.has(id));
  console.log(`\nContract coverage: ${exercised.size}/${allOperationIds.length} operations exercised.`);
  if (missing.length > 0) console.log(`Not exercised yet: ${missing.join(", ")}`);
  if (unexpected.length > 0) console.error(`Implemented operations with no contract-checked test: ${unexpected.join(", ")}`);
  return unexpected.length === 0;
}
