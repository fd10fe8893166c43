import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runsAloneFiles, runsAloneMarker, runsOnceFiles, runsOnceMarker, suiteDatabaseTies } from "../helpers/runs-once.ts";

const root = join(import.meta.dir, "..", "..");

describe("test files that run once, in the embedded run", () => {
  const files = runsOnceFiles(root);

  test("there are some, and none of them uses the suite's database", () => {
    expect(files.length).toBeGreaterThan(5);
    const tied = files
      .map((file) => ({ file, ties: suiteDatabaseTies(readFileSync(join(root, file), "utf8")) }))
      .filter(({ ties }) => ties.length > 0);
    expect(tied).toEqual([]);
  });

  test("the check finds each tie planted in a file", () => {
    expect(suiteDatabaseTies('import { startTestServer } from "../helpers/server.ts";')).toEqual([
      "a helper on the suite's database",
    ]);
    expect(suiteDatabaseTies("const database = await createTestDatabase();")).toHaveLength(1);
    expect(suiteDatabaseTies('spawnService(url, "api")')).toHaveLength(1);
    expect(suiteDatabaseTies("if (process.env.DATABASE_URL) run();")).toEqual(["DATABASE_URL read from the environment"]);
    expect(suiteDatabaseTies("const config = loadConfig();")).toEqual(["loadConfig() on the environment"]);
    expect(suiteDatabaseTies('childEnv({ VEND_DATA_DIR: dir, DATABASE_URL: "postgres://x@db.internal/vend" })')).toEqual([]);
  });

  test("only a first line that is the marker counts", () => {
    const dir = mkdtempSync(join(tmpdir(), "vend-runs-once-"));
    try {
      const test = join(dir, "test");
      Bun.spawnSync(["mkdir", "-p", join(test, "unit")]);
      writeFileSync(join(test, "unit", "marked.test.ts"), `${runsOnceMarker} it never uses the suite's database.\n`);
      writeFileSync(join(test, "unit", "later.test.ts"), `import "x";\n${runsOnceMarker} not on its first line.\n`);
      writeFileSync(join(test, "unit", "plain.test.ts"), 'import "x";\n');
      expect(runsOnceFiles(dir)).toEqual(["test/unit/marked.test.ts"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("test files that run alone, after the others", () => {
  test("the delayed-callback budget is one, and a marker only counts on the first line", () => {
    expect(runsAloneFiles(root)).toContain("test/processing/sandbox-delay.test.ts");
    const dir = mkdtempSync(join(tmpdir(), "vend-runs-alone-"));
    try {
      const test = join(dir, "test");
      Bun.spawnSync(["mkdir", "-p", join(test, "processing")]);
      writeFileSync(join(test, "processing", "timed.test.ts"), `${runsAloneMarker} it measures a budget.\n`);
      writeFileSync(join(test, "processing", "once.test.ts"), `${runsOnceMarker} it never uses the suite's database.\n`);
      writeFileSync(join(test, "processing", "later.test.ts"), `import "x";\n${runsAloneMarker} not first.\n`);
      expect(runsAloneFiles(dir)).toEqual(["test/processing/timed.test.ts"]);
      expect(runsOnceFiles(dir)).toEqual(["test/processing/once.test.ts"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
