import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, count, eq, sql } from "drizzle-orm";
import { idempotencyRecords, ledgerEntries, transactions, vendBatches, wallets } from "../../src/db/schema/index.ts";
import { fundedAccount, idem, newKey } from "../helpers/accounts.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const db = () => server.database.handle.db;

/** ₦100 of MTN airtime (price ₦97 after the 3% discount) to a phone ending in `n`. */
const airtime = (n: number, extra: Record<string, unknown> = {}) => ({
  service: "airtime",
  product_code: "mtn-airtime",
  phone_number: `0803${String(n).padStart(7, "0")}`,
  amount_kobo: 10_000,
  client_reference: `inv-${n}`,
  ...extra,
});
const airtimePrice = 9_700;

async function walletOf(accountId: string) {
  const [wallet] = await db()
    .select()
    .from(wallets)
    .where(and(eq(wallets.accountId, accountId), eq(wallets.mode, "test")));
  if (!wallet) throw new Error("no wallet");
  return wallet;
}

async function ledgerCount(walletId: string, kind?: "hold" | "fund") {
  const [row] = await db()
    .select({ n: count() })
    .from(ledgerEntries)
    .where(kind ? and(eq(ledgerEntries.walletId, walletId), eq(ledgerEntries.kind, kind)) : eq(ledgerEntries.walletId, walletId));
  return Number(row?.n);
}

async function batchTransactionCount(batchId: string) {
  const [row] = await db().select({ n: count() }).from(transactions).where(eq(transactions.batchId, batchId));
  return Number(row?.n);
}

async function expectBalanced() {
  const res = await server.admin.get("/admin/v1/reconciliation");
  expect(res.status).toBe(200);
  expect(res.json.data).toMatchObject({ balanced: true, discrepancies: [] });
}

