import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { components } from "../../generated/openapi-types.ts";
import { webhookRunner } from "../../src/jobs/queues/delivery-queue.ts";
import type { HttpClient } from "../helpers/http.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { enqueueTestEvent, startWebhookReceiver, verifyWebhook, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

type Query = Record<string, string | number | undefined>;
type EventItem = components["schemas"]["Event"];

let server: TestServer;
let receiver: WebhookReceiver;
let a: { id: string; testKey: string; liveKey: string };
let b: { id: string; testKey: string; liveKey: string };
let endpoint: { id: string; secret: string };
const aTestEvents: { id: string; type: string }[] = [];

/** Passes until nothing is due (one pass sends at most WEBHOOK_ENDPOINT_CONCURRENCY per endpoint); the total claimed. */
async function tick(): Promise<number> {
  let total = 0;
  for (;;) {
    const claimed = await webhookRunner(server.deps, "events-test").tick();
    if (claimed === 0) return total;
    total += claimed;
  }
}

beforeAll(async () => {
  server = await startTestServer();
  receiver = startWebhookReceiver();
  a = await server.createAccount("a");
  b = await server.createAccount("b");
  endpoint = (await server.client(a.testKey).post("/api/v1/webhook-endpoints", { url: receiver.url })).json.data;
  for (let n = 0; n < 7; n++) {
    const status = n % 3 === 0 ? "failed" : "successful";
    const { eventId } = await enqueueTestEvent(server, a.id, "test", status);
    aTestEvents.push({ id: eventId, type: `transaction.${status}` });
  }
  await enqueueTestEvent(server, a.id, "live");
  await enqueueTestEvent(server, b.id, "test");
  await tick();
});
afterAll(async () => {
  await receiver.close();
  await server.close();
});

async function collect(client: HttpClient, query: Query, limit: number): Promise<EventItem[]> {
  const seen: EventItem[] = [];
  let cursor: string | undefined;
  do {
    const res = await client.get("/api/v1/events", { query: { ...query, limit, cursor } });
    expect(res.status).toBe(200);
    const { items, page } = res.json.data;
    expect(items.length).toBeLessThanOrEqual(limit);
    if (page.has_more) expect(items.length).toBe(limit);
    else expect(page.next_cursor).toBeNull();
    seen.push(...items);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return seen;
}

describe("listEvents", () => {
  test("pages newest first through the key's account and mode only", async () => {
    const client = server.client(a.testKey);
    const all = await collect(client, {}, 100);
    expect(all.map((e) => e.id).sort()).toEqual(aTestEvents.map((e) => e.id).sort());
    const times = all.map((e) => Date.parse(e.created_at));
    expect(times).toEqual([...times].sort((x, y) => y - x));
    const paged = await collect(client, {}, 2);
    expect(paged.map((e) => e.id)).toEqual(all.map((e) => e.id));
    expect((await collect(server.client(a.liveKey), {}, 10)).map((e) => e.id)).toHaveLength(1);
    expect((await collect(server.client(b.testKey), {}, 10)).map((e) => e.id)).toHaveLength(1);
    expect(await collect(server.client(b.liveKey), {}, 10)).toEqual([]);
  });

  test("each event carries its payload and its deliveries", async () => {
    const res = await server.client(a.testKey).get("/api/v1/events", { query: { limit: 1 } });
    const latest: EventItem | undefined = res.json.data.items[0];
    expect(latest?.deliveries).toEqual([
      {
        endpoint_id: endpoint.id,
        status: "succeeded",
        attempts: 1,
        last_status_code: 200,
        last_error: null,
        next_attempt_at: null,
      },
    ]);
    const delivered = receiver.received.find((r) => r.headers["webhook-id"] === latest?.id);
    if (!delivered) throw new Error("event not delivered");
    const { deliveries, ...event } = latest as EventItem;
    expect(verifyWebhook(endpoint.secret, delivered)).toEqual(event);
    expect(deliveries).toHaveLength(1);
  });

  test("type filters, and cursors are bound to the filter and the scope", async () => {
    const client = server.client(a.testKey);
    const failed = await collect(client, { type: "transaction.failed" }, 2);
    const expected = aTestEvents.filter((e) => e.type === "transaction.failed").map((e) => e.id);
    expect(failed.map((e) => e.id).sort()).toEqual(expected.sort());
    expect(failed.every((e) => e.type === "transaction.failed")).toBe(true);

    const first = await client.get("/api/v1/events", { query: { type: "transaction.successful", limit: 2 } });
    const cursor = first.json.data.page.next_cursor as string;
    for (const [who, query] of [
      [client, { cursor, type: "transaction.failed" }],
      [client, { cursor }],
      [server.client(a.liveKey), { cursor, type: "transaction.successful" }],
      [server.client(b.testKey), { cursor, type: "transaction.successful" }],
      [client, { cursor: "garbage", type: "transaction.successful" }],
    ] as const) {
      const res = await who.get("/api/v1/events", { query: { ...query, limit: 2 } });
      expect(res.status).toBe(400);
      expect(res.json.data.errors[0].field).toBe("cursor");
    }
    const bad = await client.get("/api/v1/events", { query: { type: "transaction.pending" } });
    expect(bad.status).toBe(400);
  });
});

describe("resendEvent", () => {
  test("delivers the event again to every current endpoint", async () => {
    const client = server.client(a.testKey);
    const target = aTestEvents[0];
    if (!target) throw new Error("no events");
    const extra = startWebhookReceiver();
    try {
      const added = (await client.post("/api/v1/webhook-endpoints", { url: extra.url })).json.data;
      const before = receiver.received.filter((r) => r.headers["webhook-id"] === target.id).length;
      const res = await client.post(`/api/v1/events/${target.id}/resend`);
      expect(res.status).toBe(200);
      expect(res.json.data.id).toBe(target.id);
      const byEndpoint = new Map(res.json.data.deliveries.map((d: { endpoint_id: string }) => [d.endpoint_id, d]));
      expect(byEndpoint.get(endpoint.id)).toMatchObject({ status: "pending", attempts: 0, last_status_code: null });
      expect(byEndpoint.get(added.id)).toMatchObject({ status: "pending", attempts: 0 });

      expect(await tick()).toBe(2);
      const again = receiver.received.filter((r) => r.headers["webhook-id"] === target.id);
      expect(again).toHaveLength(before + 1);
      expect(extra.received.map((r) => r.headers["webhook-id"])).toEqual([target.id]);
      const [first, second] = again;
      if (!first || !second) throw new Error("expected two deliveries");
      expect(second.body).toBe(first.body);
      expect(() => verifyWebhook(endpoint.secret, second)).not.toThrow();
      expect(() => verifyWebhook(added.secret, extra.received[0] ?? first)).not.toThrow();

      const listed = await collect(client, {}, 100);
      const resent = listed.find((e) => e.id === target.id);
      expect(resent?.deliveries.map((d) => d.status)).toEqual(["succeeded", "succeeded"]);
      await client.delete(`/api/v1/webhook-endpoints/${added.id}`);
    } finally {
      await extra.close();
    }
  });

  test("another account's or mode's event, or an unknown id, is 404", async () => {
    const target = aTestEvents[1]?.id ?? "";
    for (const key of [a.liveKey, b.testKey, b.liveKey]) {
      const res = await server.client(key).post(`/api/v1/events/${target}/resend`);
      expect(res.status).toBe(404);
      expect(res.json.code).toBe("NOT_FOUND");
    }
    expect((await server.client(a.testKey).post("/api/v1/events/evt_unknown/resend")).status).toBe(404);
    expect(await tick()).toBe(0);
  });
});
