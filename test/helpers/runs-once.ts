import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

/**
 * A test file whose first line is this runs once per `npm test` pair, in the embedded run: it never uses the
 * suite's database (it starts its own processes on their own embedded directories, or none), so on PostgreSQL
 * it would only repeat, step for step, what the embedded run does. The PostgreSQL run leaves it out
 * (scripts/test.ts); given by path, it runs on either.
 */
export const runsOnceMarker = "// Runs once, in the embedded run:";

/** What ties a test file to the suite's database: its helpers, or DATABASE_URL read from the environment. */
const databaseTies: [RegExp, string][] = [
  [
    /\b(createTestDatabase|createEmptyTestDatabase|startTestServer|spawnService|asServiceRole)\b/,
    "a helper on the suite's database",
  ],
  [/\b(process\.)?env\.DATABASE_URL\b|env\[["']DATABASE_URL["']\]/, "DATABASE_URL read from the environment"],
  [/\bloadConfig\(\)/, "loadConfig() on the environment"],
];

/** Why `source` uses the suite's database (empty: it does not). */
export function suiteDatabaseTies(source: string): string[] {
  return databaseTies.filter(([pattern]) => pattern.test(source)).map(([, why]) => why);
}

/**
 * A test file whose first line is this measures time (a budget in ms for what the service does) and runs by
 * itself after the other files, in both runs (scripts/test.ts): beside three other workers on 2 cores, the
 * process under test got a quarter of a core and missed a 500 ms budget by the suite's own load, not the
 * service's. Given by path, it runs as any other file.
 */
export const runsAloneMarker = "// Runs alone, after the other files:";

/** The test files under `root`/test that carry the run-once marker, relative to `root`. */
export function runsOnceFiles(root: string): string[] {
  return markedFiles(root, runsOnceMarker);
}

/** The test files under `root`/test that carry the run-alone marker, relative to `root`. */
export function runsAloneFiles(root: string): string[] {
  return markedFiles(root, runsAloneMarker);
}

function markedFiles(root: string, marker: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".test.ts") && readFileSync(path, "utf8").startsWith(marker)) found.push(relative(root, path));
    }
  };
  walk(join(root, "test"));
  return found.sort();
}
