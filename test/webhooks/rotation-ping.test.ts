import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { events, webhookEndpoints } from "../../src/db/schema/index.ts";
import { webhookRunner } from "../../src/jobs/queues/delivery-queue.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import {
  enqueueTestEvent,
  type ReceivedWebhook,
  startWebhookReceiver,
  verifyWebhook,
  type WebhookReceiver,
} from "../helpers/webhook-receiver.ts";

// No money moves here: events come from fixture transaction rows, no wallet or ledger is touched.

let server: TestServer;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await server.close();
});

function receiver(): WebhookReceiver {
  const r = startWebhookReceiver();
  receivers.push(r);
  return r;
}

/** Whether a receiver holding only `secret` accepts the request (the standardwebhooks library, as clients use it). */
function verifies(secret: string, request: ReceivedWebhook): boolean {
  try {
    new Webhook(secret).verify(request.body, request.headers);
    return true;
  } catch {
    return false;
  }
}

async function accountWithEndpoint(url: string) {
  const account = await server.createAccount();
  const client = server.client(account.testKey);
  const created = (await client.post("/api/v1/webhook-endpoints", { url })).json.data;
  return { ...account, client, endpoint: created as { id: string; secret: string } };
}

async function deliverOne(accountId: string, r: WebhookReceiver): Promise<ReceivedWebhook> {
  const before = r.received.length;
  await enqueueTestEvent(server, accountId);
  await webhookRunner(server.deps, "rotation-test").tick();
  const request = r.received[before];
  if (!request || r.received.length !== before + 1) throw new Error("expected exactly one delivery");
  return request;
}

