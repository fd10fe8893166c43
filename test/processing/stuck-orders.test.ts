import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { asc, eq, sql } from "drizzle-orm";
import { ledgerEntries, transactions } from "../../src/db/schema/index.ts";
import { raiseStuckOrders } from "../../src/jobs/tasks/stuck-orders.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { loadConfig } from "../../src/load-config.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing, sandboxCallback, transactionRow } from "../helpers/processing.ts";
import { captureLogs, startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";
import { type ReceivedWebhook, startWebhookReceiver, verifyWebhook, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

const defaults = loadConfig({});
const operatorSecret = `whsec_${randomBytes(32).toString("base64")}`;
const funded = 10_000_000;

let server: TestServer;
let client: HttpClient;
let operators: WebhookReceiver;
let clients: WebhookReceiver;
let clientSecret: string;

beforeAll(async () => {
  operators = startWebhookReceiver();
  clients = startWebhookReceiver();
  const fast = fastProcessing();
  server = await startTestServer(
    fastProcessing({
      // No re-query while a test runs: a re-query holds the order's row, and a stuck pass skips rows another
      // process holds (raising them on its next pass), so "raised once, by this pass" would depend on timing.
      worker: { ...defaults.worker, ...fast.worker, requerySchedule: [3600] },
      operations: {
        ...defaults.operations,
        stuckAfterMinutes: 30,
        operatorWebhookUrl: `${operators.url}/ops`,
        operatorWebhookSecret: operatorSecret,
      },
    }),
    { background: true },
  );
  client = (await fundedAccount(server, funded)).client;
  const endpoint = await client.post("/api/v1/webhook-endpoints", { url: `${clients.url}/hooks` });
  clientSecret = endpoint.json.data.secret;
});
afterAll(async () => {
  await server.close();
  await operators.close();
  await clients.close();
});

const db = () => server.database.handle.db;

/** A sandbox order that stays pending (destination ending 4444), answered once it is pending. */
async function pendingOrder(path = "/api/v1/vend", body: Record<string, unknown> = {}): Promise<string> {
  const order =
    path === "/api/v1/vend" ? { product_code: "mtn-airtime", phone_number: "08031234444", amount_kobo: 10_000, ...body } : body;
  const res = await client.post(path, order, idem());
  expect(res.status).toBe(202);
  const reference: string = res.json.data.reference;
  // The background worker sends it; a busy machine may take a moment (pending is not final, so `wait` cannot tell).
  await waitUntil(async () => (await transactionRow(db(), reference)).status === "pending", {
    what: `${reference} pending with the sandbox`,
  });
  return reference;
}

/** Moves the order's acceptance back past the stuck age. */
const ageOrder = (reference: string, minutes = 31) =>
  db().execute(
    sql`update transactions set created_at = now() - make_interval(mins => ${minutes}) where reference = ${reference}`,
  );

async function ledgerOf(reference: string) {
  const row = await transactionRow(db(), reference);
  return db().select().from(ledgerEntries).where(eq(ledgerEntries.transactionId, row.id)).orderBy(asc(ledgerEntries.id));
}

const resolve = (reference: string, body: Record<string, unknown>) =>
  server.admin.post(`/admin/v1/transactions/${reference}/resolve`, body);

/** The client webhook about `reference` received after the first `from` requests, verified with the endpoint secret. */
async function clientWebhookFor(reference: string, from: number): Promise<{ type: string; data: { reference: string } }> {
  for (let count = from + 1; ; count++) {
    const received = await clients.waitFor(count, 5000);
    const request = received[count - 1] as ReceivedWebhook;
    const event = verifyWebhook(clientSecret, request) as { type: string; data: { reference: string } };
    if (event.data.reference === reference) return event;
  }
}

const stuckList = async (query: Record<string, string> = {}) => {
  const res = await server.admin.get("/admin/v1/transactions", { query: { stuck: "true", ...query } });
  expect(res.status).toBe(200);
  return (res.json.data.items as { reference: string }[]).map((item) => item.reference);
};

describe("stuck orders", () => {
  test("a pending order past STUCK_AFTER_MINUTES is raised once (log, signed operator webhook), listed, and resolved by an operator", async () => {
    const stuck = await pendingOrder();
    const fresh = await pendingOrder();
    await ageOrder(stuck);
    const wallet = (await client.get("/api/v1/wallet")).json.data;

    const logs = captureLogs(server);
    let raised: number[];
    try {
      raised = [await raiseStuckOrders(server.deps), await raiseStuckOrders(server.deps)];
    } finally {
      logs.restore();
    }
    expect(raised).toEqual([1, 0]);
    const warnings = logs.lines
      .map((line) => JSON.parse(line))
      .filter((line) => line.level === 40 && line.msg === "order stuck pending; raised to operators");
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ reference: stuck, provider: "sandbox", ageMinutes: 31 });
    expect(typeof warnings[0].accountId).toBe("string");
    expect((await transactionRow(db(), fresh)).stuckRaisedAt).toBeNull();

    // The operator webhook: sent once (the POST is awaited by the pass), signed under OPERATOR_WEBHOOK_SECRET.
    expect(operators.received).toHaveLength(1);
    const [hook] = operators.received;
    expect(hook?.path).toBe("/ops");
    const payload = verifyWebhook(operatorSecret, hook as ReceivedWebhook) as {
      type: string;
      data: { reference: string; status: string; stuck_raised_at: string | null; account_id: string };
    };
    expect(payload.type).toBe("transaction.stuck");
    expect(payload.data).toMatchObject({ reference: stuck, status: "pending" });
    expect(payload.data.stuck_raised_at).not.toBeNull();
    expect(() => verifyWebhook(`whsec_${randomBytes(32).toString("base64")}`, hook as ReceivedWebhook)).toThrow();

    // Listed as stuck (the fresh order is not); the filter combines with the others.
    expect(await stuckList()).toEqual([stuck]);
    expect(await stuckList({ status: "successful" })).toEqual([]);
    expect(await stuckList({ service: "airtime", network: "mtn" })).toEqual([stuck]);
    const viewed = await server.admin.get(`/admin/v1/transactions/${stuck}`);
    expect(viewed.json.data.stuck_raised_at).toBe(payload.data.stuck_raised_at);

    // A named operator resolves it; a viewer may not.
    const ops = (role: string) => server.admin.post("/admin/v1/operators", { name: `ops-${role}`, role });
    const viewer = server.client((await ops("viewer")).json.data.token);
    const operator = server.client((await ops("operator")).json.data.token);
    const body = { status: "successful", note: "Confirmed with provider by phone", provider_reference: "OPS-1" };
    expect((await viewer.post(`/admin/v1/transactions/${stuck}/resolve`, body)).status).toBe(403);
    const before = clients.received.length;
    const resolved = await operator.post(`/admin/v1/transactions/${stuck}/resolve`, body);
    expect(resolved.status).toBe(200);
    // The audit names the operator, the order before (pending) and after (successful), and the note.
    const audit = await server.admin.get("/admin/v1/audit", { query: { action: "resolveTransaction", target_id: stuck } });
    expect(audit.json.data.items).toHaveLength(1);
    expect(audit.json.data.items[0]).toMatchObject({
      operator: "ops-operator",
      target_type: "transaction",
      note: "Confirmed with provider by phone",
      request_id: resolved.headers.get("x-request-id"),
      before: { reference: stuck, status: "pending" },
      after: { reference: stuck, status: "successful" },
    });
    expect(resolved.json.data).toMatchObject({ reference: stuck, status: "successful" });
    expect(resolved.json.data.metadata.resolved_by_operator).toBe("true");
    expect(resolved.json.data.completed_at).not.toBeNull();
    const event = await clientWebhookFor(stuck, before);
    expect(event.type).toBe("transaction.successful");
    expect(await stuckList()).toEqual([]);

    // Money moved once: the hold, then one capture carrying the operator's note.
    const entries = await ledgerOf(stuck);
    expect(entries.map((e) => e.kind)).toEqual(["hold", "capture"]);
    expect(entries[1]?.note).toBe("Resolved by operator: Confirmed with provider by phone");
    expect((await transactionRow(db(), stuck)).providerReference).toBe("OPS-1");
    const after = (await client.get("/api/v1/wallet")).json.data;
    expect(after.balance_kobo).toBe(wallet.balance_kobo - 9_700);
    expect(after.held_kobo).toBe(wallet.held_kobo - 9_700);
    expect(await reconcileWallets(db())).toEqual([]);

    // A second resolution is refused and changes nothing.
    const again = await resolve(stuck, { status: "failed", note: "Second thoughts" });
    expect(again.status).toBe(409);
    expect(again.json.code).toBe("CONFLICT");
    expect(again.json.message).toContain("already successful");
    expect(await ledgerOf(stuck)).toHaveLength(2);
    expect((await transactionRow(db(), stuck)).status).toBe("successful");
    expect((await client.get("/api/v1/wallet")).json.data).toMatchObject({
      balance_kobo: after.balance_kobo,
      held_kobo: after.held_kobo,
    });

    // The fresh order, resolved too, leaves nothing held behind.
    expect((await resolve(fresh, { status: "failed", note: "cleanup" })).status).toBe(200);
  }, 30_000);

  test("resolving as failed releases the hold once and keeps the note as the failure reason", async () => {
    const reference = await pendingOrder();
    const wallet = (await client.get("/api/v1/wallet")).json.data;
    const before = clients.received.length;
    const res = await resolve(reference, { status: "failed", note: "Provider says it never delivered" });
    expect(res.status).toBe(200);
    expect(res.json.data.status).toBe("failed");
    expect((await clientWebhookFor(reference, before)).type).toBe("transaction.failed");
    const row = await transactionRow(db(), reference);
    expect(row.failureReason).toBe("Provider says it never delivered");
    const entries = await ledgerOf(reference);
    expect(entries.map((e) => e.kind)).toEqual(["hold", "release"]);
    expect(entries[1]?.note).toBe("Resolved by operator: Provider says it never delivered");
    expect((await client.get("/api/v1/wallet")).json.data).toMatchObject({
      balance_kobo: wallet.balance_kobo,
      held_kobo: wallet.held_kobo - 9_700,
    });
    expect(await reconcileWallets(db())).toEqual([]);
  }, 30_000);

  test("an electricity success needs its token; token and units are refused elsewhere; bad bodies are 400; unknown is 404", async () => {
    const meter = await pendingOrder("/api/v1/bills/electricity", {
      network: "ikedc",
      meter_number: "45031234444",
      phone_number: "08031234567",
      amount_kobo: 200_000,
    });
    const airtime = await pendingOrder();
    const cases: [string, string, Record<string, unknown>, string][] = [
      ["electricity success without token", meter, { status: "successful", note: "n" }, "token"],
      ["token on a failure", meter, { status: "failed", note: "n", token: "1234" }, "token"],
      ["token on airtime", airtime, { status: "successful", note: "n", token: "1234" }, "token"],
      ["units on airtime", airtime, { status: "successful", note: "n", units: "2 kWh" }, "units"],
      ["no note", airtime, { status: "successful" }, "note"],
      ["empty note", airtime, { status: "successful", note: "" }, "note"],
      ["note too long", airtime, { status: "failed", note: "x".repeat(501) }, "note"],
      ["unknown status", airtime, { status: "reversed", note: "n" }, "status"],
      ["unknown field", airtime, { status: "failed", note: "n", amount_kobo: 1 }, "amount_kobo"],
    ];
    for (const [name, reference, body, field] of cases) {
      const res = await resolve(reference, body);
      expect({ name, status: res.status, code: res.json.code }).toEqual({ name, status: 400, code: "VALIDATION_FAILED" });
      expect(JSON.stringify(res.json.data.errors)).toContain(field);
    }
    expect((await ledgerOf(meter)).map((e) => e.kind)).toEqual(["hold"]);
    expect((await resolve("txn_000000000000000000000000", { status: "failed", note: "n" })).status).toBe(404);

    const res = await resolve(meter, {
      status: "successful",
      note: "Token from the DisCo",
      token: "1111-2222-3333-4444-5555",
      units: "9.5 kWh",
    });
    expect(res.status).toBe(200);
    expect(res.json.data.metadata).toMatchObject({
      token: "1111-2222-3333-4444-5555",
      units: "9.5 kWh",
      resolved_by_operator: "true",
    });
    expect((await resolve(airtime, { status: "successful", note: "ok" })).status).toBe(200);
    expect(await reconcileWallets(db())).toEqual([]);
  }, 30_000);

  test("two operators resolving at once: one 200, one 409; a callback racing a resolution: exactly one applies", async () => {
    const raced = await pendingOrder();
    const answers = await Promise.all([
      resolve(raced, { status: "successful", note: "first operator" }),
      resolve(raced, { status: "failed", note: "second operator" }),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const winner = answers.find((a) => a.status === 200)?.json.data.status;
    expect((await transactionRow(db(), raced)).status).toBe(winner);
    expect((await ledgerOf(raced)).map((e) => e.kind)).toEqual(["hold", winner === "successful" ? "capture" : "release"]);

    const called = await pendingOrder();
    const callback = sandboxCallback({
      event_id: `race-${called}`,
      reference: called,
      status: "failed",
      provider_reference: "P-9",
    });
    const [resolution, applied] = await Promise.all([
      resolve(called, { status: "successful", note: "operator" }),
      server.anonymous.post("/callbacks/providers/sandbox", undefined, { raw: callback.raw, headers: callback.headers }),
    ]);
    expect([resolution.status, applied.status].sort()).toEqual([200, 409]);
    const final = resolution.status === 200 ? "successful" : "failed";
    expect((await transactionRow(db(), called)).status).toBe(final);
    expect((await ledgerOf(called)).map((e) => e.kind)).toEqual(["hold", final === "successful" ? "capture" : "release"]);
    expect(await reconcileWallets(db())).toEqual([]);
    const [held] = await db()
      .select({ pending: sql<number>`count(*)::int` })
      .from(transactions)
      .where(eq(transactions.status, "pending"));
    expect(held?.pending).toBe(0);
  }, 30_000);
});

describe("raising stuck orders from several workers", () => {
  test("passes running at once raise each order once; a refused operator webhook is logged at error and not retried", async () => {
    const orders = [await pendingOrder(), await pendingOrder(), await pendingOrder()];
    for (const reference of orders) await ageOrder(reference, 45);
    const before = operators.received.length;
    operators.failNext(1);
    const logs = captureLogs(server);
    let counts: number[];
    try {
      counts = await Promise.all([1, 2, 3].map(() => raiseStuckOrders(server.deps)));
    } finally {
      logs.restore();
    }
    expect(counts.reduce((sum, n) => sum + n, 0)).toBe(3);
    const posted = operators.received
      .slice(before)
      .map((r) => (verifyWebhook(operatorSecret, r) as { data: { reference: string } }).data.reference);
    expect(posted.sort()).toEqual([...orders].sort());
    const errors = logs.lines.map((line) => JSON.parse(line)).filter((line) => line.level === 50);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ msg: "operator webhook not delivered; not retried", outcome: "HTTP 500" });
    expect(await raiseStuckOrders(server.deps)).toBe(0);
    expect(operators.received.length).toBe(before + 3);
    for (const reference of orders) expect((await resolve(reference, { status: "failed", note: "drill" })).status).toBe(200);
    expect(await reconcileWallets(db())).toEqual([]);
  }, 30_000);
});
