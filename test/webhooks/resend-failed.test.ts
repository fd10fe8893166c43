import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { events, webhookDeliveries } from "../../src/db/schema/index.ts";
import { webhookRunner } from "../../src/jobs/queues/delivery-queue.ts";
import { loadConfig } from "../../src/load-config.ts";
import { maxResendFailed } from "../../src/webhooks/resend-failed.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { enqueueTestEvent, startWebhookReceiver, verifyWebhook, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

// No money moves here: events come from fixture transaction rows, no wallet or ledger is touched.

/** One attempt per delivery: a failure is final at once. */
let server: TestServer;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  server = await startTestServer({ webhooks: { ...loadConfig({}).webhooks, allowPrivateUrls: true, retrySchedule: [0] } });
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

async function drain(): Promise<void> {
  while ((await webhookRunner(server.deps, "resend-test").tick()) > 0) {}
}

/** Moves an event's creation time, so ranges can be tested without waiting. */
const backdate = (eventId: string, at: string) =>
  server.database.handle.db
    .update(events)
    .set({ createdAt: new Date(at) })
    .where(eq(events.id, eventId));

describe("POST /api/v1/events/resend-failed", () => {
  test("resends the failed deliveries of events in the range, once, even when asked twice", async () => {
    const r = receiver();
    const healthy = receiver();
    const account = await server.createAccount();
    const client = server.client(account.testKey);
    const endpoint = (await client.post("/api/v1/webhook-endpoints", { url: r.url })).json.data;
    const other = (await client.post("/api/v1/webhook-endpoints", { url: healthy.url })).json.data;
    r.failNext(4);
    const inRange = [await enqueueTestEvent(server, account.id), await enqueueTestEvent(server, account.id)];
    const before = await enqueueTestEvent(server, account.id);
    const after = await enqueueTestEvent(server, account.id);
    await drain();
    expect(r.accepted()).toHaveLength(0);
    expect(healthy.accepted()).toHaveLength(4);
    await backdate(inRange[0]?.eventId ?? "", "2026-01-10T10:00:00Z");
    await backdate(inRange[1]?.eventId ?? "", "2026-01-10T12:00:00Z");
    await backdate(before.eventId, "2026-01-10T09:59:59.999Z");
    await backdate(after.eventId, "2026-01-10T12:00:00.001Z");

    const range = { from: "2026-01-10T10:00:00Z", to: "2026-01-10T12:00:00Z" };
    const res = await client.post("/api/v1/events/resend-failed", range);
    expect(res.status).toBe(200);
    expect(res.json.data).toEqual({ scheduled: 2, more: false });
    // A double click: what is already pending is left alone.
    expect((await client.post("/api/v1/events/resend-failed", range)).json.data).toEqual({ scheduled: 0, more: false });
    await drain();
    const resent = r.accepted().map((x) => verifyWebhook(endpoint.secret, x) as { id: string });
    expect(resent.map((e) => e.id).sort()).toEqual(inRange.map((e) => e.eventId).sort());
    expect(healthy.received).toHaveLength(4);
    // Delivered now: asking again sends nothing.
    expect((await client.post("/api/v1/events/resend-failed", range)).json.data.scheduled).toBe(0);
    await drain();
    expect(r.received).toHaveLength(6);
    expect(other.id).not.toBe(endpoint.id);
  });

  test("endpoint_id narrows to one endpoint; disabled or unsubscribed endpoints are skipped", async () => {
    const one = receiver();
    const two = receiver();
    const account = await server.createAccount();
    const client = server.client(account.testKey);
    const first = (await client.post("/api/v1/webhook-endpoints", { url: one.url })).json.data;
    const second = (await client.post("/api/v1/webhook-endpoints", { url: two.url })).json.data;
    one.failNext(2);
    two.failNext(2);
    await enqueueTestEvent(server, account.id, "test", "successful");
    await enqueueTestEvent(server, account.id, "test", "failed");
    await drain();
    const range = { from: new Date(Date.now() - 3_600_000).toISOString(), to: new Date(Date.now() + 60_000).toISOString() };
    await client.request("PATCH", `/api/v1/webhook-endpoints/${second.id}`, { event_types: ["transaction.failed"] });
    const narrowed = await client.post("/api/v1/events/resend-failed", { ...range, endpoint_id: first.id });
    expect(narrowed.json.data.scheduled).toBe(2);
    const rest = await client.post("/api/v1/events/resend-failed", range);
    expect(rest.json.data.scheduled).toBe(1);
    await client.request("PATCH", `/api/v1/webhook-endpoints/${first.id}`, { enabled: false });
    await drain();
    expect(one.accepted()).toHaveLength(0);
    expect(two.accepted().map((x) => JSON.parse(x.body).type)).toEqual(["transaction.failed"]);
  });

  test("at most 1000 per request; `more` says to ask again", async () => {
    const account = await server.createAccount();
    const client = server.client(account.testKey);
    const endpoint = (await client.post("/api/v1/webhook-endpoints", { url: "http://127.0.0.1:9/" })).json.data;
    const db = server.database.handle.db;
    const count = maxResendFailed + 5;
    await db.execute(sql`insert into events (id, account_id, mode, type, payload, created_at)
      select 'evt_bulk' || n, ${account.id}::uuid, 'test', 'transaction.failed', '{}'::jsonb,
             '2026-02-01T00:00:00Z'::timestamptz + n * interval '1 second'
      from generate_series(1, ${count}::int) n`);
    await db.execute(sql`insert into webhook_deliveries (event_id, endpoint_id, status, attempts, last_error)
      select 'evt_bulk' || n, ${endpoint.id}::uuid, 'failed', 8, 'unreachable' from generate_series(1, ${count}::int) n`);
    const range = { from: "2026-02-01T00:00:00Z", to: "2026-02-02T00:00:00Z" };
    const first = await client.post("/api/v1/events/resend-failed", range);
    expect(first.json.data).toEqual({ scheduled: maxResendFailed, more: true });
    const pending = await db
      .select()
      .from(webhookDeliveries)
      .where(sql`${webhookDeliveries.endpointId} = ${endpoint.id} and ${webhookDeliveries.status} = 'pending'`);
    expect(pending).toHaveLength(maxResendFailed);
    // The oldest events first.
    expect(pending.some((d) => d.eventId === `evt_bulk${count}`)).toBe(false);
    expect((await client.post("/api/v1/events/resend-failed", range)).json.data).toEqual({ scheduled: 5, more: false });
    await db.execute(sql`delete from webhook_deliveries where endpoint_id = ${endpoint.id}::uuid`);
  });

  test.each([
    ["from after to", { from: "2026-01-02T00:00:00Z", to: "2026-01-01T00:00:00Z" }, "from"],
    ["a missing to", { from: "2026-01-01T00:00:00Z" }, "to"],
    ["a date that is no date", { from: "yesterday", to: "2026-01-01T00:00:00Z" }, "from"],
    [
      "an endpoint id that is no uuid",
      { from: "2026-01-01T00:00:00Z", to: "2026-01-02T00:00:00Z", endpoint_id: "x" },
      "endpoint_id",
    ],
  ])("%s is 400", async (_name, body, field) => {
    const { testKey } = await server.createAccount();
    const res = await server.client(testKey).post("/api/v1/events/resend-failed", body);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.json.data.errors)).toContain(field);
  });

  test("another account's endpoint is 404", async () => {
    const a = await server.createAccount();
    const b = await server.createAccount();
    const endpoint = (await server.client(a.testKey).post("/api/v1/webhook-endpoints", { url: "http://127.0.0.1:9/" })).json.data;
    const res = await server.client(b.testKey).post("/api/v1/events/resend-failed", {
      from: "2026-01-01T00:00:00Z",
      to: "2026-01-02T00:00:00Z",
      endpoint_id: endpoint.id,
    });
    expect(res.status).toBe(404);
  });
});
