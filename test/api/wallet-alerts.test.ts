import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, count, eq } from "drizzle-orm";
import postgres from "postgres";
import { processingRunner } from "../../src/background.ts";
import { events, ledgerEntries, transactions, wallets } from "../../src/db/schema/index.ts";
import { webhookRunner } from "../../src/jobs/queues/delivery-queue.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing, vendAirtime } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { startWebhookReceiver, verifyWebhook, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let server: TestServer;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  server = await startTestServer(fastProcessing());
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await server.close();
});

const price = 9_700; // ₦100 of MTN airtime at 3% discount
const vendBody = { product_code: "mtn-airtime", phone_number: "08031234567", amount_kobo: 10_000 };

const setThreshold = (client: HttpClient, threshold: number | null) =>
  client.request("PATCH", "/api/v1/wallet", { low_balance_threshold_kobo: threshold });

/** The account's `wallet.balance_low` events as the API lists them, oldest first. */
async function alertsOf(client: HttpClient) {
  const res = await client.get("/api/v1/events", { query: { type: "wallet.balance_low", limit: 100 } });
  expect(res.status).toBe(200);
  return [...res.json.data.items].reverse();
}

/** Money check: every wallet equals the sum of its ledger, through the operators' API. */
async function expectBalanced() {
  const res = await server.admin.get("/admin/v1/reconciliation");
  expect(res.status).toBe(200);
  expect(res.json.data).toMatchObject({ balanced: true, discrepancies: [] });
}

async function ledgerCount(walletAccountId: string) {
  const db = server.database.handle.db;
  const [row] = await db
    .select({ n: count() })
    .from(ledgerEntries)
    .innerJoin(wallets, eq(wallets.id, ledgerEntries.walletId))
    .where(and(eq(wallets.accountId, walletAccountId), eq(wallets.mode, "test")));
  return row?.n ?? 0;
}

describe("PATCH /api/v1/wallet: the low-balance threshold", () => {
  test("set, shown on GET, turned off; a threshold above the available balance alerts at once, once", async () => {
    const { id, client } = await fundedAccount(server, 100_000);
    const set = await setThreshold(client, 50_000);
    expect(set.status).toBe(200);
    expect(set.json.data).toEqual({
      mode: "test",
      currency: "NGN",
      balance_kobo: 100_000,
      held_kobo: 0,
      available_kobo: 100_000,
      low_balance_threshold_kobo: 50_000,
    });
    expect((await client.get("/api/v1/wallet")).json.data.low_balance_threshold_kobo).toBe(50_000);
    expect(await alertsOf(client)).toHaveLength(0);

    // Above the available balance: alerted in the same update, and a retry of the same PATCH sends nothing more.
    expect((await setThreshold(client, 150_000)).status).toBe(200);
    expect((await setThreshold(client, 150_000)).status).toBe(200);
    const [alert, ...more] = await alertsOf(client);
    expect(more).toHaveLength(0);
    expect(alert).toMatchObject({
      type: "wallet.balance_low",
      mode: "test",
      data: {
        mode: "test",
        currency: "NGN",
        balance_kobo: 100_000,
        held_kobo: 0,
        available_kobo: 100_000,
        threshold_kobo: 150_000,
      },
      deliveries: [],
    });
    expect(alert.id).toMatch(/^evt_[0-9A-Za-z]{24}$/);
    const [stored] = await server.database.handle.db.select().from(events).where(eq(events.id, alert.id));
    expect(stored).toMatchObject({ accountId: id, transactionId: null });
    expect(stored?.createdAt.toISOString()).toBe(alert.created_at);

    // Off re-arms; set again below the balance: a new crossing, a new alert.
    const off = await setThreshold(client, null);
    expect(off.json.data.low_balance_threshold_kobo).toBeNull();
    expect((await setThreshold(client, 200_000)).status).toBe(200);
    expect(await alertsOf(client)).toHaveLength(2);
    // Nothing moved: the wallet and its ledger are as funded.
    expect(await ledgerCount(id)).toBe(1);
    await expectBalanced();
  });

  test("a live key sets its live wallet's threshold", async () => {
    const account = await server.createAccount("live-alert");
    const res = await setThreshold(server.client(account.liveKey), 0);
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ mode: "live", low_balance_threshold_kobo: 0 });
    // 0 never alerts: the available balance is never negative.
    expect(await alertsOf(server.client(account.liveKey))).toHaveLength(0);
  });

  test.each([
    ["negative", { low_balance_threshold_kobo: -1 }],
    ["fraction", { low_balance_threshold_kobo: 1.5 }],
    ["string", { low_balance_threshold_kobo: "500" }],
    ["too large", { low_balance_threshold_kobo: 100_000_000_001 }],
    ["missing", {}],
    ["unknown field", { low_balance_threshold_kobo: 1, alert: true }],
  ])("%s: 400 naming the field, nothing changed", async (_name, body) => {
    const { client } = await fundedAccount(server, 10_000);
    const res = await client.request("PATCH", "/api/v1/wallet", body);
    expect(res.status).toBe(400);
    expect(res.json.code).toBe("VALIDATION_FAILED");
    expect(res.json.data.errors.length).toBeGreaterThan(0);
    expect((await client.get("/api/v1/wallet")).json.data.low_balance_threshold_kobo).toBeNull();
  });
});

