import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { events, webhookDeliveries, webhookEndpoints } from "../../src/db/schema/index.ts";
import { webhookRunner } from "../../src/jobs/queues/delivery-queue.ts";
import { loadConfig } from "../../src/load-config.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { enqueueTestEvent, startWebhookReceiver, verifyWebhook, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

// No money moves here: events come from fixture transaction rows, no wallet or ledger is touched.

const defaults = loadConfig({}).webhooks;
/** Disabled after 1 s of failures; retries far apart, so a failed delivery stays pending meanwhile. */
let server: TestServer;
/** Never disables (WEBHOOK_DISABLE_AFTER_SECONDS=0). */
let never: TestServer;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  const webhooks = {
    ...defaults,
    allowPrivateUrls: true,
    retrySchedule: [0, 3600],
    endpointConcurrency: 4,
    disableAfterSeconds: 1,
  };
  server = await startTestServer({ webhooks });
  never = await startTestServer({ webhooks: { ...webhooks, disableAfterSeconds: 0 } });
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await server.close();
  await never.close();
});

function receiver(failing = false): WebhookReceiver {
  const r = startWebhookReceiver();
  if (failing) r.failNext(1_000_000);
  receivers.push(r);
  return r;
}

const tick = (on: TestServer) => webhookRunner(on.deps, "auto-disable-test").tick();

async function endpointRow(on: TestServer, id: string) {
  const [row] = await on.database.handle.db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id));
  if (!row) throw new Error(`no endpoint ${id}`);
  return row;
}

/** Waits until the endpoint's failing run is older than `seconds` (a lower bound: a slow machine only waits longer). */
async function untilFailingFor(on: TestServer, id: string, seconds: number) {
  const since = (await endpointRow(on, id)).failingSince;
  if (!since) throw new Error("endpoint is not failing");
  await Bun.sleep(Math.max(0, since.getTime() + seconds * 1000 - Date.now()) + 50);
}

async function setup(on: TestServer) {
  const account = await on.createAccount();
  const client = on.client(account.testKey);
  const dead = receiver(true);
  const healthy = receiver();
  const deadEndpoint = (await client.post("/api/v1/webhook-endpoints", { url: dead.url, description: "dead" })).json.data;
  const other = (await client.post("/api/v1/webhook-endpoints", { url: healthy.url })).json.data;
  return { account, client, dead, healthy, deadEndpoint, other };
}