describe("secret rotation", () => {
  test("during the overlap a receiver with only the old secret and one with only the new both verify; after it only the new", async () => {
    const r = receiver();
    const { id, client, endpoint } = await accountWithEndpoint(r.url);
    const old = endpoint.secret;
    const rotated = await client.post(`/api/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { overlap_seconds: 1 });
    expect(rotated.status).toBe(200);
    const fresh = rotated.json.data.secret as string;
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(old);
    const expiresAt = Date.parse(rotated.json.data.previous_secret_expires_at);
    expect(expiresAt).toBeGreaterThan(Date.now() - 5_000);

    const during = await deliverOne(id, r);
    expect(during.headers["webhook-signature"]?.split(" ")).toHaveLength(2);
    expect(verifies(old, during)).toBe(true);
    expect(verifies(fresh, during)).toBe(true);

    // After the overlap (a lower bound: a slow machine only waits longer).
    await Bun.sleep(Math.max(0, expiresAt - Date.now()) + 50);
    const after = await deliverOne(id, r);
    expect(after.headers["webhook-signature"]?.split(" ")).toHaveLength(1);
    expect(verifies(old, after)).toBe(false);
    expect(verifies(fresh, after)).toBe(true);
    expect((await client.get("/api/v1/webhook-endpoints")).text).not.toContain("whsec_");
  });

  test("the default overlap is 24 h; 0 retires the old secret at once; a second rotation retires the oldest", async () => {
    const r = receiver();
    const { id, client, endpoint } = await accountWithEndpoint(r.url);
    const path = `/api/v1/webhook-endpoints/${endpoint.id}/rotate-secret`;
    const first = await client.post(path);
    expect(first.status).toBe(200);
    const overlap = Date.parse(first.json.data.previous_secret_expires_at) - Date.now();
    expect(overlap).toBeGreaterThan(86_400_000 - 120_000);
    expect(overlap).toBeLessThan(86_400_000 + 120_000);
    const second = (await client.post(path, { overlap_seconds: 3600 })).json.data.secret as string;
    const request = await deliverOne(id, r);
    expect(verifies(endpoint.secret, request)).toBe(false);
    expect(verifies(first.json.data.secret, request)).toBe(true);
    expect(verifies(second, request)).toBe(true);

    const now = await client.post(path, { overlap_seconds: 0 });
    expect(now.json.data.previous_secret_expires_at).toBeNull();
    const only = await deliverOne(id, r);
    expect(verifies(second, only)).toBe(false);
    expect(verifies(now.json.data.secret, only)).toBe(true);
  });

  test("bad overlaps are 400; another account's endpoint is 404; nothing changes", async () => {
    const { client, endpoint, testKey } = await accountWithEndpoint("http://127.0.0.1:9/");
    const path = `/api/v1/webhook-endpoints/${endpoint.id}/rotate-secret`;
    for (const body of [{ overlap_seconds: -1 }, { overlap_seconds: 604_801 }, { overlap_seconds: 1.5 }, { overlap: 10 }]) {
      const res = await client.post(path, body);
      expect(res.status).toBe(400);
      expect(res.json.code).toBe("VALIDATION_FAILED");
    }
    const other = await server.createAccount();
    expect((await server.client(other.testKey).post(path)).status).toBe(404);
    const [row] = await server.database.handle.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id));
    expect(row?.secret).toBe(endpoint.secret);
    expect(row?.previousSecret).toBeNull();
    expect(testKey).toStartWith("rg_test_");
  });
});

describe("ping", () => {
  test("sends a signed webhook_endpoint.ping to that endpoint only, now, and stores nothing", async () => {
    const r = receiver();
    const bystander = receiver();
    const { id, client, endpoint } = await accountWithEndpoint(`${r.url}/hooks`);
    await client.post("/api/v1/webhook-endpoints", { url: bystander.url });
    const res = await client.post(`/api/v1/webhook-endpoints/${endpoint.id}/ping`);
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({ endpoint_id: endpoint.id, delivered: true, status_code: 200, error: null });
    expect(r.received).toHaveLength(1);
    const [request] = r.received;
    if (!request) throw new Error("no ping");
    expect(request.path).toBe("/hooks");
    expect(request.headers["webhook-id"]).toBe(res.json.data.webhook_id);
    expect(verifyWebhook(endpoint.secret, request)).toMatchObject({
      id: res.json.data.webhook_id,
      type: "webhook_endpoint.ping",
      mode: "test",
      data: { endpoint_id: endpoint.id },
    });
    expect(bystander.received).toHaveLength(0);
    expect(await server.database.handle.db.select().from(events).where(eq(events.accountId, id))).toEqual([]);
    expect(await webhookRunner(server.deps, "ping-test").tick()).toBe(0);
  });

  test("a failing receiver is reported, not thrown; a disabled endpoint can be pinged and stays disabled", async () => {
    const r = receiver();
    const { client, endpoint, testKey } = await accountWithEndpoint(r.url);
    await client.request("PATCH", `/api/v1/webhook-endpoints/${endpoint.id}`, { enabled: false });
    r.failNext(1);
    const failed = await client.post(`/api/v1/webhook-endpoints/${endpoint.id}/ping`);
    expect(failed.status).toBe(200);
    expect(failed.json.data).toMatchObject({ delivered: false, status_code: 500, error: "HTTP 500" });
    const ok = await client.post(`/api/v1/webhook-endpoints/${endpoint.id}/ping`);
    expect(ok.json.data.delivered).toBe(true);
    expect((await client.get(`/api/v1/webhook-endpoints/${endpoint.id}`)).json.data).toMatchObject({
      enabled: false,
      disabled_reason: "disabled_by_client",
      failing_since: null,
    });
    expect(
      (await server.client((await server.createAccount()).testKey).post(`/api/v1/webhook-endpoints/${endpoint.id}/ping`)).status,
    ).toBe(404);
    expect(testKey).toStartWith("rg_test_");
  });

  test("during a rotation the ping carries both signatures", async () => {
    const r = receiver();
    const { client, endpoint } = await accountWithEndpoint(r.url);
    const fresh = (await client.post(`/api/v1/webhook-endpoints/${endpoint.id}/rotate-secret`)).json.data.secret;
    await client.post(`/api/v1/webhook-endpoints/${endpoint.id}/ping`);
    const [request] = r.received;
    if (!request) throw new Error("no ping");
    expect(verifies(endpoint.secret, request)).toBe(true);
    expect(verifies(fresh, request)).toBe(true);
  });
});
