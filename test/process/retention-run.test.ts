import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type SQL, sql } from "drizzle-orm";
import { type DbHandle, openDatabase } from "../../src/db/client.ts";
import { runMigrations } from "../../src/db/migrate.ts";
import { queryRows } from "../../src/db/rows.ts";
import { apiUrl } from "../helpers/cluster.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { childEnv, processTestMs, spawnProcess } from "../helpers/process.ts";

// `vend retention run` as an operator runs it: a real process on the database the settings name.
const main = join(import.meta.dir, "../../src/main.ts");
const dataDir = mkdtempSync(join(tmpdir(), "vend-retention-run-"));
let database: TestDatabase | undefined;

afterAll(async () => {
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

/**
 * Work on the database the command will use: PostgreSQL (DATABASE_URL) a fresh database kept open, embedded
 * its directory, opened for `work` and closed again so the command can take it.
 */
async function withDatabase<T>(work: (handle: DbHandle) => Promise<T>): Promise<T> {
  if (process.env.DATABASE_URL) {
    database ??= await createTestDatabase();
    return work(database.handle);
  }
  const handle = await openDatabase({ dataDir });
  try {
    await runMigrations(handle);
    return await work(handle);
  } finally {
    await handle.close();
  }
}

const databaseEnv = () => (process.env.DATABASE_URL ? { DATABASE_URL: database?.url ?? "" } : { VEND_DATA_DIR: dataDir });

async function retentionRun(...args: string[]) {
  const run = spawnProcess([process.execPath, main, "retention", "run", ...args], childEnv(databaseEnv()));
  const code = await run.finished();
  return { code, output: run.output() };
}

const ago = (days: number) => sql`now() - make_interval(days => ${days}::int)`;
const count = (handle: DbHandle, query: SQL) => queryRows<{ n: number }>(handle.db, query).then(([row]) => row?.n);

/** Provider callbacks (kept 90 days by default) and low-balance anomalies (90 days): 3 and 2 past it, 1 each inside. */
async function seed(handle: DbHandle, prefix: string) {
  for (const [i, days] of [400, 200, 100, 10].entries()) {
    await handle.db.execute(sql`insert into provider_callbacks (provider, reference, headers, raw_body, signature_valid, http_status, result_code, received_at)
      values ('sandbox', ${`${prefix}-${i}`}, '{}'::jsonb, '{}', true, 200, 'applied', ${ago(days)})`);
  }
  for (const days of [400, 100, 10]) {
    await handle.db.execute(sql`insert into provider_anomalies (id, kind, provider, message, created_at)
      values (${crypto.randomUUID()}::uuid, 'low_balance', 'sandbox', ${prefix}, ${ago(days)})`);
  }
}

const left = (handle: DbHandle, prefix: string) =>
  Promise.all([
    count(handle, sql`select count(*)::int as n from provider_callbacks where reference like ${`${prefix}-%`}`),
    count(handle, sql`select count(*)::int as n from provider_anomalies where message = ${prefix}`),
  ]);

describe("vend retention run", () => {
  test(
    "runs a pass now with the RETENTION_* settings, prints the rows deleted per table, exits 0; again: nothing left",
    async () => {
      await withDatabase((handle) => seed(handle, "old"));

      const first = await retentionRun();
      expect(first).toMatchObject({ code: 0 });
      expect(first.output).toMatch(/^Retention pass \((postgres|pglite)\): 5 rows deleted in \d+ statements/m);
      expect(first.output).toMatch(/^ {2}provider_callbacks +3$/m);
      expect(first.output).toMatch(/^ {2}provider_anomalies +2$/m);
      expect(first.output).toMatch(/^ {2}webhook_attempts +0$/m);
      // Kinds whose setting is 0 are named, so nobody wonders why they were not touched.
      expect(first.output).toContain("Kept (setting 0): RETENTION_DELIVERED_EVENTS_DAYS");
      expect(await withDatabase((handle) => left(handle, "old"))).toEqual([1, 1]);

      const again = await retentionRun("--json");
      expect(again.code).toBe(0);
      const pass = JSON.parse(again.output) as { deleted: Record<string, number>; total: number; unfinished: boolean };
      expect(pass).toMatchObject({ total: 0, unfinished: false });
      expect(pass.deleted).toMatchObject({ provider_callbacks: 0, provider_anomalies: 0 });
    },
    processTestMs,
  );

  test.skipIf(Boolean(process.env.DATABASE_URL))(
    "on the embedded database a running server holds: one line saying so, exit 1",
    async () => {
      await withDatabase((handle) => seed(handle, "held"));
      const server = spawnProcess([process.execPath, main], childEnv({ VEND_DATA_DIR: dataDir, PORT: "0" }));
      try {
        await apiUrl(server);
        const run = await retentionRun();
        expect(run.code).toBe(1);
        const lines = run.output.trim().split("\n");
        expect(lines).toHaveLength(1);
        expect(lines[0]).toContain(dataDir);
        expect(lines[0]).toContain(`pid ${server.proc.pid}`);
        expect(lines[0]).toContain("retention");
      } finally {
        expect(await server.stop("SIGTERM")).toBe(0);
      }
    },
    processTestMs,
  );
});
