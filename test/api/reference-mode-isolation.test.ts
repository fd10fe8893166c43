import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import type { HttpClient, HttpResult } from "../helpers/http.ts";
import { insertTransactions } from "../helpers/seed.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

/**
 * One account, two modes: every look-up by reference (or by client reference, or a batch by id) with one
 * mode's key answers as if the other mode's order did not exist. The account is the same, so only the mode
 * condition keeps them apart.
 */

interface Order {
  what: string;
  mode: "test" | "live";
  reference: string;
  clientReference: string;
  final: boolean;
}

let server: TestServer;
let account: Awaited<ReturnType<typeof fundedAccount>>;
let other: Awaited<ReturnType<typeof fundedAccount>>;
let testBatchId: string;
const orders: Order[] = [];

beforeAll(async () => {
  server = await startTestServer();
  account = await fundedAccount(server, 1_000_000, "Two Modes Ltd");
  other = await fundedAccount(server, 1_000_000, "Other Ltd");

  // A test order through the API (queued: no worker runs here).
  const vend = await account.client.post(
    "/api/v1/vend",
    { product_code: "mtn-airtime", phone_number: "08031230001", amount_kobo: 10_000, client_reference: "iso-test" },
    idem(),
  );
  if (vend.status !== 202) throw new Error(`vend failed: ${vend.text}`);
  orders.push({
    what: "test order",
    mode: "test",
    reference: vend.json.data.reference,
    clientReference: "iso-test",
    final: false,
  });

  const batch = await account.client.post(
    "/api/v1/vend/batches",
    {
      orders: [
        {
          service: "airtime",
          product_code: "mtn-airtime",
          phone_number: "08031230002",
          amount_kobo: 10_000,
          client_reference: "iso-batch",
        },
      ],
    },
    idem(),
  );
  if (batch.status !== 202) throw new Error(`batch failed: ${batch.text}`);
  testBatchId = batch.json.data.id;
  const batchOrders = await account.client.get("/api/v1/transactions", { query: { batch_id: testBatchId } });
  orders.push({
    what: "test batch order",
    mode: "test",
    reference: batchOrders.json.data.items[0].reference,
    clientReference: "iso-batch",
    final: false,
  });

  // Live orders of the same account, one still open and one final (a live vend needs a provider route here).
  const live = await insertTransactions(server.database.handle.db, {
    accountId: account.id,
    mode: "live",
    count: 2,
    generate: (index) =>
      index === 0
        ? { status: "pending", clientReference: "iso-live-open" }
        : { status: "successful", clientReference: "iso-live-final" },
  });
  for (const row of live) {
    orders.push({
      what: `live ${row.status} order`,
      mode: "live",
      reference: row.reference,
      clientReference: row.clientReference ?? "",
      final: row.status === "successful",
    });
  }
}, 60_000);
afterAll(() => server.close());

const keyOf = (owner: { testKey: string; liveKey: string }, mode: "test" | "live") =>
  server.client(mode === "test" ? owner.testKey : owner.liveKey);
const otherMode = (mode: "test" | "live"): "test" | "live" => (mode === "test" ? "live" : "test");

function expectNotFound(res: HttpResult) {
  expect(res.status).toBe(404);
  expect(res.json).toEqual({ success: false, code: "NOT_FOUND", message: "Transaction not found", data: null });
}

/** Every way a key looks an order up: by reference (with and without a long-poll), by search, by client reference. */
async function lookUps(client: HttpClient, order: Order) {
  const started = performance.now();
  const waited = await client.get(`/api/v1/transactions/${order.reference}`, { query: { wait: 2 } });
  const waitedMs = performance.now() - started;
  return {
    byReference: await client.get(`/api/v1/transactions/${order.reference}`),
    waited,
    waitedMs,
    bySearch: await client.get("/api/v1/transactions", { query: { search: order.reference } }),
    byClientReference: await client.get("/api/v1/transactions", { query: { client_reference: order.clientReference } }),
  };
}

describe("a key does not see the other mode's order by its reference", () => {
  test("control: each order is found by its own mode's key, on every path", async () => {
    expect(orders.map((o) => o.mode).sort()).toEqual(["live", "live", "test", "test"]);
    // In parallel: each open order's long-poll takes its whole wait.
    await Promise.all(
      orders.map(async (order) => {
        const found = await lookUps(keyOf(account, order.mode), order);
        expect(found.byReference.status).toBe(200);
        expect(found.byReference.json.data).toMatchObject({ reference: order.reference, mode: order.mode });
        expect(found.waited.status).toBe(200);
        expect(found.waited.json.data.reference).toBe(order.reference);
        // An open order is waited on for the whole 2 s; the refusals below answer well before that.
        if (!order.final) expect(found.waitedMs).toBeGreaterThan(1_900);
        expect(found.bySearch.json.data.items.map((t: { reference: string }) => t.reference)).toEqual([order.reference]);
        expect(found.byClientReference.json.data.items.map((t: { reference: string }) => t.reference)).toEqual([order.reference]);
        const admin = await server.admin.get(`/admin/v1/transactions/${order.reference}`);
        expect(admin.json.data).toMatchObject({ reference: order.reference, mode: order.mode, account_id: account.id });
      }),
    );
  }, 30_000);

  for (const [title, owner] of [
    ["the same account's other mode", () => account],
    ["another account, either mode", () => other],
  ] as const) {
    test(`${title}: 404 NOT_FOUND by reference, at once with wait; empty lists by search and client reference`, async () => {
      for (const order of orders) {
        const modes: ("test" | "live")[] = owner() === account ? [otherMode(order.mode)] : ["test", "live"];
        for (const mode of modes) {
          const seen = await lookUps(keyOf(owner(), mode), order);
          const label = `${order.what} with a ${mode} key`;
          if (seen.byReference.status !== 404) throw new Error(`${label}: ${seen.byReference.status} ${seen.byReference.text}`);
          expectNotFound(seen.byReference);
          expectNotFound(seen.waited);
          // Nothing to wait for: answered at once, not after the 2 s a found open order would wait.
          expect(seen.waitedMs).toBeLessThan(1_500);
          expect(seen.bySearch.status).toBe(200);
          expect(seen.bySearch.json.data.items).toEqual([]);
          expect(seen.byClientReference.status).toBe(200);
          expect(seen.byClientReference.json.data.items).toEqual([]);
        }
      }
    }, 30_000);
  }

  test("a test batch is 404 to the live key, and its orders are not listed for it", async () => {
    expect((await account.client.get(`/api/v1/vend/batches/${testBatchId}`)).status).toBe(200);
    const read = await server.client(account.liveKey).get(`/api/v1/vend/batches/${testBatchId}`);
    expect(read.status).toBe(404);
    expect(read.json).toMatchObject({ success: false, code: "NOT_FOUND", data: null });
    const listed = await server.client(account.liveKey).get("/api/v1/transactions", { query: { batch_id: testBatchId } });
    expect(listed.status).toBe(200);
    expect(listed.json.data.items).toEqual([]);
  });
});