describe("automatic disabling", () => {
  test("failing for the configured period disables the endpoint once, says why, and tells the other endpoint", async () => {
    const { account, client, dead, healthy, deadEndpoint, other } = await setup(server);
    const first = await enqueueTestEvent(server, account.id);
    expect(await tick(server)).toBe(2);
    const failing = await endpointRow(server, deadEndpoint.id);
    expect(failing.enabled).toBe(true);
    expect(failing.failingSince).not.toBeNull();
    expect((await client.get(`/api/v1/webhook-endpoints/${deadEndpoint.id}`)).json.data).toMatchObject({
      enabled: true,
      failing_since: failing.failingSince?.toISOString(),
      disabled_reason: null,
    });

    await untilFailingFor(server, deadEndpoint.id, 1);
    // Three events fail together (up to 4 in flight for the endpoint): one disabling, one event.
    for (let n = 0; n < 3; n++) await enqueueTestEvent(server, account.id);
    await tick(server);
    expect(dead.received.length).toBe(4);
    const shown = (await client.get(`/api/v1/webhook-endpoints/${deadEndpoint.id}`)).json.data;
    expect(shown).toMatchObject({ enabled: false, disabled_reason: "failing_deliveries" });
    expect(shown.disabled_message).toContain("every delivery attempt failed");
    expect(shown.disabled_at).not.toBeNull();
    expect(shown.failing_since).toBe(failing.failingSince?.toISOString());

    const disabledEvents = await server.database.handle.db
      .select()
      .from(events)
      .where(sql`${events.accountId} = ${account.id} and ${events.type} = 'webhook_endpoint.disabled'`);
    expect(disabledEvents).toHaveLength(1);
    // The first event's retry (still pending) is stopped, not sent later.
    const [firstDelivery] = await server.database.handle.db
      .select()
      .from(webhookDeliveries)
      .where(sql`${webhookDeliveries.eventId} = ${first.eventId} and ${webhookDeliveries.endpointId} = ${deadEndpoint.id}`);
    expect(firstDelivery).toMatchObject({ status: "failed", lastError: "endpoint disabled" });

    // The event goes to the other endpoint only.
    const before = dead.received.length;
    while ((await tick(server)) > 0) {}
    const disabledNotice = healthy.received.find((r) => JSON.parse(r.body).type === "webhook_endpoint.disabled");
    if (!disabledNotice) throw new Error("the other endpoint got no webhook_endpoint.disabled");
    expect(verifyWebhook(other.secret, disabledNotice)).toMatchObject({
      type: "webhook_endpoint.disabled",
      mode: "test",
      data: {
        endpoint_id: deadEndpoint.id,
        url: dead.url,
        description: "dead",
        reason: "failing_deliveries",
        failing_since: failing.failingSince?.toISOString(),
        disabled_at: shown.disabled_at,
      },
    });
    expect(dead.received.length).toBe(before);
    const listed = await client.get("/api/v1/events", { query: { type: "webhook_endpoint.disabled" } });
    expect(listed.json.data.items).toHaveLength(1);
    expect(listed.json.data.items[0].deliveries).toEqual([
      expect.objectContaining({ endpoint_id: other.id, status: "succeeded" }),
    ]);

    // New events skip the disabled endpoint altogether.
    const later = await enqueueTestEvent(server, account.id);
    while ((await tick(server)) > 0) {}
    expect(dead.received.length).toBe(before);
    const laterDeliveries = await server.database.handle.db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.eventId, later.eventId));
    expect(laterDeliveries.map((d) => d.endpointId)).toEqual([other.id]);
  });

  test("enabling again clears the reason and the failing run; a success ends a failing run", async () => {
    const { account, client, dead, deadEndpoint } = await setup(server);
    await enqueueTestEvent(server, account.id);
    await tick(server);
    await untilFailingFor(server, deadEndpoint.id, 1);
    await enqueueTestEvent(server, account.id);
    await tick(server);
    expect((await endpointRow(server, deadEndpoint.id)).enabled).toBe(false);

    const enabled = await client.request("PATCH", `/api/v1/webhook-endpoints/${deadEndpoint.id}`, { enabled: true });
    expect(enabled.status).toBe(200);
    expect(enabled.json.data).toMatchObject({
      enabled: true,
      disabled_reason: null,
      disabled_message: null,
      disabled_at: null,
      failing_since: null,
    });
    dead.failNext(1);
    await enqueueTestEvent(server, account.id);
    await tick(server);
    expect((await endpointRow(server, deadEndpoint.id)).failingSince).not.toBeNull();
    await enqueueTestEvent(server, account.id);
    await tick(server);
    expect(dead.accepted().length).toBeGreaterThan(0);
    expect((await endpointRow(server, deadEndpoint.id)).failingSince).toBeNull();
  });

  test("with WEBHOOK_DISABLE_AFTER_SECONDS=0 an endpoint is never disabled", async () => {
    const { account, deadEndpoint } = await setup(never);
    await enqueueTestEvent(never, account.id);
    await tick(never);
    await never.database.handle.db
      .update(webhookEndpoints)
      .set({ failingSince: sql`now() - interval '30 days'` })
      .where(eq(webhookEndpoints.id, deadEndpoint.id));
    await enqueueTestEvent(never, account.id);
    await tick(never);
    expect(await endpointRow(never, deadEndpoint.id)).toMatchObject({ enabled: true, disabledReason: null });
  });
});

describe("configuration", () => {
  test("WEBHOOK_DISABLE_AFTER_SECONDS defaults to 3 days; 0 is allowed; garbage is refused", () => {
    expect(loadConfig({}).webhooks.disableAfterSeconds).toBe(259_200);
    expect(loadConfig({ WEBHOOK_DISABLE_AFTER_SECONDS: "0" }).webhooks.disableAfterSeconds).toBe(0);
    expect(() => loadConfig({ WEBHOOK_DISABLE_AFTER_SECONDS: "-1" })).toThrow("WEBHOOK_DISABLE_AFTER_SECONDS");
  });
});