describe("wallet.balance_low: once per crossing", () => {
  test("50 concurrent vends cross below the threshold: one event, one delivery; fund above re-arms; again: a second", async () => {
    const receiver = startWebhookReceiver();
    receivers.push(receiver);
    const { id, client } = await fundedAccount(server, 1_000_000);
    const endpoint = await client.post("/api/v1/webhook-endpoints", { url: `${receiver.url}/hooks` });
    expect(endpoint.status).toBe(201);
    const threshold = 600_000;
    expect((await setThreshold(client, threshold)).status).toBe(200);

    const vendMany = async () => {
      const answers = await Promise.all(Array.from({ length: 50 }, () => client.post("/api/v1/vend", vendBody, idem())));
      expect(answers.map((a) => a.status)).toEqual(Array(50).fill(202));
    };
    const deliver = () => webhookRunner(server.deps, "alerts-test").tick();

    await vendMany(); // 1,000,000 − 50 × 9,700 = 515,000 available: below 600,000
    let alerts = await alertsOf(client);
    expect(alerts).toHaveLength(1);
    expect(alerts[0].data).toEqual({
      mode: "test",
      currency: "NGN",
      balance_kobo: 1_000_000,
      held_kobo: alerts[0].data.held_kobo,
      available_kobo: 1_000_000 - alerts[0].data.held_kobo,
      threshold_kobo: threshold,
    });
    // The alert reports the wallet at the crossing: the first hold that took it below (holds placed together
    // in one statement report the wallet after all of them).
    expect(alerts[0].data.available_kobo).toBeLessThan(threshold);
    expect(alerts[0].data.available_kobo).toBeGreaterThanOrEqual(515_000);
    expect(await deliver()).toBe(1);
    expect(receiver.accepted()).toHaveLength(1);
    const [received] = receiver.accepted();
    if (!received) throw new Error("nothing delivered");
    expect(verifyWebhook(endpoint.json.data.secret, received)).toMatchObject({ id: alerts[0].id, type: "wallet.balance_low" });

    // Funding back above the threshold re-arms without an event; a funding that stays below would not.
    const funded = await client.post("/api/v1/wallet/fund", { amount_kobo: 200_000 }, idem());
    expect(funded.json.data.wallet).toMatchObject({ available_kobo: 715_000, low_balance_threshold_kobo: threshold });
    expect(await alertsOf(client)).toHaveLength(1);

    await vendMany(); // 715,000 − 485,000 = 230,000
    alerts = await alertsOf(client);
    expect(alerts).toHaveLength(2);
    expect(alerts[1].data).toMatchObject({ balance_kobo: 1_200_000, threshold_kobo: threshold });
    expect(await deliver()).toBe(1);
    expect(receiver.accepted().map((r) => JSON.parse(r.body).id)).toEqual(alerts.map((a) => a.id));

    // Money: 100 holds and 2 fundings, nothing else; the wallets reconcile.
    const db = server.database.handle.db;
    const [placed] = await db.select({ n: count() }).from(transactions).where(eq(transactions.accountId, id));
    expect(placed?.n).toBe(100);
    expect(await ledgerCount(id)).toBe(102);
    expect((await client.get("/api/v1/wallet")).json.data).toMatchObject({
      balance_kobo: 1_200_000,
      held_kobo: 100 * price,
      available_kobo: 230_000,
    });
    await expectBalanced();
  }, 120_000);

  test("completion: a failed vend's release re-arms, a success's capture does not; an operator credit re-arms", async () => {
    const { id, client } = await fundedAccount(server, 30_000);
    await setThreshold(client, 25_000);
    // Worker ticks until the order is final (other tests' queued orders may be claimed first).
    const processed = async (reference: string) => {
      for (let ticks = 0; ticks < 100; ticks += 1) {
        const { status } = (await client.get(`/api/v1/transactions/${reference}`)).json.data;
        if (status === "successful" || status === "failed") return status;
        await processingRunner({ ...server.deps, apiBaseUrl: server.url }, "alerts-worker").tick();
      }
      throw new Error(`${reference} not final`);
    };

    const declined = await vendAirtime(client, "08031231111"); // declined at once: 20,300 available while held
    expect(await alertsOf(client)).toHaveLength(1);
    expect(await processed(declined)).toBe("failed"); // released: 30,000 available again, re-armed
    expect((await client.get("/api/v1/wallet")).json.data).toMatchObject({ available_kobo: 30_000, held_kobo: 0 });
    expect(await alertsOf(client)).toHaveLength(1);

    const bought = await vendAirtime(client); // successful: held, then captured; one crossing
    expect(await alertsOf(client)).toHaveLength(2);
    expect(await processed(bought)).toBe("successful");
    expect((await client.get("/api/v1/wallet")).json.data).toMatchObject({ balance_kobo: 20_300, available_kobo: 20_300 });
    expect(await alertsOf(client)).toHaveLength(2);

    const credit = await server.admin.post(
      `/admin/v1/accounts/${id}/wallet/credit`,
      { mode: "test", amount_kobo: 10_000, note: "top-up" },
      idem(),
    );
    expect(credit.status).toBe(200);
    await vendAirtime(client); // 30,300 → 20,600: a third crossing
    expect(await alertsOf(client)).toHaveLength(3);
    // Ledger: fund, hold+release, hold+capture, credit, hold.
    expect(await ledgerCount(id)).toBe(7);
    await expectBalanced();
  }, 60_000);
});

