import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { count } from "drizzle-orm";
import { ledgerEntries, transactions } from "../../src/db/schema/index.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

function expectAccepted(json: { success: boolean; code: string; message: string; data: Record<string, unknown> }) {
  expect([json.success, json.code]).toEqual([true, "OK"]);
  expect(json.message).toContain("accepted");
  expect([json.data.status, json.data.mode, json.data.completed_at]).toEqual(["queued", "test", null]);
  expect(json.data.reference).toMatch(/^txn_[A-Za-z0-9]{24,}$/);
}

describe("accepted vends (202, queued)", () => {
  test("airtime by product code: aliases, masking, discount price, metadata rules", async () => {
    const { client } = await fundedAccount(server, 1_000_000);
    const res = await client.post(
      "/api/v1/vend",
      {
        serviceid: "mtn-airtime",
        receiver_phone_number: "+2348031234567",
        network: "mtn",
        amount: 10000,
        client_reference: "order-1001",
        metadata: { order_id: "1001", route: "caller-route", plan_name: "caller", partial: "x", requested_mb: "1" },
      },
      idem(),
    );
    expect(res.status).toBe(202);
    expectAccepted(res.json);
    const txn = res.json.data;
    expect(txn).toMatchObject({
      product_code: "mtn-airtime",
      network: "mtn",
      service: "airtime",
      destination: "0803****567",
      amount_kobo: 10000,
      price_kobo: 9700,
      client_reference: "order-1001",
    });
    expect(txn.metadata).toEqual({
      order_id: "1001",
      data_type: "airtime",
      plan_name: "MTN Airtime",
      product_id: expect.any(String),
      route: "sandbox",
    });
    const [row] = await server.database.handle.db.select().from(transactions);
    expect(row?.destination).toBe("08031234567");
  });

  test("data bundle: priced by the catalogue, amount optional or equal", async () => {
    const { client } = await fundedAccount(server, 1_000_000);
    const bare = await client.post("/api/v1/vend", { product_code: "mtn-data-1gb-1d", phone_number: "08031234567" }, idem());
    expect(bare.status).toBe(202);
    expect(bare.json.data).toMatchObject({ service: "data", amount_kobo: 50000, price_kobo: 50000 });
    expect(bare.json.data.metadata).toMatchObject({
      data_type: "data",
      plan_name: expect.stringContaining("1GB"),
      route: "sandbox",
    });
    const equal = await client.post(
      "/api/v1/vend",
      { service_id: "mtn-data-1gb-1d", destination: "2348031234567", amount_kobo: 50000 },
      idem(),
    );
    expect(equal.status).toBe(202);
  });

  test("electricity: default prepaid, masked meter and phone copies, ≥ ₦1,000", async () => {
    const { client } = await fundedAccount(server, 1_000_000);
    const res = await client.post(
      "/api/v1/bills/electricity",
      { biller: "ikedc", account_number: "4503123456789", phone_number: "08031234567", amount: 100000, metadata: { route: "x" } },
      idem(),
    );
    expect(res.status).toBe(202);
    expect(res.json.data).toMatchObject({
      service: "electricity",
      network: "ikedc",
      product_code: "ikedc-prepaid",
      destination: "4503******789",
      amount_kobo: 100000,
    });
    expect(res.json.data.price_kobo).toBe(100000 - Math.floor((100000 * 50) / 10000));
    expect(res.json.data.metadata).toEqual({
      meter_number: "4503******789",
      meter_type: "prepaid",
      phone_number: "0803****567",
      plan_name: "Ikeja Electric Prepaid",
      product_id: expect.any(String),
      route: "sandbox",
    });
    const postpaid = await client.post(
      "/api/v1/bills/electricity",
      { network: "ikedc", destination: "45031234567", meter_type: "postpaid", amount_kobo: 250000 },
      idem(),
    );
    expect(postpaid.json.data.product_code).toBe("ikedc-postpaid");
  });

  test("cable: bouquet price, masked smartcard", async () => {
    const { client } = await fundedAccount(server, 1_000_000);
    const res = await client.post(
      "/api/v1/bills/cable",
      { network: "gotv", destination: "7031234567", serviceid: "gotv-max" },
      idem(),
    );
    expect(res.status).toBe(202);
    expect(res.json.data).toMatchObject({
      service: "cable",
      network: "gotv",
      destination: "7031***567",
      amount_kobo: 850000,
      price_kobo: 850000,
    });
    expect(res.json.data.metadata).toMatchObject({ smartcard_number: "7031***567", plan_name: "GOtv Max", route: "sandbox" });
  });

  test("the hold is placed at acceptance, in the ledger", async () => {
    const { client } = await fundedAccount(server, 20_000);
    await client.post("/api/v1/vend", { product_code: "glo-airtime", phone_number: "08051234567", amount_kobo: 10000 }, idem());
    const wallet = (await client.get("/api/v1/wallet")).json.data;
    expect(wallet).toEqual({
      mode: "test",
      currency: "NGN",
      balance_kobo: 20_000,
      held_kobo: 9_600,
      available_kobo: 10_400,
      low_balance_threshold_kobo: null,
    });
    expect(await reconcileWallets(server.database.handle.db)).toEqual([]);
  });
});

describe("402 WALLET_INSUFFICIENT_FUNDS", () => {
  test("nothing is created; message states available and required NGN; the stored 402 replays", async () => {
    const { client } = await fundedAccount(server, 15_000);
    const db = server.database.handle.db;
    const before = {
      txns: (await db.select({ n: count() }).from(transactions))[0]?.n,
      ledger: (await db.select({ n: count() }).from(ledgerEntries))[0]?.n,
    };
    const body = { product_code: "mtn-data-1gb-1d", phone_number: "08031234567" };
    const key = idem();
    const res = await client.post("/api/v1/vend", body, key);
    expect(res.status).toBe(402);
    expect(res.json).toEqual({
      success: false,
      code: "WALLET_INSUFFICIENT_FUNDS",
      message: "Insufficient wallet balance: available NGN 150.00, required NGN 500.00",
      data: null,
    });
    const after = {
      txns: (await db.select({ n: count() }).from(transactions))[0]?.n,
      ledger: (await db.select({ n: count() }).from(ledgerEntries))[0]?.n,
    };
    expect(after).toEqual(before);
    await client.post("/api/v1/wallet/fund", { amount_kobo: 100_000 }, idem());
    const replay = await client.post("/api/v1/vend", body, key);
    expect(replay.status).toBe(402);
    expect(replay.text).toBe(res.text);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    const fresh = await client.post("/api/v1/vend", body, idem());
    expect(fresh.status).toBe(202);
  });
});

describe("modes", () => {
  test("a live vend with no provider route is 503 NO_ROUTE with nothing created or charged", async () => {
    const account = await server.createAccount("live-co");
    const res = await server
      .client(account.liveKey)
      .post("/api/v1/vend", { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10000 }, idem());
    expect(res.status).toBe(503);
    expect(res.json.code).toBe("NO_ROUTE");
    const txns = await server.database.handle.db.select().from(transactions);
    expect(txns.filter((t) => t.accountId === account.id)).toEqual([]);
  });
});
