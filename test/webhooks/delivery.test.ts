import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { asc, eq } from "drizzle-orm";
import { events, webhookAttempts, webhookDeliveries } from "../../src/db/schema/index.ts";
import { webhookRunner } from "../../src/jobs/queues/delivery-queue.ts";
import { loadConfig } from "../../src/load-config.ts";
import { retryDelaySeconds } from "../../src/webhooks/delivery.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { enqueueTestEvent, startWebhookReceiver, verifyWebhook, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let server: TestServer;
/** Tiny retry schedule and timeout, so retries and exhaustion take milliseconds. */
let quick: TestServer;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  server = await startTestServer();
  quick = await startTestServer({
    webhooks: { ...loadConfig({}).webhooks, retrySchedule: [0, 0.05, 0.05, 0.05], timeoutMs: 300 },
  });
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await server.close();
  await quick.close();
});

function receiver(): WebhookReceiver {
  const r = startWebhookReceiver();
  receivers.push(r);
  return r;
}

const tick = (on: TestServer = server) => webhookRunner(on.deps, "test").tick();

/** An account with one endpoint (test mode) pointing at `url`. */
async function accountWithEndpoint(on: TestServer, url: string) {
  const account = await on.createAccount();
  const created = await on.client(account.testKey).post("/api/v1/webhook-endpoints", { url });
  expect(created.status).toBe(201);
  return { ...account, endpointId: created.json.data.id as string, secret: created.json.data.secret as string };
}

async function deliveriesOf(on: TestServer, eventId: string) {
  return on.database.handle.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, eventId));
}

async function attemptsOf(on: TestServer, deliveryId: string) {
  return on.database.handle.db
    .select()
    .from(webhookAttempts)
    .where(eq(webhookAttempts.deliveryId, deliveryId))
    .orderBy(asc(webhookAttempts.attempt));
}

/** Waits until the delivery's next attempt is due: the (tiny) retry delay, nothing more. */
async function untilDue(on: TestServer, eventId: string) {
  const [delivery] = await deliveriesOf(on, eventId);
  const due = delivery?.nextAttemptAt?.getTime() ?? Date.now();
  await Bun.sleep(Math.max(0, due - Date.now()) + 5);
}

