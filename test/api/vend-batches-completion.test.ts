import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, count, eq, inArray, sql } from "drizzle-orm";
import { events, transactions, wallets } from "../../src/db/schema/index.ts";
import { completeFinishedBatches } from "../../src/orders/batch-completion.ts";
import { completeTransaction, completeTransactions } from "../../src/orders/completion.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import { fastProcessing } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

const airtimePrice = 9_700;
/** ₦100 of MTN airtime to a phone whose last four digits choose the sandbox outcome. */
const airtime = (lastFour: string, n = 0) => ({
  service: "airtime",
  product_code: "mtn-airtime",
  phone_number: `080${String(n).padStart(4, "0")}${lastFour}`,
  amount_kobo: 10_000,
});

interface Delivered {
  type: string;
  data: { id: string; status?: string; metadata?: Record<string, string> };
}

const parsed = (receiver: WebhookReceiver) => receiver.accepted().map((r) => JSON.parse(r.body) as Delivered);

async function batchCompletedEvents(server: TestServer, batchId: string) {
  const [row] = await server.database.handle.db
    .select({ n: count() })
    .from(events)
    .where(and(eq(events.type, "batch.completed"), sql`${events.payload}->'data'->>'id' = ${batchId}`));
  return Number(row?.n);
}

describe("batch.completed with background processing", () => {
  let server: TestServer;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    server = await startTestServer(fastProcessing(), { background: true });
    receiver = startWebhookReceiver();
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });

  test("sent once, when the last order is final; counts final, wallet settled and reconciled", async () => {
    const { id, client } = await fundedAccount(server, 3 * airtimePrice, "Events Ltd");
    const endpoint = await client.post("/api/v1/webhook-endpoints", { url: `${receiver.url}/hooks` });
    expect(endpoint.status).toBe(201);
    const orders = [
      airtime("1234", 1), // successful at once
      airtime("1111", 2), // failed at once
      airtime("2222", 3), // pending, then a callback: successful
      { service: "airtime", product_code: "mtn-airtime", phone_number: "1" }, // invalid
      airtime("1234", 5), // refused: the wallet covered three
    ];
    const res = await client.post("/api/v1/vend/batches", { orders }, idem());
    expect(res.status).toBe(202);
    const batchId = res.json.data.id;
    expect(res.json.data.counts).toMatchObject({ queued: 3, refused: 1, invalid: 1 });

    // Three transaction events and one batch.completed.
    await receiver.waitFor(4, 30_000);
    const delivered = parsed(receiver);
    const completed = delivered.filter((e) => e.type === "batch.completed");
    expect(completed).toHaveLength(1);
    const txnEvents = delivered.filter((e) => e.type.startsWith("transaction."));
    expect(txnEvents.map((e) => e.data.metadata?.batch_id)).toEqual([batchId, batchId, batchId]);

    const read = await client.get(`/api/v1/vend/batches/${batchId}`);
    expect(read.status).toBe(200);
    const batch = read.json.data.batch;
    expect(batch.completed_at).not.toBeNull();
    expect(batch.counts).toEqual({ queued: 0, processing: 0, pending: 0, successful: 2, failed: 1, refused: 1, invalid: 1 });
    expect(completed[0]?.data).toEqual(batch);
    expect(await batchCompletedEvents(server, batchId)).toBe(1);
    const listed = await client.get("/api/v1/events", { query: { type: "batch.completed" } });
    expect(listed.status).toBe(200);
    expect(listed.json.data.items.map((e: { data: { id: string } }) => e.data.id)).toEqual([batchId]);

    // Two captured, one released: ₦97 left, nothing held; the ledger sums to every wallet.
    const [wallet] = await server.database.handle.db
      .select()
      .from(wallets)
      .where(and(eq(wallets.accountId, id), eq(wallets.mode, "test")));
    expect([Number(wallet?.balanceKobo), Number(wallet?.heldKobo)]).toEqual([airtimePrice, 0]);
    const reconciliation = await server.admin.get("/admin/v1/reconciliation");
    expect(reconciliation.json.data).toMatchObject({ balanced: true, discrepancies: [] });
  });

  test("a batch with no accepted order is complete at acceptance and sends batch.completed then", async () => {
    const local = startWebhookReceiver();
    try {
      const { client } = await fundedAccount(server, 0, "Empty Wallet Ltd");
      const endpoint = await client.post("/api/v1/webhook-endpoints", { url: `${local.url}/hooks` });
      expect(endpoint.status).toBe(201);
      const res = await client.post(
        "/api/v1/vend/batches",
        { orders: [airtime("1234"), { service: "data", phone_number: "x" }] },
        idem(),
      );
      expect(res.status).toBe(202);
      const batch = res.json.data;
      expect(batch.completed_at).not.toBeNull();
      expect(batch.counts).toMatchObject({ queued: 0, refused: 1, invalid: 1 });
      await local.waitFor(1, 30_000);
      const [event] = parsed(local);
      expect(event?.type).toBe("batch.completed");
      expect(event?.data).toEqual(batch);
      expect(await batchCompletedEvents(server, batch.id)).toBe(1);
    } finally {
      await local.close();
    }
  });
});

