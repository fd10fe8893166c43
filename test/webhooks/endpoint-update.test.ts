import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { webhookDeliveries, webhookEndpoints } from "../../src/db/schema/index.ts";
import { webhookRunner } from "../../src/jobs/queues/delivery-queue.ts";
import { loadConfig } from "../../src/load-config.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { enqueueTestEvent, startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

// No money moves here: events come from fixture transaction rows, no wallet or ledger is touched.

/** As in production: private targets refused. */
let strict: TestServer;
/** Receivers on 127.0.0.1. */
let server: TestServer;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  strict = await startTestServer({ webhooks: loadConfig({ DATABASE_URL: "postgres://db.internal/vend" }).webhooks });
  server = await startTestServer();
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await strict.close();
  await server.close();
});

function receiver(): WebhookReceiver {
  const r = startWebhookReceiver();
  receivers.push(r);
  return r;
}

const publicUrl = "https://93.184.216.34/hooks";
const patch = (on: TestServer, key: string, id: string, body: unknown) =>
  on.client(key).request("PATCH", `/api/v1/webhook-endpoints/${id}`, body);

async function deliveriesOf(on: TestServer, eventId: string) {
  return on.database.handle.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, eventId));
}

describe("GET and PATCH /api/v1/webhook-endpoints/{id}", () => {
  test("get shows the endpoint without its secret; another account's or mode's is 404", async () => {
    const a = await strict.createAccount("a");
    const b = await strict.createAccount("b");
    const created = (
      await strict.client(a.testKey).post("/api/v1/webhook-endpoints", { url: publicUrl, event_types: ["transaction.failed"] })
    ).json.data;
    const got = await strict.client(a.testKey).get(`/api/v1/webhook-endpoints/${created.id}`);
    expect(got.status).toBe(200);
    const { secret: _secret, ...shown } = created;
    expect(got.json.data).toEqual(shown);
    expect(got.json.data.event_types).toEqual(["transaction.failed"]);
    expect(got.text).not.toContain("whsec_");
    for (const key of [a.liveKey, b.testKey]) {
      expect((await strict.client(key).get(`/api/v1/webhook-endpoints/${created.id}`)).status).toBe(404);
      const res = await patch(strict, key, created.id, { description: "mine now" });
      expect(res.status).toBe(404);
      expect(res.json.code).toBe("NOT_FOUND");
    }
    expect((await strict.client(a.testKey).get(`/api/v1/webhook-endpoints/${created.id}`)).json.data.description).toBeNull();
  });

  test("patch changes only what is given; updated_at moves; description can be cleared", async () => {
    const { testKey } = await strict.createAccount();
    const client = strict.client(testKey);
    const created = (await client.post("/api/v1/webhook-endpoints", { url: publicUrl, description: "orders" })).json.data;
    const changed = await patch(strict, testKey, created.id, {
      url: "https://93.184.216.35/v2",
      event_types: ["batch.completed"],
    });
    expect(changed.status).toBe(200);
    expect(changed.json.data).toMatchObject({
      id: created.id,
      url: "https://93.184.216.35/v2",
      description: "orders",
      event_types: ["batch.completed"],
      enabled: true,
    });
    expect(Date.parse(changed.json.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));
    const cleared = await patch(strict, testKey, created.id, { description: null, event_types: null });
    expect(cleared.json.data).toMatchObject({ description: null, event_types: null, url: "https://93.184.216.35/v2" });
  });

  test("a new URL goes through the same guard as creation; nothing is changed when it is refused", async () => {
    const { testKey, liveKey } = await strict.createAccount();
    const created = (await strict.client(testKey).post("/api/v1/webhook-endpoints", { url: publicUrl })).json.data;
    for (const url of ["http://127.0.0.1:9/x", "http://10.0.0.2/x", "ftp://example.com/x"]) {
      const res = await patch(strict, testKey, created.id, { url, description: "changed" });
      expect(res.status).toBe(400);
      expect(res.json.data.errors[0].field).toBe("url");
    }
    expect((await strict.client(testKey).get(`/api/v1/webhook-endpoints/${created.id}`)).json.data).toMatchObject({
      url: publicUrl,
      description: null,
    });
    const live = (await strict.client(liveKey).post("/api/v1/webhook-endpoints", { url: publicUrl })).json.data;
    const plain = await patch(strict, liveKey, live.id, { url: "http://93.184.216.34/hooks" });
    expect(plain.status).toBe(400);
    expect(plain.json.data.errors).toEqual([{ field: "url", message: "must use https in live mode" }]);
  });

  test.each([
    ["an empty body", {}],
    ["an empty event_types", { event_types: [] }],
    ["an unknown event type", { event_types: ["transaction.reversed"] }],
    ["a repeated event type", { event_types: ["transaction.failed", "transaction.failed"] }],
    ["an unknown field", { secret: "whsec_x" }],
    ["enabled as a string", { enabled: "yes" }],
  ])("%s is 400", async (_name, body) => {
    const { testKey } = await strict.createAccount();
    const created = (await strict.client(testKey).post("/api/v1/webhook-endpoints", { url: publicUrl })).json.data;
    const res = await patch(strict, testKey, created.id, body);
    expect(res.status).toBe(400);
    expect(res.json.code).toBe("VALIDATION_FAILED");
  });

  test.each([
    ["an empty event_types", { event_types: [] }],
    ["an unknown event type", { event_types: ["webhook_endpoint.ping"] }],
  ])("create with %s is 400 and creates nothing", async (_name, extra) => {
    const { testKey } = await strict.createAccount();
    const res = await strict.client(testKey).post("/api/v1/webhook-endpoints", { url: publicUrl, ...extra });
    expect(res.status).toBe(400);
    expect(res.json.data.errors[0].field).toContain("event_types");
    expect((await strict.client(testKey).get("/api/v1/webhook-endpoints")).json.data).toEqual([]);
  });

  test("disabling by the client says so, stops pending deliveries, and the loop sends nothing", async () => {
    const r = receiver();
    const account = await server.createAccount();
    const client = server.client(account.testKey);
    const created = (await client.post("/api/v1/webhook-endpoints", { url: r.url })).json.data;
    const { eventId } = await enqueueTestEvent(server, account.id);
    const disabled = await patch(server, account.testKey, created.id, { enabled: false });
    expect(disabled.json.data).toMatchObject({ enabled: false, disabled_reason: "disabled_by_client" });
    expect(disabled.json.data.disabled_message).toContain("enabled: true");
    expect(await deliveriesOf(server, eventId)).toEqual([
      expect.objectContaining({ status: "failed", lastError: "endpoint disabled", attempts: 0 }),
    ]);
    await enqueueTestEvent(server, account.id);
    expect(await webhookRunner(server.deps, "t").tick()).toBe(0);
    expect(r.received).toHaveLength(0);
    // Disabling again keeps the first reason and time.
    const again = await patch(server, account.testKey, created.id, { enabled: false });
    expect(again.json.data.disabled_at).toBe(disabled.json.data.disabled_at);
  });

  test("narrowing the subscription stops pending deliveries of other types only", async () => {
    const r = receiver();
    const account = await server.createAccount();
    const client = server.client(account.testKey);
    const created = (await client.post("/api/v1/webhook-endpoints", { url: r.url })).json.data;
    const ok = await enqueueTestEvent(server, account.id, "test", "successful");
    const failed = await enqueueTestEvent(server, account.id, "test", "failed");
    await patch(server, account.testKey, created.id, { event_types: ["transaction.failed"] });
    expect(await deliveriesOf(server, ok.eventId)).toEqual([
      expect.objectContaining({ status: "failed", lastError: "not subscribed" }),
    ]);
    expect(await webhookRunner(server.deps, "t").tick()).toBe(1);
    expect(r.received.map((x) => JSON.parse(x.body).id)).toEqual([failed.eventId]);
  });

  test("a delivery that slipped in before the endpoint was disabled is retired at claim time, unsent", async () => {
    const r = receiver();
    const account = await server.createAccount();
    const created = (await server.client(account.testKey).post("/api/v1/webhook-endpoints", { url: r.url })).json.data;
    const { eventId } = await enqueueTestEvent(server, account.id);
    // As if the disabling committed while the delivery was being scheduled: endpoint off, delivery still pending.
    await server.database.handle.db
      .update(webhookEndpoints)
      .set({ enabled: false, disabledReason: "disabled_by_client", disabledAt: new Date() })
      .where(eq(webhookEndpoints.id, created.id));
    expect(await webhookRunner(server.deps, "t").tick()).toBe(1);
    expect(r.received).toHaveLength(0);
    expect(await deliveriesOf(server, eventId)).toEqual([
      expect.objectContaining({ status: "failed", lastError: "endpoint disabled", attempts: 0 }),
    ]);
  });

  test("ping keeps the address guard: an endpoint pointing at loopback is refused, nothing reaches it", async () => {
    const r = receiver();
    const account = await strict.createAccount();
    const created = (await strict.client(account.testKey).post("/api/v1/webhook-endpoints", { url: publicUrl })).json.data;
    // As if the address had changed behind a name: the row points at loopback now.
    await strict.database.handle.db.update(webhookEndpoints).set({ url: r.url }).where(eq(webhookEndpoints.id, created.id));
    const res = await strict.client(account.testKey).post(`/api/v1/webhook-endpoints/${created.id}/ping`);
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ delivered: false, status_code: null, error: "refused: private or loopback address" });
    expect(r.received).toHaveLength(0);
  });
});
