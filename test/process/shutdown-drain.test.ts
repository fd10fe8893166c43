import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "drizzle-orm";
import { type DbHandle, openDatabase } from "../../src/db/client.ts";
import { queryRows } from "../../src/db/rows.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { apiUrl, fundDefaultAccount } from "../helpers/cluster.ts";
import { createTestDatabase, type TestDatabase } from "../helpers/database.ts";
import { childEnv, processTestMs, spawnProcess } from "../helpers/process.ts";
import { waitUntil } from "../helpers/wait.ts";

// On PostgreSQL when DATABASE_URL is set, else on an embedded data directory: `npm start` either way.
const main = join(import.meta.dir, "../../src/main.ts");
const dataDir = mkdtempSync(join(tmpdir(), "vend-drain-"));
let database: TestDatabase | undefined;

afterAll(async () => {
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function startService() {
  const env: Record<string, string> = {
    PORT: "0",
    RATE_LIMIT_PER_MINUTE: "0",
    SHUTDOWN_GRACE_SECONDS: "10",
    SHUTDOWN_DELAY_SECONDS: "1",
  };
  if (process.env.DATABASE_URL) {
    database = await createTestDatabase({ maxConnections: 2 });
    env.DATABASE_URL = database.url ?? "";
    env.DATABASE_POOL_SIZE = "4";
  } else {
    env.VEND_DATA_DIR = dataDir;
  }
  const service = spawnProcess([process.execPath, main], childEnv(env));
  const url = await apiUrl(service);
  const [, key] = await service.waitFor(/Test API key \(shown once, store it now\): (rg_test_\w+)/);
  return { service, url, key: key ?? "" };
}

/** What a client sees: the status and body, or the network error's code (ECONNRESET...). */
async function call(url: string, key: string, method: string, path: string, body?: unknown, idempotencyKey?: string) {
  try {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body ? { "content-type": "application/json" } : {}),
        ...(idempotencyKey ? { "idempotency-key": idempotencyKey } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = (await res.json()) as { data: { reference: string; status: string } };
    return { status: res.status, reference: json.data?.reference, state: json.data?.status };
  } catch (error) {
    return { status: 0, error: (error as { code?: string }).code ?? String(error) };
  }
}

const pendingVend = { product_code: "mtn-airtime", phone_number: "08031234444", amount_kobo: 10_000 };

describe("SIGTERM drains", () => {
  test(
    "20 open long-polls and vends in flight are all answered, /readyz turns 503, and the process exits 0 within the grace bound",
    async () => {
      const { service, url, key } = await startService();
      await fundDefaultAccount(url, key, 10_000_000);
      // Ten vends first, whose transactions the GET long-polls wait on (4444 stays pending in test mode).
      const accepted = await Promise.all(
        Array.from({ length: 10 }, (_, i) => call(url, key, "POST", "/api/v1/vend", pendingVend, `first-${i}`)),
      );
      const longPolls = [
        ...Array.from({ length: 10 }, (_, i) => call(url, key, "POST", "/api/v1/vend?wait=25", pendingVend, `wait-${i}`)),
        ...accepted.map((a) => call(url, key, "GET", `/api/v1/transactions/${a.reference}?wait=25`)),
      ];
      // Every one of the 20 is pending once the worker has been through them all: the long-polls are waiting.
      await waitUntil(
        async () => {
          const res = await fetch(`${url}/api/v1/transactions?status=pending&limit=100`, {
            headers: { authorization: `Bearer ${key}` },
          });
          const { data } = (await res.json()) as { data: { items: unknown[] } };
          return data.items.length >= 20;
        },
        { what: "20 orders pending", intervalMs: 50 },
      );

      const inFlight = Array.from({ length: 10 }, (_, i) =>
        call(url, key, "POST", "/api/v1/vend", { ...pendingVend, phone_number: "08031234567" }, `late-${i}`),
      );
      const signalled = performance.now();
      service.proc.kill("SIGTERM");
      // Readiness turns at once: as soon as the process has taken the signal (a few ms), never later.
      let ready = await fetch(`${url}/readyz`);
      while (ready.status === 200 && performance.now() - signalled < 500) {
        await Bun.sleep(10);
        ready = await fetch(`${url}/readyz`);
      }
      expect(ready.status).toBe(503);

      const answers = await Promise.all(longPolls);
      const lastAnswerMs = performance.now() - signalled;
      expect(answers.map((a) => a.error)).toEqual(Array(20).fill(undefined));
      expect(answers.map((a) => a.status).sort()).toEqual([...Array(10).fill(200), ...Array(10).fill(202)]);
      expect(answers.every((a) => a.state === "pending")).toBe(true);
      // Answered at once, not at the end of their 25 s wait nor of the grace period.
      expect(lastAnswerMs).toBeLessThan(3000);
      expect((await Promise.all(inFlight)).map((a) => a.status)).toEqual(Array(10).fill(202));

      expect(await service.proc.exited).toBe(0);
      expect(performance.now() - signalled).toBeLessThan(1000 + 10_000);

      // The books: 30 vends accepted, each held once, wallets reconcile.
      const handle: DbHandle = database?.handle ?? (await openDatabase({ dataDir }));
      const [counts] = await queryRows<{ transactions: number; holds: number }>(
        handle.db,
        sql`select (select count(*)::int from transactions) as transactions,
                 (select count(*)::int from ledger_entries where kind = 'hold') as holds`,
      );
      expect(counts).toEqual({ transactions: 30, holds: 30 });
      expect(await reconcileWallets(handle.db)).toEqual([]);
      if (!database) await handle.close();
    },
    processTestMs,
  );
});
