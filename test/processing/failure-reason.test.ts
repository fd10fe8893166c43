import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { and, eq, isNull, sql } from "drizzle-orm";
import { failureCodes } from "../../generated/constants.ts";
import { ledgerEntries, sandboxOrders, transactions } from "../../src/db/schema/index.ts";
import { reconcileWallets } from "../../src/ledger/reconcile.ts";
import { fundedAccount, idem } from "../helpers/accounts.ts";
import type { HttpClient } from "../helpers/http.ts";
import { fastProcessing, sandboxCallback, transactionRow } from "../helpers/processing.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { waitUntil } from "../helpers/wait.ts";
import { startWebhookReceiver, verifyWebhook, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

// Each way a test-mode order fails, end to end over HTTP with the real worker: the client reads why on the
// transaction (its GET and `wait`), in the listing, in a batch's orders and in the signed transaction.failed
// webhook, as the service-owned metadata keys failure_code and failure_message.
let server: TestServer;
let client: HttpClient;
let receiver: WebhookReceiver;
let secret: string;
const funded = 10_000_000;

beforeAll(async () => {
  server = await startTestServer(fastProcessing(), { background: true });
  client = (await fundedAccount(server, funded, "Why Failed Ltd")).client;
  receiver = startWebhookReceiver();
  const endpoint = await client.post("/api/v1/webhook-endpoints", { url: `${receiver.url}/hooks` });
  secret = endpoint.json.data.secret;
});
afterAll(async () => {
  await server.close();
  await receiver.close();
});

const db = () => server.database.handle.db;

interface Txn {
  reference: string;
  status: string;
  price_kobo: number;
  metadata: Record<string, string>;
}
type Event = { type: string; data: Txn };

const reasonOf = (t: Txn | undefined) => ({ code: t?.metadata.failure_code, message: t?.metadata.failure_message });

/** The verified client webhook about `reference`, waiting for it to arrive. */
function webhookFor(reference: string): Promise<Event> {
  return waitUntil(
    () =>
      receiver.received
        .map((request) => verifyWebhook(secret, request) as Event)
        .find((event) => event.data.reference === reference),
    { what: `webhook about ${reference} at /hooks` },
  );
}

async function listed(reference: string): Promise<Txn | undefined> {
  const res = await client.get("/api/v1/transactions", { query: { limit: 100 } });
  return res.json.data.items.find((t: Txn) => t.reference === reference);
}

/** Ledger kinds of the order: a failure holds and releases once, and nothing else. */
async function ledgerKinds(reference: string): Promise<string[]> {
  const row = await transactionRow(db(), reference);
  const entries = await db().select().from(ledgerEntries).where(eq(ledgerEntries.transactionId, row.id));
  return entries.map((e) => e.kind).sort();
}

/** The failure seen the same on the waited GET, the listing and the webhook; money released once. */
async function expectFailedBecause(reference: string, code: string, providerWords: string[] = []) {
  const got = (await client.get(`/api/v1/transactions/${reference}`, { query: { wait: 10 } })).json.data as Txn;
  expect(got.status).toBe("failed");
  const reason = reasonOf(got);
  expect(reason.code).toBe(code);
  expect(reason.message).toBeString();
  expect((reason.message ?? "").length).toBeGreaterThan(10);
  // The service's words, never the provider's own message or ids.
  for (const words of [...providerWords, "Sandbox", "SBX-", "http"]) expect(reason.message).not.toContain(words);
  expect(reasonOf(await listed(reference))).toEqual(reason);
  const event = await webhookFor(reference);
  expect(event.type).toBe("transaction.failed");
  expect(reasonOf(event.data)).toEqual(reason);
  expect(await ledgerKinds(reference)).toEqual(["hold", "release"]);
  return reason;
}

async function vend(phone: string, metadata: Record<string, string> = {}, wait = 0): Promise<Txn> {
  const res = await client.post(
    "/api/v1/vend",
    { product_code: "mtn-airtime", phone_number: phone, amount_kobo: 10_000, metadata },
    { ...idem(), query: { wait } },
  );
  expect(res.status).toBe(202);
  return res.json.data;
}

/** Waits until the worker has the order pending with the sandbox. */
async function pendingOrder(phone: string): Promise<string> {
  const { reference } = await vend(phone);
  await waitUntil(async () => (await transactionRow(db(), reference)).status === "pending", {
    what: `${reference} pending with the sandbox`,
  });
  return reference;
}

/** Takes a pending order no worker holds off the re-query schedule; the rows it changed. */
const parkPending = (reference: string) =>
  db()
    .update(transactions)
    .set({ nextAttemptAt: null })
    .where(and(eq(transactions.reference, reference), eq(transactions.status, "pending"), isNull(transactions.leaseOwner)))
    .returning({ id: transactions.id });

const messages = new Map<string, string | undefined>();

describe("a failed vend says why", () => {
  test("the provider refuses it at once (sandbox 1111): provider_refused in the wait answer, GET, listing and webhook; a caller's failure_code is replaced", async () => {
    const answer = await vend("08031231111", { order_id: "o-1", failure_code: "made_up", failure_message: "mine" }, 10);
    expect(answer.status).toBe("failed");
    expect(reasonOf(answer).code).toBe("provider_refused");
    expect(answer.metadata.order_id).toBe("o-1");
    const reason = await expectFailedBecause(answer.reference, "provider_refused", ["declined (destination ends in 1111)"]);
    expect(reasonOf(answer)).toEqual(reason);
    messages.set(reason.code ?? "", reason.message);
    // Operators still see the provider's own words.
    expect((await transactionRow(db(), answer.reference)).failureReason).toContain("1111");
  });

  test("a successful vend carries neither key, even when the caller sent them", async () => {
    const answer = await vend(
      "08031230042",
      { order_id: "o-2", failure_code: "provider_refused", failure_message: "x", resolved_by_operator: "true" },
      10,
    );
    expect(answer.status).toBe("successful");
    expect(answer.metadata.resolved_by_operator).toBeUndefined();
    expect(reasonOf(answer)).toEqual({ code: undefined, message: undefined });
    expect(answer.metadata.order_id).toBe("o-2");
    expect(reasonOf(await listed(answer.reference))).toEqual({ code: undefined, message: undefined });
    const event = await webhookFor(answer.reference);
    expect(event.type).toBe("transaction.successful");
    expect(reasonOf(event.data)).toEqual({ code: undefined, message: undefined });
    expect(await ledgerKinds(answer.reference)).toEqual(["capture", "hold"]);
    // A row stored before the keys were the service's, with a caller's values in them, shows neither.
    await db()
      .update(transactions)
      .set({ metadata: sql`metadata || '{"failure_code":"made_up","failure_message":"old"}'::jsonb` })
      .where(eq(transactions.reference, answer.reference));
    const legacy = (await client.get(`/api/v1/transactions/${answer.reference}`)).json.data;
    expect(reasonOf(legacy)).toEqual({ code: undefined, message: undefined });
  });

  test("the provider's signed callback reports a failure (sandbox 3333): not_delivered", async () => {
    const { reference } = await vend("08021233333");
    const reason = await expectFailedBecause(reference, "not_delivered", ["declined after review"]);
    messages.set(reason.code ?? "", reason.message);
  });

  test("a callback replayed by hand on a pending order (sandbox 4444) reporting failure: not_delivered", async () => {
    const reference = await pendingOrder("08031234444");
    const callback = sandboxCallback({
      event_id: "why-1",
      reference,
      status: "failed",
      provider_reference: "P-WHY-1",
      message: "Upstream said: ERR_91 at https://provider.example/internal",
    });
    const applied = await server.anonymous.post("/callbacks/providers/sandbox", undefined, {
      raw: callback.raw,
      headers: callback.headers,
    });
    expect(applied.status).toBe(200);
    expect(reasonOf(applied.json.data).code).toBe("not_delivered");
    await expectFailedBecause(reference, "not_delivered", ["ERR_91", "provider.example"]);
  });

  test("the worker's re-query finds it failed at the provider: not_delivered", async () => {
    const reference = await pendingOrder("08031234444");
    await db()
      .update(sandboxOrders)
      .set({ status: "failed", result: { message: "Sandbox: reversed by the network" } })
      .where(eq(sandboxOrders.reference, reference));
    await expectFailedBecause(reference, "not_delivered", ["reversed by the network"]);
  });

  test("an operator's re-query finds it failed at the provider: not_delivered", async () => {
    const reference = await pendingOrder("08031234444");
    // Out of the worker's hands first (no lease, no re-query due), so only the operator's re-query can fail it.
    await waitUntil(async () => (await parkPending(reference)).length > 0, { what: `${reference} out of the worker's hands` });
    await db().update(sandboxOrders).set({ status: "failed" }).where(eq(sandboxOrders.reference, reference));
    const requeried = await server.admin.post(`/admin/v1/transactions/${reference}/requery`);
    expect(requeried.status).toBe(200);
    expect(requeried.json.data.status).toBe("failed");
    expect(reasonOf(requeried.json.data).code).toBe("not_delivered");
    await expectFailedBecause(reference, "not_delivered");
  });

  test("an operator resolves it as failed: resolved_by_operator (the operator's note stays with operators)", async () => {
    const reference = await pendingOrder("08031234444");
    const note = "Provider ticket #8812 confirms no delivery";
    const resolved = await server.admin.post(`/admin/v1/transactions/${reference}/resolve`, { status: "failed", note });
    expect(resolved.status).toBe(200);
    const reason = await expectFailedBecause(reference, "resolved_by_operator", ["8812"]);
    messages.set(reason.code ?? "", reason.message);
    // Each code has its own words.
    expect(new Set(messages.values()).size).toBe(messages.size);
    expect([...messages.keys()].every((code) => (failureCodes as readonly string[]).includes(code))).toBe(true);
  });

  test("a bulk order: the failed order says why in the batch's orders; caller failure keys are dropped on every order", async () => {
    const order = (phone: string) => ({
      service: "airtime",
      product_code: "mtn-airtime",
      phone_number: phone,
      amount_kobo: 10_000,
      metadata: { failure_code: "provider_refused", failure_message: "caller text", mine: "kept" },
    });
    const created = await client.post("/api/v1/vend/batches", { orders: [order("08031231111"), order("08031230077")] }, idem());
    expect(created.status).toBe(202);
    const id: string = created.json.data.id;
    const read = await waitUntil(
      async () => {
        const res = await client.get(`/api/v1/vend/batches/${id}`);
        return res.json.data.batch.completed_at !== null && res;
      },
      { what: `batch ${id} completed` },
    );
    const orders: Txn[] = read.json.data.orders.items;
    const failed = orders.find((t) => t.status === "failed");
    const successful = orders.find((t) => t.status === "successful");
    expect(reasonOf(failed)).toEqual({ code: "provider_refused", message: messages.get("provider_refused") });
    expect(reasonOf(successful)).toEqual({ code: undefined, message: undefined });
    expect(orders.map((t) => t.metadata.mine)).toEqual(["kept", "kept"]);
    await expectFailedBecause(failed?.reference ?? "", "provider_refused");
  });

  test("the books: failures released, successes captured, every wallet equals its ledger", async () => {
    const wallet = (await client.get("/api/v1/wallet")).json.data;
    expect(wallet.held_kobo).toBe(0);
    // Two successes (the single vend and the batch's) at ₦97 each; every failure was released.
    expect(wallet.balance_kobo).toBe(funded - 2 * 9_700);
    expect(await reconcileWallets(db())).toEqual([]);
  });
});
