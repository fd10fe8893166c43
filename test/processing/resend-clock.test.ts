import { afterAll, afterEach, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { sql } from "drizzle-orm";
import { processingRunner } from "../../src/background.ts";
import { loadConfig } from "../../src/load-config.ts";
import { createVtuProvider } from "../../src/providers/vtu/client.ts";
import { idem } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing, transactionRow, vendAirtime } from "../helpers/processing.ts";
import { changeTransactions } from "../helpers/queue.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { setupMockFetch, VtuBook, type VtuPayBody, vtuHandlers, vtuTestConfig } from "../helpers/vtu-mock.ts";

// The re-send age (WORKER_MAX_RESEND_AGE_SECONDS) is measured on the database's clock, the one that stamped the
// order's created_at, not on the worker's. Each test skews this process's clock (setSystemTime) by two hours,
// then ages the order with the database's own now(), so the database's answer is the one expected. On
// PostgreSQL the server's clock is not this process's: a decision by the process clock decides the other way,
// and the test fails. (The embedded engine reads this process's clock, so there both clocks move together.)
const maxResendAgeSeconds = 3600;
const skewMs = 2 * 3_600_000;
const network = setupMockFetch({ onUnhandledFrame: "bypass" });
const book = new VtuBook();
let server: TestServer;
let client: HttpClient;

beforeAll(async () => {
  network.enable();
  // Every pay answers 502 and never reaches the books, so every re-query answers "not found".
  network.use(...vtuHandlers({ book, pay: { kind: "server-error", outcome: "not-received" } }));
  const worker = {
    ...loadConfig({}).worker,
    pollMs: 50,
    leaseSeconds: 5,
    requerySchedule: [0.2],
    maxSends: 5,
    maxResendAgeSeconds,
  };
  server = await startTestServer(fastProcessing({ providers: { vtu: vtuTestConfig }, worker }), {
    liveProviders: [createVtuProvider(vtuTestConfig)],
  });
  const account = await server.createAccount("Skewed Clock Co");
  const credit = await server.admin.post(
    `/admin/v1/accounts/${account.id}/wallet/credit`,
    { mode: "live", amount_kobo: 1_000_000, note: "float" },
    idem(),
  );
  expect(credit.status).toBe(200);
  client = server.client(account.liveKey);
});
afterEach(() => setSystemTime());
afterAll(async () => {
  await server.close();
  network.disable();
});

const db = () => server.database.handle.db;
const tick = () => processingRunner({ ...server.deps, apiBaseUrl: server.url }, "clock-worker").tick();
const pays = (reference: string) => book.requestsTo("pay").filter((r) => (r.body as VtuPayBody).request_id === reference).length;

/** Accepted `seconds` before the database's now, and due for its re-query. */
const acceptedAgo = (reference: string, seconds: number) =>
  changeTransactions(
    db(),
    sql`update transactions set created_at = now() - make_interval(secs => ${seconds}), next_attempt_at = now()
        where reference = ${reference}`,
  );

describe("the re-send age follows the database's clock", () => {
  test("an order past the age on the database's clock is failed, not re-sent, though the worker's clock runs two hours behind", async () => {
    const reference = await vendAirtime(client, "08031240001");
    expect(await tick()).toBe(1);
    expect(pays(reference)).toBe(1);

    setSystemTime(new Date(Date.now() - skewMs));
    await acceptedAgo(reference, maxResendAgeSeconds + 60);
    expect(await tick()).toBe(1);
    const failed = await transactionRow(db(), reference);
    expect(failed.status).toBe("failed");
    expect(failed.failureReason).toMatch(/never received the order after 1 send\b/);
    expect(pays(reference)).toBe(1);
  });

  test("an order within the age on the database's clock is re-sent, though the worker's clock runs two hours ahead", async () => {
    const reference = await vendAirtime(client, "08031240002");
    expect(await tick()).toBe(1);
    expect(pays(reference)).toBe(1);

    setSystemTime(new Date(Date.now() + skewMs));
    await acceptedAgo(reference, 60);
    expect(await tick()).toBe(1);
    const resent = await transactionRow(db(), reference);
    expect(resent.status).toBe("pending");
    expect(resent.failureReason).toBeNull();
    expect(resent.providerSends).toBe(2);
    expect(pays(reference)).toBe(2);
  });
});
