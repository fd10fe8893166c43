import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { queryRows } from "../../src/db/rows.ts";
import { apiUrl, spawnService } from "../helpers/cluster.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { childEnv, processTestMs, spawnProcess } from "../helpers/process.ts";
import { parsePrometheusText } from "../helpers/prometheus.ts";

const main = join(import.meta.dir, "../../src/main.ts");
const dataDir = mkdtempSync(join(tmpdir(), "vend-worker-metrics-"));
const token = "worker-metrics-token-0123456789";
let database: TestDatabase | undefined;

afterAll(async () => {
  rmSync(dataDir, { recursive: true, force: true });
  await database?.drop();
});

/** The embedded database in its own directory, or (DATABASE_URL) a fresh PostgreSQL database. */
async function databaseEnv(): Promise<Record<string, string>> {
  if (!process.env.DATABASE_URL) return { VEND_DATA_DIR: dataDir };
  database = await createTestDatabase();
  return { DATABASE_URL: database.url ?? "" };
}

describe("vend work with METRICS_ENABLED", () => {
  test(
    "serves /metrics on METRICS_PORT behind METRICS_TOKEN, and stops with the process",
    async () => {
      const env = childEnv({ ...(await databaseEnv()), METRICS_ENABLED: "true", METRICS_PORT: "0", METRICS_TOKEN: token });
      const proc = spawnProcess([process.execPath, main, "work"], env);
      try {
        const [, url] = await proc.waitFor(/metrics at (http:\/\/\S+\/metrics)\)/);
        expect((await fetch(url ?? "")).status).toBe(401);
        const res = await fetch(url ?? "", { headers: { authorization: `Bearer ${token}` } });
        expect(res.status).toBe(200);
        const families = parsePrometheusText(await res.text());
        expect(families.get("vend_queue_depth")?.samples.map((s) => s.value)).toEqual([0]);
        expect(families.has("vend_vends_total")).toBe(true);
      } finally {
        expect(await proc.stop()).toBe(0);
      }
    },
    processTestMs,
  );

  // The credential registry's LISTEN connection (and its heartbeats) is for processes that authenticate.
  test.skipIf(!process.env.DATABASE_URL)(
    "a worker-only process keeps no credential registry; an API process keeps one (PostgreSQL)",
    async () => {
      const own = await createTestDatabase();
      const listeners = async () =>
        (
          await queryRows<{ n: number }>(
            own.handle.db,
            sql`select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name = 'vend-watch'`,
          )
        )[0]?.n;
      const worker = spawnService(own.url ?? "", "worker", { METRICS_ENABLED: "true", METRICS_PORT: "0" });
      const api = { proc: undefined as ReturnType<typeof spawnService> | undefined };
      try {
        await worker.waitFor(/metrics at (http:\/\/\S+\/metrics)/);
        expect(await listeners()).toBe(0);
        api.proc = spawnService(own.url ?? "", "api");
        await apiUrl(api.proc);
        expect(await listeners()).toBe(1);
      } finally {
        await api.proc?.stop();
        await worker.stop();
        await own.drop();
      }
    },
    90_000,
  );
});
