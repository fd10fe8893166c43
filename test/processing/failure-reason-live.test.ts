import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { processingRunner } from "../../src/background.ts";
import { ledgerEntries } from "../../src/db/schema/index.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { loadConfig } from "../../src/load-config.ts";
import { idem } from "../helpers/accounts.ts";
import {
  ClubkonnectBook,
  type ClubkonnectOrderRequest,
  type ClubkonnectVendScenario,
  clubkonnectHandlers,
  clubkonnectTestConfig,
} from "../helpers/clubkonnect-mock.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing, transactionRow } from "../helpers/processing.ts";
import { changeTransactions } from "../helpers/queue.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { setupMockFetch } from "../helpers/vtu-mock.ts";

// A live ClubKonnect-style provider behind msw, the only provider of airtime, and the real worker one tick at a
// time. Each way it fails an order maps to the client's failure_code, on the transaction, the listing and the
// transaction.failed event (the payload webhooks deliver).
const network = setupMockFetch({ onUnhandledFrame: "bypass" });
const book = new ClubkonnectBook();
const maxSends = 2;
const scenarios = new Map<string, ClubkonnectVendScenario>([
  ["0011", { kind: "refuse", word: "INVALID_RECIPIENT" }],
  ["0012", { kind: "refuse", word: "INSUFFICIENT_BALANCE" }],
  ["0013", { kind: "refuse", word: "MINIMUM_50" }],
  ["0014", { kind: "cancel", remark: "Cancelled: network ref NX-99812" }],
  ["0015", { kind: "received" }],
  ["0016", { kind: "server-error", outcome: "not-received" }],
]);
const scenarioOf = (order: ClubkonnectOrderRequest): ClubkonnectVendScenario =>
  scenarios.get((order.params.MobileNumber ?? "").slice(-4)) ?? { kind: "deliver" };

let server: TestServer;
let client: HttpClient;
const credit = 1_000_000;

beforeAll(async () => {
  network.enable();
  network.use(...clubkonnectHandlers({ book, vend: scenarioOf }));
  const config = fastProcessing({
    providers: { clubkonnect: clubkonnectTestConfig },
    worker: { ...loadConfig({}).worker, pollMs: 50, leaseSeconds: 5, requerySchedule: [0.2], maxSends },
    routing: { routes: [{ service: "airtime", providers: ["clubkonnect"] }] },
  });
  server = await startTestServer(config);
  const account = await server.createAccount("Live Reasons Ltd");
  const credited = await server.admin.post(
    `/admin/v1/accounts/${account.id}/wallet/credit`,
    { mode: "live", amount_kobo: credit, note: "float" },
    idem(),
  );
  expect(credited.status).toBe(200);
  client = server.client(account.liveKey);
});
afterAll(async () => {
  await server.close();
  network.disable();
});

const db = () => server.database.handle.db;
const tick = () => processingRunner({ ...server.deps, apiBaseUrl: server.url }, "reasons-worker").tick();
const requeryNow = () => changeTransactions(db(), sql`update transactions set next_attempt_at = now() where status = 'pending'`);

interface Txn {
  reference: string;
  status: string;
  metadata: Record<string, string>;
}
const reasonOf = (t: Txn | undefined) => ({ code: t?.metadata.failure_code, message: t?.metadata.failure_message });

async function vend(phone: string): Promise<string> {
  const res = await client.post(
    "/api/v1/vend",
    { product_code: "mtn-airtime", phone_number: phone, amount_kobo: 10_000, metadata: { failure_code: "not_delivered" } },
    idem(),
  );
  expect(res.status).toBe(202);
  // The caller's value is gone at acceptance.
  expect(reasonOf(res.json.data)).toEqual({ code: undefined, message: undefined });
  return res.json.data.reference;
}

/** Ticks (re-queries made due each time) until the order is final, at most `rounds` times. */
async function runUntilFinal(reference: string, rounds = 8): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    if (["successful", "failed"].includes((await transactionRow(db(), reference)).status)) return;
    await requeryNow();
    await tick();
  }
}

/** The failure the same on GET, the listing and the event; held and released once; the provider's words kept out. */
async function expectFailedBecause(reference: string, code: string, providerWords: string[]) {
  const got: Txn = (await client.get(`/api/v1/transactions/${reference}`)).json.data;
  expect(got.status).toBe("failed");
  const reason = reasonOf(got);
  expect(reason.code).toBe(code);
  expect((reason.message ?? "").length).toBeGreaterThan(10);
  for (const words of [...providerWords, "ClubKonnect", "http"]) expect(reason.message).not.toContain(words);
  const listed = await client.get("/api/v1/transactions", { query: { status: "failed", limit: 100 } });
  expect(reasonOf(listed.json.data.items.find((t: Txn) => t.reference === reference))).toEqual(reason);
  const events = await client.get("/api/v1/events", { query: { type: "transaction.failed", limit: 100 } });
  const event = events.json.data.items.find((e: { data: Txn }) => e.data.reference === reference);
  expect(reasonOf(event?.data)).toEqual(reason);
  const row = await transactionRow(db(), reference);
  const entries = await db().select().from(ledgerEntries).where(eq(ledgerEntries.transactionId, row.id));
  expect(entries.map((e) => e.kind).sort()).toEqual(["hold", "release"]);
}

describe("a live provider's failures, as the client reads them", () => {
  test.each([
    ["INVALID_RECIPIENT", "08031230011", "invalid_destination"],
    ["INSUFFICIENT_BALANCE (our float there)", "08031230012", "insufficient_provider_float"],
    ["any other refusal (MINIMUM_50)", "08031230013", "provider_refused"],
    ["ORDER_CANCELLED in the order's answer", "08031230014", "not_delivered"],
  ])("%s → %s", async (_what, phone, code) => {
    const reference = await vend(phone);
    await tick();
    await expectFailedBecause(reference, code, ["INVALID_RECIPIENT", "INSUFFICIENT_BALANCE", "MINIMUM_50", "NX-99812"]);
    // Sent once: a refusal is never sent again.
    expect(book.ordersSentFor(reference).length).toBe(1);
  });

  test("taken, then the re-query says it was cancelled → not_delivered", async () => {
    const reference = await vend("08031230015");
    await tick();
    expect((await transactionRow(db(), reference)).status).toBe("pending");
    book.settle(reference, "ORDER_CANCELLED");
    await runUntilFinal(reference);
    await expectFailedBecause(reference, "not_delivered", ["cancelled and your wallet refunded"]);
    expect(book.ordersSentFor(reference).length).toBe(1);
  });

  test(`never received after ${maxSends} sends → provider_unavailable`, async () => {
    const reference = await vend("08031230016");
    await tick();
    await runUntilFinal(reference, 12);
    await expectFailedBecause(reference, "provider_unavailable", ["never received"]);
    expect(book.ordersSentFor(reference).length).toBe(maxSends);
  });

  test("a delivered order carries neither key; the books balance", async () => {
    const reference = await vend("08031230099");
    await tick();
    const got: Txn & { price_kobo: number } = (await client.get(`/api/v1/transactions/${reference}`)).json.data;
    expect(got.status).toBe("successful");
    expect(reasonOf(got)).toEqual({ code: undefined, message: undefined });
    const wallet = (await client.get("/api/v1/wallet")).json.data;
    expect(wallet).toMatchObject({ held_kobo: 0, balance_kobo: credit - got.price_kobo });
    expect(await reconcileWallets(db())).toEqual([]);
  });
});
