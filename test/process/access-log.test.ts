import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { childEnv, processTestMs, type StartedProcess, spawnProcess } from "../helpers/process.ts";

// The service writes its log lines in batches (src/logger.ts): none may wait long, and none may be lost
// when the process stops. `npm start` on PostgreSQL when DATABASE_URL is set, else on a data directory.
const main = join(import.meta.dir, "../../src/main.ts");
const dataDir = mkdtempSync(join(tmpdir(), "vend-access-log-"));
let database: TestDatabase | undefined;
const started: StartedProcess[] = [];

afterAll(async () => {
  for (const service of started) await service.stop("SIGKILL");
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function startService(env: Record<string, string> = {}) {
  const settings: Record<string, string> = { PORT: "0", LOG_LEVEL: "info", RATE_LIMIT_PER_MINUTE: "0", ...env };
  if (process.env.DATABASE_URL) {
    database ??= await createTestDatabase({ maxConnections: 1 });
    settings.DATABASE_URL = database.url ?? "";
    settings.DATABASE_POOL_SIZE = "4";
  } else {
    // One directory per process: a failed test's process, still running until afterAll, holds its own.
    settings.VEND_DATA_DIR = join(dataDir, String(started.length));
  }
  const service = spawnProcess([process.execPath, main, "serve"], childEnv(settings));
  started.push(service);
  // A first start on an embedded data directory migrates it, which takes a while on a busy machine.
  const [, url] = await service.waitFor(/listening on (http:\/\/[^\s]+)/);
  return { service, url: url ?? "" };
}

/** `count` requests, each with its own request id, answered before this returns. */
async function requests(url: string, prefix: string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  for (const id of ids) {
    const res = await fetch(`${url}/healthz`, { headers: { "x-request-id": id } });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  }
  return ids;
}

/** The JSON log lines of the output (the start-up banner is plain text). */
function logRecords(output: string): Record<string, unknown>[] {
  return output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line));
}

describe("access lines of a real process", () => {
  test(
    "a line is written within about a second on a quiet service, and every line is written at SIGTERM",
    async () => {
      const { service, url } = await startService();
      // One request, far below a batch: it must not wait for more traffic.
      const [quiet] = await requests(url, "quiet", 1);
      await service.waitFor(new RegExp(`"request_id":"${quiet}"`), 3000);
      // Then a burst, and the stop right after its last answer: the tail is still in the buffer.
      const burst = await requests(url, "burst", 60);
      expect(await service.stop("SIGTERM")).toBe(0);
      const records = logRecords(service.output());
      const logged = new Set(records.filter((r) => r.msg === "request").map((r) => r.request_id));
      expect(burst.filter((id) => !logged.has(id))).toEqual([]);
      expect(records.some((r) => r.msg === "shutting down" && r.signal === "SIGTERM")).toBe(true);
      // The access line's fields, and nothing else (it is not redacted, so it must not grow a client value).
      const line = records.find((r) => r.request_id === burst[0]);
      expect(Object.keys(line ?? {}).sort()).toEqual(
        ["level", "time", "service", "request_id", "method", "route", "operation", "status", "duration_ms", "msg"].sort(),
      );
      expect(line).toMatchObject({ method: "GET", route: "/healthz", operation: "getHealth", status: 200 });
    },
    processTestMs,
  );

  test(
    "a second signal exits at once, and the lines of both signals and of the requests before are written",
    async () => {
      // The first SIGTERM waits out SHUTDOWN_DELAY_SECONDS; the second one leaves by process.exit(1) there.
      const { service, url } = await startService({ SHUTDOWN_DELAY_SECONDS: "30" });
      const ids = await requests(url, "before-stop", 20);
      service.proc.kill("SIGTERM");
      // Long enough for the first to be taken (two signals at once may arrive as one), short of a periodic write.
      await Bun.sleep(200);
      service.proc.kill("SIGTERM");
      expect(await service.proc.exited).toBe(1);
      const records = logRecords(service.output());
      const logged = new Set(records.filter((r) => r.msg === "request").map((r) => r.request_id));
      expect(ids.filter((id) => !logged.has(id))).toEqual([]);
      expect(records.filter((r) => r.msg === "shutting down")).toHaveLength(1);
    },
    processTestMs,
  );
});
