import { afterAll, beforeAll, expect, test } from "bun:test";
import { and, eq, gt } from "drizzle-orm";
import type { Config } from "../../src/config.ts";
import { webhookDeliveries } from "../../src/db/schema/index.ts";
import { webhookRunner } from "../../src/jobs/queues/delivery-queue.ts";
import { loadConfig } from "../../src/load-config.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import {
  enqueueTestEvent,
  type HangingReceiver,
  startHangingReceiver,
  startWebhookReceiver,
  type WebhookReceiver,
} from "../helpers/webhook-receiver.ts";

// A dead endpoint that holds its connections open for far longer than any test runs.
const webhooks: Config["webhooks"] = {
  ...loadConfig({}).webhooks,
  allowPrivateUrls: true,
  timeoutMs: 60_000,
  concurrency: 4,
  endpointConcurrency: 2,
};

let server: TestServer;
let healthy: WebhookReceiver;
let hanging: HangingReceiver;

beforeAll(async () => {
  server = await startTestServer({ webhooks });
});
afterAll(async () => {
  await server.close();
});

async function accountWithEndpoint(url: string) {
  const account = await server.createAccount();
  const created = await server.client(account.testKey).post("/api/v1/webhook-endpoints", { url });
  expect(created.status).toBe(201);
  return { ...account, endpointId: created.json.data.id as string };
}

/** Deliveries of the endpoint whose lease is still running: slots it holds, in any process. */
async function leasedFor(endpointId: string): Promise<number> {
  const d = webhookDeliveries;
  const rows = await server.database.handle.db
    .select({ id: d.id })
    .from(d)
    .where(and(eq(d.endpointId, endpointId), eq(d.status, "pending"), gt(d.leaseExpiresAt, new Date())));
  return rows.length;
}

test("a hanging endpoint with a backlog holds at most its cap; a healthy endpoint's webhooks arrive at once", async () => {
  healthy = startWebhookReceiver();
  hanging = startHangingReceiver();
  const dead = await accountWithEndpoint(hanging.url);
  const live = await accountWithEndpoint(healthy.url);
  for (let n = 0; n < 10; n++) await enqueueTestEvent(server, dead.id);

  // Only NOTIFY and freed slots wake the loop within the test's bounds; the poll is far away.
  const loop = webhookRunner(server.deps, "independence", { pollMs: 60_000 });
  loop.start();
  let stopping: Promise<void> | undefined;
  try {
    await hanging.waitFor(2);
    for (let n = 1; n <= 3; n++) {
      const started = performance.now();
      await enqueueTestEvent(server, live.id);
      // Before the fix the loop waited for its whole batch, so this took the dead endpoint's full timeout.
      await healthy.waitFor(n, 1_000);
      expect(performance.now() - started).toBeLessThan(1_000);
    }
    expect(hanging.count()).toBe(2);
    expect(await leasedFor(dead.endpointId)).toBe(2);
  } finally {
    stopping = loop.stop();
    // Dropping the dead endpoint's connections ends its sends, so the loop can stop.
    await hanging.close();
    await healthy.close();
  }
  await stopping;
});

test("one pass leases no more than the per-endpoint cap for one endpoint, and everything due for others", async () => {
  const quick = await startTestServer({ webhooks: { ...webhooks, timeoutMs: 300 } });
  const slow = startHangingReceiver();
  const fast = startWebhookReceiver();
  try {
    const make = async (url: string) => {
      const account = await quick.createAccount();
      const created = await quick.client(account.testKey).post("/api/v1/webhook-endpoints", { url });
      return { id: account.id, endpointId: created.json.data.id as string };
    };
    const dead = await make(slow.url);
    const live = await make(fast.url);
    for (let n = 0; n < 6; n++) await enqueueTestEvent(quick, dead.id);
    await enqueueTestEvent(quick, live.id);
    await enqueueTestEvent(quick, live.id);
    // Before the fix the pass claimed all eight and sent six of them to the dead endpoint.
    expect(await webhookRunner(quick.deps, "one-pass").tick({ limit: 20 })).toBe(4);
    expect(slow.count()).toBe(2);
    expect(fast.received).toHaveLength(2);
  } finally {
    await slow.close();
    await fast.close();
    await quick.close();
  }
});
