import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { childEnv, processTestMs, spawnProcess } from "../helpers/process.ts";

const main = join(import.meta.dir, "../../src/main.ts");
const dataDir = mkdtempSync(join(tmpdir(), "vend-start-"));
let database: TestDatabase | undefined;

afterAll(async () => {
  rmSync(dataDir, { recursive: true, force: true });
  await database?.drop();
});

/** `npm start` is `bun src/main.ts`; the same process, on a free port. */
async function startOnce(env: Record<string, string | undefined>) {
  const proc = spawnProcess([process.execPath, main], childEnv({ PORT: "0", ...env }));
  const [, url] = await proc.waitFor(/listening on (http:\/\/[^\s]+)/);
  const health = await fetch(`${url}/healthz`);
  const output = proc.output();
  const exitCode = await proc.stop();
  return { url, health: { status: health.status, body: await health.json() }, output, exitCode };
}

describe("npm start", () => {
  test(
    "on the embedded database: serves /healthz, prints a test key once, stops on SIGTERM",
    async () => {
      const first = await startOnce({ VEND_DATA_DIR: dataDir });
      expect(first.health.status).toBe(200);
      expect(first.health.body.data).toEqual({ status: "ok" });
      expect(first.output).toMatch(/Test API key \(shown once, store it now\): rg_test_[0-9A-Za-z]{40}/);
      expect(first.output).toContain("database: pglite");
      expect(first.exitCode).toBe(0);
      const second = await startOnce({ VEND_DATA_DIR: dataDir });
      expect(second.health.status).toBe(200);
      expect(second.output).not.toContain("rg_test_");
    },
    processTestMs,
  );

  test.skipIf(!process.env.DATABASE_URL)(
    "on PostgreSQL (DATABASE_URL): the same",
    async () => {
      database = await createTestDatabase();
      const first = await startOnce({ DATABASE_URL: database.url });
      expect(first.health.status).toBe(200);
      expect(first.output).toContain("database: postgres");
      expect(first.output).toMatch(/rg_test_[0-9A-Za-z]{40}/);
      const second = await startOnce({ DATABASE_URL: database.url });
      expect(second.output).not.toContain("rg_test_");
    },
    60_000,
  );

  test("a bad variable is named and the process exits non-zero", async () => {
    const proc = spawnProcess([process.execPath, main], childEnv({ PORT: "eighty", VEND_DATA_DIR: dataDir }));
    const code = await proc.proc.exited;
    expect(code).toBe(1);
    await proc.waitFor(/Invalid configuration/, 2000);
    expect(proc.output()).toContain("Invalid configuration: PORT");
  });

  test(
    "a providers file naming a product the catalogue lacks stops start-up, naming the entry",
    async () => {
      const file = join(dataDir, "providers.yaml");
      writeFileSync(
        file,
        `providers:
  vtu:
    base_url: https://vtu.provider.test
    api_key_env: START_VTU_KEY
    secret_key_env: START_VTU_KEY
    callback_token_env: START_VTU_KEY
    callback_secret_env: START_VTU_KEY
    products:
      mtn-data-9tb-1d: mtn-9tb
`,
      );
      const env = { VEND_DATA_DIR: join(dataDir, "catalogue-check"), PROVIDERS_FILE: file, START_VTU_KEY: "start-test-secret" };
      const proc = spawnProcess([process.execPath, main], childEnv(env));
      expect(await proc.proc.exited).toBe(1);
      expect(proc.output()).toContain(
        `Invalid configuration: PROVIDERS_FILE ${file}: providers.vtu.products.mtn-data-9tb-1d is not a product in the catalogue`,
      );
      expect(proc.output()).not.toContain("    at ");
    },
    processTestMs,
  );
});
