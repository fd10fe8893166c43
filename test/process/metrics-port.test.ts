import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { freePort } from "../helpers/private-cluster.ts";
import { childEnv, processTestMs, type StartedProcess, spawnProcess } from "../helpers/process.ts";

// Two `vend work` processes with metrics on one host, as two systemd units of one machine run them.
const main = join(import.meta.dir, "../../src/main.ts");
const dirs: string[] = [];
const processes: StartedProcess[] = [];
let database: TestDatabase | undefined;

afterEach(async () => {
  await Promise.all(processes.splice(0).map((p) => p.stop("SIGKILL")));
});
afterAll(async () => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await database?.drop();
});

/** PostgreSQL: one database both share. Embedded: a directory each (one process per directory). */
async function databaseEnv(): Promise<Record<string, string>> {
  if (process.env.DATABASE_URL) {
    database ??= await createTestDatabase();
    return { DATABASE_URL: database.url ?? "" };
  }
  const dir = mkdtempSync(join(tmpdir(), "vend-metrics-port-"));
  dirs.push(dir);
  return { VEND_DATA_DIR: dir };
}

async function startWorker(metricsPort: number): Promise<StartedProcess> {
  const env = childEnv({ ...(await databaseEnv()), METRICS_ENABLED: "true", METRICS_PORT: String(metricsPort) });
  const worker = spawnProcess([process.execPath, main, "work"], env);
  processes.push(worker);
  return worker;
}

const metricsUrl = async (worker: StartedProcess) => (await worker.waitFor(/metrics at (http:\/\/\S+\/metrics)\)/))[1] ?? "";

describe("METRICS_PORT with two workers on one host", () => {
  test(
    "the same port twice: the second exits 1 with one line naming METRICS_PORT, no stack; the first keeps serving",
    async () => {
      const port = await freePort();
      const first = await startWorker(port);
      const url = await metricsUrl(first);
      expect(url).toBe(`http://127.0.0.1:${port}/metrics`);

      const second = await startWorker(port);
      expect(await second.finished()).toBe(1);
      const output = second.output();
      expect(output).not.toMatch(/^\s+at /m);
      expect(output).not.toContain("Bun v");
      // Warnings logged as JSON are not what the operator reads: the one plain line is.
      const lines = output
        .trim()
        .split("\n")
        .filter((line) => !line.startsWith("{"));
      expect(lines).toEqual([
        `Invalid configuration: METRICS_PORT ${port} is in use on this host (another vend work?): give each worker process its own METRICS_PORT`,
      ]);

      expect((await fetch(url)).status).toBe(200);
      expect(await first.stop("SIGTERM")).toBe(0);
    },
    processTestMs,
  );

  test(
    "a port each: both serve their own /metrics",
    async () => {
      const ports = [await freePort(), await freePort()];
      const workers = [await startWorker(ports[0] ?? 0), await startWorker(ports[1] ?? 0)];
      const urls = await Promise.all(workers.map(metricsUrl));
      expect(urls).toEqual(ports.map((port) => `http://127.0.0.1:${port}/metrics`));
      for (const url of urls) expect((await fetch(url)).status).toBe(200);
      for (const worker of workers) expect(await worker.stop("SIGTERM")).toBe(0);
    },
    processTestMs,
  );
});