describe.skipIf(!process.env.DATABASE_URL)("the trigger under 20 separate concurrent transactions (PostgreSQL)", () => {
  test("each its own hold statement on one wallet, all open at once: exactly one event, the flag set", async () => {
    const { id, client } = await fundedAccount(server, 400_000);
    await setThreshold(client, 250_000);
    const sql = postgres(server.database.url ?? "", { max: 20, onnotice: () => {} });
    try {
      // 20 × 10,000 = 200,000 held: available from 400,000 to 200,000, below 250,000 after the 16th hold.
      // Every transaction waits on a shared barrier before it commits, so each row lock waits for the last one.
      let arrived = 0;
      let release: () => void = () => {};
      const barrier = new Promise<void>((resolve) => {
        release = resolve;
      });
      await Promise.all(
        Array.from({ length: 20 }, () =>
          sql.begin(async (tx) => {
            await tx`select 1`;
            arrived += 1;
            if (arrived === 20) release();
            await barrier;
            await tx`update wallets set held_kobo = held_kobo + 10000 where account_id = ${id} and mode = 'test'`;
          }),
        ),
      );
    } finally {
      await sql.end({ timeout: 5 });
    }
    const alerts = await alertsOf(client);
    expect(alerts).toHaveLength(1);
    expect(alerts[0].data).toMatchObject({ held_kobo: 160_000, available_kobo: 240_000, threshold_kobo: 250_000 });
    const [wallet] = await server.database.handle.db
      .select()
      .from(wallets)
      .where(and(eq(wallets.accountId, id), eq(wallets.mode, "test")));
    expect(wallet).toMatchObject({ heldKobo: 200_000, lowBalanceAlerted: true });
    // Direct updates wrote no ledger entries: put the wallet back as its ledger says, so it reconciles.
    await server.database.handle.db
      .update(wallets)
      .set({ heldKobo: 0 })
      .where(eq(wallets.id, wallet?.id ?? ""));
    await expectBalanced();
  }, 60_000);
});
