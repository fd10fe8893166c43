import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { sql } from "drizzle-orm";
import { processingRunner } from "../../src/background.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { loadConfig } from "../../src/load-config.ts";
import { fundedAccount } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing, transactionRow, vendAirtime } from "../helpers/processing.ts";
import { changeTransactions } from "../helpers/queue.ts";
import { captureLogs, startTestServer, type TestServer } from "../helpers/server.ts";

const defaults = loadConfig({});

let server: TestServer;
let client: HttpClient;

beforeAll(async () => {
  server = await startTestServer(
    fastProcessing({
      providers: { sandbox: { ...defaults.providers.sandbox, callbackDelayMs: 3_600_000, latencyMs: 0 } },
      operations: { ...defaults.operations, requeryMaxAgeHours: 1 },
    }),
  );
  client = (await fundedAccount(server, 1_000_000)).client;
});
afterAll(() => server.close());

const db = () => server.database.handle.db;
const tick = () => processingRunner({ ...server.deps, apiBaseUrl: server.url }, "age-worker").tick();

/** Accepted `minutes` ago, and due for its next re-query now. */
const acceptedAgo = (reference: string, minutes: number) =>
  changeTransactions(
    db(),
    sql`update transactions set created_at = now() - make_interval(mins => ${minutes}), next_attempt_at = now()
        where reference = ${reference}`,
  );

const stopped = (lines: string[]) =>
  lines
    .map((line) => JSON.parse(line))
    .filter((line) => line.level === 40 && line.msg === "re-queries stopped; left for operators");

describe("re-query age limit (REQUERY_MAX_AGE_HOURS)", () => {
  test("re-queries keep their schedule within the age; past it the order stays pending, unclaimed, logged once", async () => {
    const reference = await vendAirtime(client, "08031234444");
    expect(await tick()).toBe(1);
    const first = await transactionRow(db(), reference);
    expect(first.status).toBe("pending");
    expect(first.nextAttemptAt).not.toBeNull();

    const logs = captureLogs(server);
    try {
      // Half an hour old: re-queried (4444 stays pending) and scheduled again.
      await acceptedAgo(reference, 30);
      expect(await tick()).toBe(1);
      const young = await transactionRow(db(), reference);
      expect(young.status).toBe("pending");
      expect(young.nextAttemptAt).not.toBeNull();
      expect(young.attempts).toBe(first.attempts + 1);
      expect(stopped(logs.lines)).toHaveLength(0);

      // Past the hour: this re-query is the last one.
      await acceptedAgo(reference, 61);
      expect(await tick()).toBe(1);
      const old = await transactionRow(db(), reference);
      expect(old.status).toBe("pending");
      expect(old.nextAttemptAt).toBeNull();
      expect(old.leaseOwner).toBeNull();
      expect(stopped(logs.lines)).toHaveLength(1);
      expect(stopped(logs.lines)[0]).toMatchObject({ reference, provider: "sandbox", ageHours: 1 });

      // No worker claims it again, so nothing more is logged.
      expect(await tick()).toBe(0);
      expect(await tick()).toBe(0);
      expect((await transactionRow(db(), reference)).attempts).toBe(old.attempts);
      expect(stopped(logs.lines)).toHaveLength(1);
    } finally {
      logs.restore();
    }

    // Left for operators: still holding its money until one resolves it.
    expect((await client.get("/api/v1/wallet")).json.data.held_kobo).toBe(9_700);
    const resolved = await server.admin.post(`/admin/v1/transactions/${reference}/resolve`, {
      status: "failed",
      note: "Provider never settled it",
    });
    expect(resolved.status).toBe(200);
    expect((await client.get("/api/v1/wallet")).json.data.held_kobo).toBe(0);
    expect(await reconcileWallets(db())).toEqual([]);
  }, 30_000);
});