describe("POST /api/v1/vend/batches", () => {
  test("1,000 orders on a wallet that covers 600: 600 accepted in index order, 400 refused with 402, wallets reconcile", async () => {
    const { id, client } = await fundedAccount(server, 600 * airtimePrice, "Bulk Ltd");
    const orders = Array.from({ length: 1000 }, (_, n) => airtime(n));
    const started = performance.now();
    const res = await client.post("/api/v1/vend/batches", { orders }, idem());
    const elapsedMs = performance.now() - started;
    console.info(`1,000-order batch answered in ${Math.round(elapsedMs)} ms`);
    expect(res.status).toBe(202);
    expect([res.json.success, res.json.code]).toEqual([true, "OK"]);
    const batch = res.json.data;
    expect(batch).toMatchObject({ mode: "test", order_count: 1000, completed_at: null });
    expect(batch.counts).toEqual({ queued: 600, processing: 0, pending: 0, successful: 0, failed: 0, refused: 400, invalid: 0 });
    expect(batch.rejections).toHaveLength(400);
    expect(batch.rejections.map((r: { index: number }) => r.index)).toEqual(Array.from({ length: 400 }, (_, n) => 600 + n));
    expect(batch.rejections[0]).toEqual({
      index: 600,
      client_reference: "inv-600",
      status: 402,
      error: {
        code: "WALLET_INSUFFICIENT_FUNDS",
        message: "Insufficient wallet balance: available NGN 0.00, required NGN 97.00",
        data: null,
      },
    });

    // Nothing created twice, nothing lost: 600 transactions, 600 holds, held = the accepted prices, no answers
    // stored but the batch's, and the ledger still sums to every wallet.
    expect(await batchTransactionCount(batch.id)).toBe(600);
    const wallet = await walletOf(id);
    expect(Number(wallet.heldKobo)).toBe(600 * airtimePrice);
    expect(Number(wallet.balanceKobo)).toBe(600 * airtimePrice);
    expect(await ledgerCount(wallet.id, "hold")).toBe(600);
    expect(await ledgerCount(wallet.id)).toBe(601);
    const accepted = await db()
      .select({ clientReference: transactions.clientReference, status: transactions.status, price: transactions.priceKobo })
      .from(transactions)
      .where(eq(transactions.batchId, batch.id));
    expect(new Set(accepted.map((t) => t.clientReference))).toEqual(new Set(orders.slice(0, 600).map((o) => o.client_reference)));
    expect(accepted.every((t) => t.status === "queued" && Number(t.price) === airtimePrice)).toBe(true);
    const [records] = await db()
      .select({ n: count() })
      .from(idempotencyRecords)
      .where(sql`${idempotencyRecords.scope} like ${`account:${id}:%`}`);
    expect(Number(records?.n)).toBe(2); // the funding and the batch
    await expectBalanced();
    // A few seconds at most on a slow machine.
    expect(elapsedMs).toBeLessThan(30_000);
  });

  test("mixed services, each order resolved as its single vend; batch_id set by the service in metadata and on the row", async () => {
    const { client } = await fundedAccount(server, 5_000_000, "Mixed Ltd");
    const orders = [
      airtime(1, { metadata: { order: "a", batch_id: "caller-value" } }),
      { service: "data", product_code: "mtn-data-1gb-1d", destination: "+2348031234568", client_reference: "inv-data" },
      {
        service: "electricity",
        biller: "ikedc",
        meter_number: "45031234567",
        amount: 500_000,
        phone_number: "08031234569",
        client_reference: "inv-power",
      },
      { service: "cable", network: "dstv", smartcard_number: "7012345678", product_code: "dstv-padi" },
    ];
    const res = await client.post("/api/v1/vend/batches", { orders }, idem());
    expect(res.status).toBe(202);
    const batch = res.json.data;
    expect(batch.counts).toMatchObject({ queued: 4, refused: 0, invalid: 0 });
    expect(batch.rejections).toEqual([]);

    const page = await client.get("/api/v1/transactions", { query: { batch_id: batch.id, limit: 10 } });
    expect(page.status).toBe(200);
    const txns = page.json.data.items as { service: string; client_reference: string | null; metadata: Record<string, string> }[];
    expect(txns.map((t) => t.service).sort()).toEqual(["airtime", "cable", "data", "electricity"]);
    for (const txn of txns) expect(txn.metadata.batch_id).toBe(batch.id);
    const first = txns.find((t) => t.service === "airtime");
    expect(first?.metadata).toMatchObject({ order: "a", batch_id: batch.id, route: "sandbox" });
    const power = txns.find((t) => t.service === "electricity");
    expect(power?.metadata).toMatchObject({ meter_type: "prepaid", meter_number: expect.stringContaining("*") });
    const rows = await db().select().from(transactions).where(eq(transactions.batchId, batch.id));
    expect(rows).toHaveLength(4);

    // The filter leaves out the account's other transactions; a single vend cannot set batch_id.
    const single = await client.post(
      "/api/v1/vend",
      { product_code: "mtn-airtime", phone_number: "08031234500", amount_kobo: 10_000, metadata: { batch_id: batch.id } },
      idem(),
    );
    expect(single.status).toBe(202);
    expect(single.json.data.metadata.batch_id).toBeUndefined();
    const again = await client.get("/api/v1/transactions", { query: { batch_id: batch.id } });
    expect(again.json.data.items).toHaveLength(4);
  });

  test("invalid orders are refused by index with data.errors and do not block the others", async () => {
    const { id, client } = await fundedAccount(server, 1_000_000, "Typos Ltd");
    const orders = [
      airtime(1),
      airtime(2, { phone_number: "12345" }),
      airtime(3, { product_code: "no-such-product" }),
      airtime(4, { amount_kobo: 1 }),
      airtime(5, { colour: "blue" }),
      { service: "electricity", network: "ikedc", meter_number: "12", amount_kobo: 500_000, client_reference: "inv-6" },
      { service: "airtime", product_code: "mtn-data-1gb-1d", phone_number: "08031234567", client_reference: 7 },
      { service: "cable", network: "gotv", smartcard_number: "7012345678", product_code: "dstv-padi" },
      airtime(8),
    ];
    const res = await client.post("/api/v1/vend/batches", { orders }, idem());
    expect(res.status).toBe(202);
    const batch = res.json.data;
    expect(batch.counts).toMatchObject({ queued: 2, refused: 0, invalid: 7 });
    const byIndex = new Map(
      batch.rejections.map((r: { index: number; status: number; error: { data: { errors: { field: string }[] } } }) => [
        r.index,
        r,
      ]),
    );
    expect([...byIndex.keys()]).toEqual([1, 2, 3, 4, 5, 6, 7]);
    const fields = (index: number) =>
      (byIndex.get(index) as { error: { data: { errors: { field: string }[] } } }).error.data.errors.map((e) => e.field);
    expect(byIndex.get(1)).toMatchObject({ status: 400, client_reference: "inv-2", error: { code: "VALIDATION_FAILED" } });
    expect(fields(1)).toEqual(["orders[1].phone_number"]);
    expect(fields(2)).toEqual(["orders[2].product_code"]);
    expect(fields(3)).toEqual(["orders[3].amount_kobo"]);
    expect(fields(4)).toEqual(["orders[4].colour"]);
    expect(fields(5)).toEqual(["orders[5].meter_number"]);
    expect(fields(6)).toEqual(["orders[6].client_reference"]);
    expect(byIndex.get(6)).toMatchObject({ client_reference: null });
    expect(fields(7)).toEqual(["orders[7].network"]);
    expect(await batchTransactionCount(batch.id)).toBe(2);
    const wallet = await walletOf(id);
    expect(Number(wallet.heldKobo)).toBe(2 * airtimePrice);
    await expectBalanced();
  });

  test("an order of another service than its product's is invalid", async () => {
    const { client } = await fundedAccount(server, 1_000_000, "Mismatch Ltd");
    const res = await client.post(
      "/api/v1/vend/batches",
      { orders: [{ service: "airtime", product_code: "mtn-data-1gb-1d", phone_number: "08031234567" }] },
      idem(),
    );
    expect(res.status).toBe(202);
    expect(res.json.data.rejections[0].error.data.errors).toEqual([
      { field: "orders[0].service", message: "does not match the product's service (data)" },
    ]);
  });

  test("a key that looks like an index is a property (dotted), array items are indexed", async () => {
    const { client } = await fundedAccount(server, 1_000_000, "Keys Ltd");
    const res = await client.post("/api/v1/vend/batches", { orders: [airtime(1, { metadata: { "0": 5 } })] }, idem());
    expect(res.status).toBe(202);
    expect(res.json.data.rejections[0].error.data.errors).toEqual([
      { field: "orders[0].metadata.0", message: "must be a string" },
    ]);
  });

  const wholeBatch: [string, unknown, string][] = [
    ["not an object", [airtime(1)], "body"],
    ["an unknown top-level field", { orders: [airtime(1)], note: "x" }, "note"],
    ["orders missing", {}, "orders"],
    ["orders not an array", { orders: airtime(1) }, "orders"],
    ["orders empty", { orders: [] }, "orders"],
    ["over 1,000 orders", { orders: Array.from({ length: 1001 }, (_, n) => ({ service: "airtime", n })) }, "orders"],
    ["an order that is not an object", { orders: [airtime(1), "x"] }, "orders[1]"],
    ["an order without service", { orders: [airtime(1), { product_code: "mtn-airtime" }] }, "orders[1].service"],
    ["an order with an unknown service", { orders: [airtime(1, { service: "betting" })] }, "orders[0].service"],
    ["a NUL character in an order", { orders: [airtime(1, { client_reference: "a\u0000b" })] }, "orders[0].client_reference"],
  ];
  test.each(wholeBatch)("rejects the whole batch, writing nothing: %s", async (_, body, field) => {
    const { id, client } = await fundedAccount(server, 1_000_000, "Strict Ltd");
    const key = newKey();
    const res = await client.post("/api/v1/vend/batches", body, idem(key));
    expect(res.status).toBe(400);
    expect(res.json.code).toBe("VALIDATION_FAILED");
    expect(res.json.data.errors.map((e: { field: string }) => e.field)).toContain(field);
    const [batches] = await db().select({ n: count() }).from(vendBatches).where(eq(vendBatches.accountId, id));
    expect(Number(batches?.n)).toBe(0);
    const [txns] = await db().select({ n: count() }).from(transactions).where(eq(transactions.accountId, id));
    expect(Number(txns?.n)).toBe(0);
    // The key stays free: a valid batch under it is accepted.
    const valid = await client.post("/api/v1/vend/batches", { orders: [airtime(1)] }, idem(key));
    expect(valid.status).toBe(202);
  });

  // Whole-batch errors name fields as the contract and the per-order rejections do: `orders[0].service`.
  const wholeBatchErrors: [string, unknown, { field: string; message: string }][] = [
    [
      "an unknown service",
      { orders: [airtime(1, { service: "gas" })] },
      { field: "orders[0].service", message: "must be one of: airtime, data, cable, electricity" },
    ],
    ["a missing service", { orders: [{ product_code: "mtn-airtime" }] }, { field: "orders[0].service", message: "is required" }],
    ["an order that is a number", { orders: [5] }, { field: "orders[0]", message: "must be an object" }],
    [
      "a later order that is not an object",
      { orders: [airtime(1), airtime(2), []] },
      { field: "orders[2]", message: "must be an object" },
    ],
  ];
  test.each(wholeBatchErrors)("a whole-batch error names the order by index: %s", async (_, body, error) => {
    const { client } = await fundedAccount(server, 0, "Named Ltd");
    const res = await client.post("/api/v1/vend/batches", body, idem());
    expect(res.status).toBe(400);
    expect(res.json.data.errors).toContainEqual(error);
    for (const { field } of res.json.data.errors as { field: string }[]) expect(field).not.toMatch(/\.\d/);
  });

  test("a missing Idempotency-Key rejects the whole batch", async () => {
    const { id, client } = await fundedAccount(server, 1_000_000, "Keyless Ltd");
    const res = await client.post("/api/v1/vend/batches", { orders: [airtime(1)] });
    expect(res.status).toBe(400);
    expect(res.json.data.errors.map((e: { field: string }) => e.field)).toEqual(["Idempotency-Key"]);
    const [txns] = await db().select({ n: count() }).from(transactions).where(eq(transactions.accountId, id));
    expect(Number(txns?.n)).toBe(0);
  });

  test("a 1,000-order body over 64 KiB fits; over 1 MiB is 413", async () => {
    const { client } = await fundedAccount(server, 0, "Big Ltd");
    const padded = (n: number) => airtime(n, { metadata: { note: "x".repeat(500), more: "y".repeat(500) } });
    const tooBig = { orders: Array.from({ length: 1000 }, (_, n) => padded(n)) };
    expect(JSON.stringify(tooBig).length).toBeGreaterThan(1024 * 1024);
    const res = await client.post("/api/v1/vend/batches", tooBig, idem());
    expect(res.status).toBe(413);
    expect(res.json.code).toBe("PAYLOAD_TOO_LARGE");
    // A single vend keeps the 64 KiB limit.
    const single = await client.post("/api/v1/vend", { ...airtime(1), service: undefined, pad: "x".repeat(70_000) }, idem());
    expect(single.status).toBe(413);
  });

  test("the Idempotency-Key covers the whole batch: replayed byte for byte, another body 422, nothing vended twice", async () => {
    const { id, client } = await fundedAccount(server, 3 * airtimePrice, "Retry Ltd");
    const key = newKey();
    const body = { orders: [airtime(1), airtime(2), airtime(3), airtime(4)] };
    const first = await client.post("/api/v1/vend/batches", body, idem(key));
    expect(first.status).toBe(202);
    expect(first.json.data.counts).toMatchObject({ queued: 3, refused: 1 });
    const replay = await client.post("/api/v1/vend/batches", body, idem(key));
    expect(replay.status).toBe(202);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.text).toBe(first.text);
    const other = await client.post("/api/v1/vend/batches", { orders: [airtime(9)] }, idem(key));
    expect(other.status).toBe(422);
    expect(other.json.code).toBe("IDEMPOTENCY_KEY_REUSED");
    // A single vend under the same key is another operation: its own scope.
    const single = await client.post("/api/v1/vend", { ...airtime(5), service: undefined }, idem(key));
    expect(single.status).toBe(402);
    const [batches] = await db().select({ n: count() }).from(vendBatches).where(eq(vendBatches.accountId, id));
    expect(Number(batches?.n)).toBe(1);
    const wallet = await walletOf(id);
    expect(await ledgerCount(wallet.id, "hold")).toBe(3);
    expect(Number(wallet.heldKobo)).toBe(3 * airtimePrice);
    await expectBalanced();
  });
});