describe("completion races (no background worker: completions made by hand)", () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  /** A batch of `n` accepted orders, moved to `processing` as if sent; their rows. */
  async function processingBatch(n: number) {
    const { client } = await fundedAccount(server, n * airtimePrice, "Race Ltd");
    const orders = Array.from({ length: n }, (_, i) => airtime("4444", i));
    const res = await client.post("/api/v1/vend/batches", { orders }, idem());
    expect(res.status).toBe(202);
    const batchId: string = res.json.data.id;
    const db = server.database.handle.db;
    await db.update(transactions).set({ status: "processing" }).where(eq(transactions.batchId, batchId));
    const rows = await db.select().from(transactions).where(eq(transactions.batchId, batchId));
    return { batchId, rows, client };
  }

  test("the last two orders completed at once, alone, in different connections: one batch.completed", async () => {
    for (let round = 0; round < 8; round++) {
      const { batchId, rows, client } = await processingBatch(2);
      const [a, b] = rows;
      if (!a || !b) throw new Error("two orders expected");
      await Promise.all([
        completeTransaction(server.deps.db, a.id, { status: "successful" }, a),
        completeTransaction(server.deps.db, b.id, { status: "failed", reason: "Declined", failureCode: "provider_refused" }, b),
      ]);
      expect(await batchCompletedEvents(server, batchId)).toBe(1);
      const read = await client.get(`/api/v1/vend/batches/${batchId}`);
      expect(read.json.data.batch.completed_at).not.toBeNull();
      expect(read.json.data.batch.counts).toMatchObject({ successful: 1, failed: 1, processing: 0 });
    }
  });

  test("the last two orders completed at once in two worker batches (one statement each): one batch.completed", async () => {
    for (let round = 0; round < 8; round++) {
      const { batchId, rows } = await processingBatch(3);
      const [a, b, c] = rows;
      if (!a || !b || !c) throw new Error("three orders expected");
      await completeTransaction(server.deps.db, c.id, { status: "successful" }, c);
      expect(await batchCompletedEvents(server, batchId)).toBe(0);
      await Promise.all([
        completeTransactions(server.deps.db, [{ id: a.id, outcome: { status: "successful" }, known: a }]),
        completeTransactions(server.deps.db, [{ id: b.id, outcome: { status: "successful" }, known: b }]),
      ]);
      expect(await batchCompletedEvents(server, batchId)).toBe(1);
    }
  });

  test("a batch whose orders became final without the check (a process stopped in between) is completed by the sweep, once", async () => {
    const { batchId, rows } = await processingBatch(2);
    const db = server.database.handle.db;
    // Final by hand, as if the completing process died before its check.
    await db
      .update(transactions)
      .set({ status: "failed", completedAt: new Date() })
      .where(
        inArray(
          transactions.id,
          rows.map((r) => r.id),
        ),
      );
    expect(await batchCompletedEvents(server, batchId)).toBe(0);
    expect(await completeFinishedBatches(server.deps.db)).toBeGreaterThanOrEqual(1);
    expect(await batchCompletedEvents(server, batchId)).toBe(1);
    await completeFinishedBatches(server.deps.db);
    expect(await batchCompletedEvents(server, batchId)).toBe(1);
  });
});
