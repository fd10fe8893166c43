import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { type DbHandle, openDatabase } from "../../src/db/client.ts";
import { queryRows } from "../../src/db/rows.ts";
import { apiUrl, spawnService } from "../helpers/cluster.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { HttpClient } from "../helpers/http.ts";
import { childEnv, processTestMs, spawnProcess } from "../helpers/process.ts";
import { testAdminToken } from "../helpers/server.ts";

// A real API process stopped by SIGTERM a moment after its last answers: the records of those requests are in the
// table once it has exited, written by its shutdown (its timer would not have written them for a minute).
const postgres = Boolean(process.env.DATABASE_URL);
const main = join(import.meta.dir, "../../src/main.ts");
const dataDir = mkdtempSync(join(tmpdir(), "vend-request-log-shutdown-"));
let database: TestDatabase | undefined;

afterAll(async () => {
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

const settings = { ADMIN_TOKEN: testAdminToken, REQUEST_LOGS_FLUSH_MS: "60000" };

async function recorded(handle: DbHandle): Promise<number> {
  const [row] = await queryRows<{ n: number }>(
    handle.db,
    sql`select count(*)::int as n from request_logs where request_id like 'req_shutdown_%'`,
  );
  return row?.n ?? -1;
}

test(
  "records answered just before SIGTERM are in the table after the process exits",
  async () => {
    if (postgres) database = await createTestDatabase();
    const api = postgres
      ? spawnService(database?.url ?? "", "api", settings)
      : spawnProcess([process.execPath, main, "serve"], childEnv({ VEND_DATA_DIR: dataDir, PORT: "0", ...settings }));
    const url = await apiUrl(api);
    const created = await new HttpClient(url, testAdminToken).post("/admin/v1/accounts", { name: "shut down" });
    expect(created.status).toBe(201);
    const key = (created.json.data.keys as { mode: string; key: string }[]).find((k) => k.mode === "test")?.key;
    const client = new HttpClient(url, key);
    for (let n = 0; n < 40; n++)
      expect((await client.get("/api/v1/wallet", { headers: { "x-request-id": `req_shutdown_${n}` } })).status).toBe(200);
    // Nothing written yet (PostgreSQL, where the table can be read while the process runs): the timer is a minute away.
    if (database) expect(await recorded(database.handle)).toBe(0);

    expect(await api.stop("SIGTERM")).toBe(0);
    expect(api.output()).toContain("stopped (SIGTERM)");
    if (database) {
      expect(await recorded(database.handle)).toBe(40);
      return;
    }
    const handle = await openDatabase({ dataDir });
    try {
      expect(await recorded(handle)).toBe(40);
    } finally {
      await handle.close();
    }
  },
  processTestMs,
);