test("the same batch sent twice at once: one batch, the other answer 409 or the replay, nothing vended twice", async () => {
  const { id, client } = await fundedAccount(server, 1_000_000, "Twice Ltd");
  const key = newKey();
  const body = { orders: Array.from({ length: 200 }, (_, n) => airtime(n)) };
  const answers = await Promise.all([
    client.post("/api/v1/vend/batches", body, idem(key)),
    client.post("/api/v1/vend/batches", body, idem(key)),
  ]);
  const statuses = answers.map((a) => a.status).sort();
  expect([
    [202, 202],
    [202, 409],
  ]).toContainEqual(statuses);
  const fresh = answers.filter((a) => a.status === 202 && a.headers.get("idempotent-replayed") !== "true");
  expect(fresh).toHaveLength(1);
  const [batches] = await db().select({ n: count() }).from(vendBatches).where(eq(vendBatches.accountId, id));
  expect(Number(batches?.n)).toBe(1);
  const wallet = await walletOf(id);
  expect(await ledgerCount(wallet.id, "hold")).toBe(fresh[0]?.json.data.counts.queued);
  expect(Number(wallet.heldKobo)).toBe(fresh[0]?.json.data.counts.queued * airtimePrice);
  await expectBalanced();
});

test("live mode with no provider route for an order: 503 NO_ROUTE for the whole batch, nothing written, the key free", async () => {
  const account = await server.createAccount("Live Bulk Ltd");
  const live = server.client(account.liveKey);
  const key = newKey();
  const body = { orders: [{ service: "data", phone_number: "1" }, airtime(1)] };
  for (let attempt = 0; attempt < 2; attempt++) {
    const res = await live.post("/api/v1/vend/batches", body, idem(key));
    expect(res.status).toBe(503);
    expect(res.json.code).toBe("NO_ROUTE");
    expect(res.headers.get("idempotent-replayed")).toBeNull();
  }
  const [batches] = await db().select({ n: count() }).from(vendBatches).where(eq(vendBatches.accountId, account.id));
  expect(Number(batches?.n)).toBe(0);
  const [records] = await db()
    .select({ n: count() })
    .from(idempotencyRecords)
    .where(sql`${idempotencyRecords.scope} like ${`account:${account.id}:%`}`);
  expect(Number(records?.n)).toBe(0);
});