describe("webhook delivery", () => {
  test("an enqueued event is POSTed once, signed with the endpoint secret, payload unchanged", async () => {
    const r = receiver();
    const account = await accountWithEndpoint(server, `${r.url}/hooks`);
    const { eventId, row } = await enqueueTestEvent(server, account.id);
    expect(await tick()).toBe(1);
    expect(r.received).toHaveLength(1);
    const [request] = r.received;
    if (!request) throw new Error("nothing received");
    expect(request.path).toBe("/hooks");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["webhook-id"]).toBe(eventId);
    expect(request.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(Math.abs(Number(request.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(60);
    const verified = verifyWebhook(account.secret, request);
    const [stored] = await server.database.handle.db.select().from(events).where(eq(events.id, eventId));
    expect(verified).toEqual(stored?.payload);
    expect(verified).toMatchObject({ id: eventId, type: "transaction.successful", mode: "test" });
    expect(verified).toMatchObject({ data: { reference: row.reference, status: "successful" } });

    const [delivery] = await deliveriesOf(server, eventId);
    expect(delivery).toMatchObject({ status: "succeeded", attempts: 1, lastStatusCode: 200, lastError: null });
    const attempts = await attemptsOf(server, delivery?.id ?? "");
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ attempt: 1, statusCode: 200, error: null });
    expect(await tick()).toBe(0);
    expect(r.received).toHaveLength(1);
  });

  test("the test receiver rejects a tampered body, signature or secret", async () => {
    const r = receiver();
    const account = await accountWithEndpoint(server, r.url);
    const other = await accountWithEndpoint(server, r.url);
    await enqueueTestEvent(server, account.id, "test", "failed");
    await tick();
    const [request] = r.received;
    if (!request) throw new Error("nothing received");
    expect(() => verifyWebhook(account.secret, request)).not.toThrow();
    const tamperedBody = { ...request, body: request.body.replace('"failed"', '"successful"') };
    expect(tamperedBody.body).not.toBe(request.body);
    expect(() => verifyWebhook(account.secret, tamperedBody)).toThrow();
    const signature = request.headers["webhook-signature"] ?? "";
    const flipped = `${signature.slice(0, -3)}${signature.at(-3) === "A" ? "B" : "A"}${signature.slice(-2)}`;
    expect(() =>
      verifyWebhook(account.secret, { ...request, headers: { ...request.headers, "webhook-signature": flipped } }),
    ).toThrow();
    expect(() => verifyWebhook(other.secret, request)).toThrow();
  });

  test("a receiver failing the first three attempts gets the event on the fourth; every attempt is logged", async () => {
    const r = receiver();
    r.failNext(3);
    const account = await accountWithEndpoint(quick, r.url);
    const { eventId } = await enqueueTestEvent(quick, account.id);
    for (let n = 1; n <= 4; n++) {
      await untilDue(quick, eventId);
      expect(await tick(quick)).toBe(1);
      expect(r.received).toHaveLength(n);
    }
    expect(r.accepted()).toHaveLength(1);
    for (const request of r.received) {
      expect(request.headers["webhook-id"]).toBe(eventId);
      expect(() => verifyWebhook(account.secret, request)).not.toThrow();
    }
    const [delivery] = await deliveriesOf(quick, eventId);
    expect(delivery).toMatchObject({ status: "succeeded", attempts: 4, lastStatusCode: 200, nextAttemptAt: null });
    const attempts = await attemptsOf(quick, delivery?.id ?? "");
    expect(attempts.map((a) => [a.attempt, a.statusCode, a.error])).toEqual([
      [1, 500, "HTTP 500"],
      [2, 500, "HTTP 500"],
      [3, 500, "HTTP 500"],
      [4, 200, null],
    ]);
    for (const attempt of attempts) expect(attempt.durationMs).toBeGreaterThanOrEqual(0);
  });

  test("after the last step of the schedule the delivery is failed and not tried again", async () => {
    const r = receiver();
    r.failNext(100);
    const account = await accountWithEndpoint(quick, r.url);
    const { eventId } = await enqueueTestEvent(quick, account.id);
    for (let n = 1; n <= 4; n++) {
      await untilDue(quick, eventId);
      expect(await tick(quick)).toBe(1);
    }
    const [delivery] = await deliveriesOf(quick, eventId);
    expect(delivery).toMatchObject({ status: "failed", attempts: 4, lastStatusCode: 500, nextAttemptAt: null });
    expect(await attemptsOf(quick, delivery?.id ?? "")).toHaveLength(4);
    // Past any retry delay of the schedule, still nothing to send.
    await Bun.sleep(60);
    expect(await tick(quick)).toBe(0);
    expect(r.received).toHaveLength(4);
  });

  test("connection refused and timeouts are recorded as attempts, never thrown", async () => {
    const closed = startWebhookReceiver();
    await closed.close();
    const hanging = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Promise<Response>(() => {}) });
    try {
      const refused = await accountWithEndpoint(quick, `${closed.url}/hooks`);
      const slow = await accountWithEndpoint(quick, `http://127.0.0.1:${hanging.port}/hooks`);
      const a = await enqueueTestEvent(quick, refused.id);
      const b = await enqueueTestEvent(quick, slow.id);
      expect(await tick(quick)).toBe(2);
      const [refusedDelivery] = await deliveriesOf(quick, a.eventId);
      const [slowDelivery] = await deliveriesOf(quick, b.eventId);
      // Clients are told the kind of failure only, never the socket error (it names the address).
      expect(refusedDelivery).toMatchObject({ status: "pending", attempts: 1, lastStatusCode: null, lastError: "unreachable" });
      expect(slowDelivery).toMatchObject({ status: "pending", attempts: 1, lastStatusCode: null, lastError: "timed out" });
      const [timedOut] = await attemptsOf(quick, slowDelivery?.id ?? "");
      expect(timedOut?.durationMs).toBeGreaterThanOrEqual(250);
    } finally {
      hanging.stop(true);
    }
  });

  test("several workers ticking at once deliver each event exactly once", async () => {
    const r = receiver();
    const account = await accountWithEndpoint(server, r.url);
    const ids: string[] = [];
    for (let n = 0; n < 5; n++) ids.push((await enqueueTestEvent(server, account.id)).eventId);
    // Each worker passes until it finds nothing it can take (rows another holds are skipped).
    const drain = async (workerId: string) => {
      let total = 0;
      for (let n = 1; n > 0; total += n) n = await webhookRunner(server.deps, workerId).tick({ limit: 2 });
      return total;
    };
    const claimed = await Promise.all(["w1", "w2", "w3"].map(drain));
    expect(claimed.reduce((sum, n) => sum + n, 0)).toBe(5);
    expect(await tick()).toBe(0);
    expect(r.received.map((q) => q.headers["webhook-id"]).sort()).toEqual([...ids].sort());
  });

  test("a deleted endpoint receives nothing; its pending deliveries stop", async () => {
    const kept = receiver();
    const dropped = receiver();
    const account = await accountWithEndpoint(server, kept.url);
    const client = server.client(account.testKey);
    const second = (await client.post("/api/v1/webhook-endpoints", { url: dropped.url })).json.data;
    const pending = await enqueueTestEvent(server, account.id);
    expect((await client.delete(`/api/v1/webhook-endpoints/${second.id}`)).status).toBe(200);
    const later = await enqueueTestEvent(server, account.id);
    expect(await tick()).toBe(2);
    expect(dropped.received).toHaveLength(0);
    expect(kept.received.map((q) => q.headers["webhook-id"]).sort()).toEqual([pending.eventId, later.eventId].sort());
    const stopped = (await deliveriesOf(server, pending.eventId)).find((d) => d.endpointId === second.id);
    expect(stopped).toMatchObject({ status: "failed", attempts: 0, lastError: "endpoint deleted", nextAttemptAt: null });
    expect((await deliveriesOf(server, later.eventId)).map((d) => d.endpointId)).toEqual([account.endpointId]);
  });

  test("retry delays follow the schedule with ±10% jitter and end after the last step", () => {
    const schedule = [0, 5, 300];
    expect(retryDelaySeconds(schedule, 1, () => 0)).toBeCloseTo(4.5);
    expect(retryDelaySeconds(schedule, 1, () => 1)).toBeCloseTo(5.5);
    expect(retryDelaySeconds(schedule, 2, () => 0.5)).toBeCloseTo(300);
    expect(retryDelaySeconds(schedule, 3)).toBeNull();
  });
});
