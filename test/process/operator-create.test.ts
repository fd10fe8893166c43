import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processTestMs, spawnProcess } from "../helpers/process.ts";

const dataDir = mkdtempSync(join(tmpdir(), "vend-operator-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** `vend operator create` as an operator runs it, against an embedded database of its own. */
async function createOperator(...args: string[]) {
  const env = { ...process.env, DATABASE_URL: undefined, VEND_DATA_DIR: dataDir, LOG_LEVEL: "silent" };
  const run = spawnProcess([process.execPath, "src/main.ts", "operator", "create", ...args], env);
  const code = await run.finished();
  return { code, output: run.output() };
}

describe("vend operator create (bootstrap without ADMIN_TOKEN)", () => {
  test(
    "prints the token once and exits 0; the same name again exits 1; bad arguments exit 2 with the usage",
    async () => {
      const first = await createOperator("--name", "root-ops", "--role", "admin");
      expect(first.code).toBe(0);
      expect(first.output).toMatch(/Created operator root-ops \(admin, [0-9a-f-]{36}\)/);
      expect(first.output).toMatch(/Token \(shown once, store it now\): op_[0-9A-Za-z]{40}\n/);

      const again = await createOperator("--name", "root-ops", "--role", "viewer");
      expect(again.code).toBe(1);
      expect(again.output).toContain("exists already");

      const bad = await createOperator("--name", "x", "--role", "boss");
      expect(bad.code).toBe(2);
      expect(bad.output).toContain(
        "option '--role <role>' argument 'boss' is invalid. Allowed choices are viewer, operator, admin.",
      );
      expect(bad.output).toContain("Usage: vend operator create [options]");
    },
    processTestMs,
  );
});
