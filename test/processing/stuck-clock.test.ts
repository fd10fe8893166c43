import { afterAll, afterEach, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { sql } from "drizzle-orm";
import { processingRunner } from "../../src/background.ts";
import { raiseStuckOrders } from "../../src/jobs/tasks/stuck-orders.ts";
import { loadConfig } from "../../src/load-config.ts";
import { fundedAccount } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing, transactionRow, vendAirtime } from "../helpers/processing.ts";
import { changeTransactions } from "../helpers/queue.ts";
import { captureLogs, startTestServer, type TestServer } from "../helpers/server.ts";

// The stuck cutoff (STUCK_AFTER_MINUTES), its list, and the age a stopped re-query logs are measured on the
// database's clock, the one that stamped created_at, not on the process's. Each test skews this process's
// clock (setSystemTime) by an hour or more, then ages its order with the database's own now(), so the
// database's answer is the one expected. On PostgreSQL the server's clock is not this process's: a decision by
// the process clock decides the other way, and the test fails. (The embedded engine reads this process's
// clock, so there both clocks move together.)
const defaults = loadConfig({});
const hourMs = 3_600_000;
let server: TestServer;
let client: HttpClient;

beforeAll(async () => {
  const fast = fastProcessing();
  server = await startTestServer(
    fastProcessing({
      // No order is due again while the file runs unless a test makes it so: each tick claims only its own.
      worker: { ...defaults.worker, ...fast.worker, requerySchedule: [600] },
      // The sandbox keeps a 4444 order pending until its (far-off) callback.
      providers: { sandbox: { ...defaults.providers.sandbox, callbackDelayMs: 3_600_000, latencyMs: 0 } },
      operations: { ...defaults.operations, stuckAfterMinutes: 30, requeryMaxAgeHours: 1 },
    }),
  );
  client = (await fundedAccount(server, 1_000_000)).client;
});
afterEach(() => setSystemTime());
afterAll(() => server.close());

const db = () => server.database.handle.db;
const tick = () => processingRunner({ ...server.deps, apiBaseUrl: server.url }, "stuck-clock-worker").tick();
const skewBy = (ms: number) => setSystemTime(new Date(Date.now() + ms));

/** A sandbox order the worker has sent and that stays pending. */
async function pendingOrder(phone: string): Promise<string> {
  const reference = await vendAirtime(client, phone);
  expect(await tick()).toBe(1);
  expect((await transactionRow(db(), reference)).status).toBe("pending");
  return reference;
}

/** Accepted `minutes` before the database's now. */
const acceptedAgo = (reference: string, minutes: number, requeryNow = false) =>
  changeTransactions(
    db(),
    sql`update transactions set created_at = now() - make_interval(mins => ${minutes}),
          next_attempt_at = case when ${requeryNow} then now() else next_attempt_at end
        where reference = ${reference}`,
  );

const stuckList = async () => {
  const res = await server.admin.get("/admin/v1/transactions", { query: { stuck: "true" } });
  expect(res.status).toBe(200);
  return (res.json.data.items as { reference: string }[]).map((item) => item.reference);
};

const warningsIn = (lines: string[], msg: string) =>
  lines.map((line) => JSON.parse(line)).filter((line) => line.level === 40 && line.msg === msg);

describe("stuck orders follow the database's clock", () => {
  test("an order past STUCK_AFTER_MINUTES on the database's clock is raised and listed, though the process's clock runs an hour behind", async () => {
    const stuck = await pendingOrder("08031254444");
    skewBy(-hourMs);
    await acceptedAgo(stuck, 31);

    expect(await stuckList()).toContain(stuck);
    const logs = captureLogs(server);
    let raised: number;
    try {
      raised = await raiseStuckOrders(server.deps);
    } finally {
      logs.restore();
    }
    expect(raised).toBe(1);
    const warnings = warningsIn(logs.lines, "order stuck pending; raised to operators");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ reference: stuck, ageMinutes: 31 });
    expect((await transactionRow(db(), stuck)).stuckRaisedAt).not.toBeNull();
  });

  test("an order within STUCK_AFTER_MINUTES on the database's clock is neither raised nor listed, though the process's clock runs an hour ahead", async () => {
    const fresh = await pendingOrder("08031264444");
    skewBy(hourMs);
    await acceptedAgo(fresh, 1);

    expect(await stuckList()).not.toContain(fresh);
    expect(await raiseStuckOrders(server.deps)).toBe(0);
    expect((await transactionRow(db(), fresh)).stuckRaisedAt).toBeNull();
  });

  test("a re-query stopped past REQUERY_MAX_AGE_HOURS logs the order's age on the database's clock, though the process's clock runs three hours behind", async () => {
    const reference = await pendingOrder("08031274444");
    skewBy(-3 * hourMs);
    await acceptedAgo(reference, 61, true);

    const logs = captureLogs(server);
    try {
      expect(await tick()).toBe(1);
    } finally {
      logs.restore();
    }
    expect((await transactionRow(db(), reference)).nextAttemptAt).toBeNull();
    const stopped = warningsIn(logs.lines, "re-queries stopped; left for operators");
    expect(stopped).toHaveLength(1);
    expect(stopped[0]).toMatchObject({ reference, ageHours: 1 });
  });
});