describe("GET /api/v1/vend/batches/{id}", () => {
  test("counts as they stand and its orders a page at a time", async () => {
    const { client } = await fundedAccount(server, 10 * airtimePrice, "Pages Ltd");
    const orders = [...Array.from({ length: 12 }, (_, n) => airtime(n)), { service: "data", phone_number: "1" }];
    const created = await client.post("/api/v1/vend/batches", { orders }, idem());
    expect(created.status).toBe(202);
    const id = created.json.data.id;
    const first = await client.get(`/api/v1/vend/batches/${id.toUpperCase()}`, { query: { limit: 4 } });
    expect(first.status).toBe(200);
    expect(first.json.data.batch).toEqual(created.json.data);
    expect(first.json.data.batch.counts).toEqual({
      queued: 10,
      processing: 0,
      pending: 0,
      successful: 0,
      failed: 0,
      refused: 2,
      invalid: 1,
    });
    const seen: string[] = [];
    let page = first.json.data.orders;
    seen.push(...page.items.map((t: { reference: string }) => t.reference));
    while (page.page.has_more) {
      const next = await client.get(`/api/v1/vend/batches/${id}`, { query: { limit: 4, cursor: page.page.next_cursor } });
      expect(next.status).toBe(200);
      page = next.json.data.orders;
      seen.push(...page.items.map((t: { reference: string }) => t.reference));
    }
    expect(seen).toHaveLength(10);
    expect(new Set(seen).size).toBe(10);

    // Its cursor pages the transactions listing filtered by the batch (any letter case), and no other filter.
    const listed = await client.get("/api/v1/transactions", {
      query: { batch_id: id.toUpperCase(), limit: 4, cursor: first.json.data.orders.page.next_cursor },
    });
    expect(listed.status).toBe(200);
    expect(listed.json.data.items.map((t: { reference: string }) => t.reference)).toEqual(seen.slice(4, 8));
    const other = await client.get("/api/v1/transactions", {
      query: { limit: 4, cursor: first.json.data.orders.page.next_cursor },
    });
    expect(other.status).toBe(400);
    expect(other.json.data.errors[0].field).toBe("cursor");

    // A completed order shows in the counts as it stands.
    await db()
      .update(transactions)
      .set({ status: "processing" })
      .where(eq(transactions.reference, seen[0] ?? ""));
    const now = await client.get(`/api/v1/vend/batches/${id}`);
    expect(now.json.data.batch.counts).toMatchObject({ queued: 9, processing: 1 });
  });

  test("another account's or mode's batch is 404; a malformed id is 400", async () => {
    const owner = await fundedAccount(server, 1_000_000, "Owner Ltd");
    const created = await owner.client.post("/api/v1/vend/batches", { orders: [airtime(1)] }, idem());
    const id = created.json.data.id;
    const stranger = await fundedAccount(server, 0, "Stranger Ltd");
    const other = await stranger.client.get(`/api/v1/vend/batches/${id}`);
    expect(other.status).toBe(404);
    expect(other.json.code).toBe("NOT_FOUND");
    const live = await server.client(owner.liveKey).get(`/api/v1/vend/batches/${id}`);
    expect(live.status).toBe(404);
    const listed = await stranger.client.get("/api/v1/transactions", { query: { batch_id: id } });
    expect(listed.json.data.items).toEqual([]);
    const malformed = await owner.client.get("/api/v1/vend/batches/not-a-uuid");
    expect(malformed.status).toBe(400);
  });
});
