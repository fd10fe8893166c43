import { afterAll, afterEach, beforeAll, describe, expect, setSystemTime, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { Webhook } from "standardwebhooks";
import { webhookEndpoints } from "../../src/db/schema/index.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { type ReceivedWebhook, startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

// A rotated-out secret signs until previous_secret_expires_at on the database's clock, the one that set it, not
// on the process's. Each test skews this process's clock (setSystemTime) by two hours, then rotates (or ends the
// overlap) with the database's own now(), so the database's answer is the one expected. On PostgreSQL the
// server's clock is not this process's: a decision by the process clock signs the other way, and the test
// fails. (The embedded engine reads this process's clock, so there both clocks move together.)
const skewMs = 2 * 3_600_000;
let server: TestServer;
let receiver: WebhookReceiver;

beforeAll(async () => {
  server = await startTestServer();
  receiver = startWebhookReceiver();
});
afterEach(() => setSystemTime());
afterAll(async () => {
  await receiver.close();
  await server.close();
});

/** Whether a receiver holding only `secret` accepts the request (its tolerance reads this process's clock too). */
function verifies(secret: string, request: ReceivedWebhook): boolean {
  try {
    new Webhook(secret).verify(request.body, request.headers);
    return true;
  } catch {
    return false;
  }
}

/** A new endpoint whose secret has just been rotated with a one-hour overlap: its old and new secrets. */
async function rotatedEndpoint() {
  const client = server.client((await server.createAccount()).testKey);
  const endpoint = (await client.post("/api/v1/webhook-endpoints", { url: `${receiver.url}/hooks` })).json.data;
  const rotated = await client.post(`/api/v1/webhook-endpoints/${endpoint.id}/rotate-secret`, { overlap_seconds: 3600 });
  expect(rotated.status).toBe(200);
  return { client, id: endpoint.id as string, old: endpoint.secret as string, fresh: rotated.json.data.secret as string };
}

async function ping(endpoint: Awaited<ReturnType<typeof rotatedEndpoint>>): Promise<ReceivedWebhook> {
  const before = receiver.received.length;
  const res = await endpoint.client.post(`/api/v1/webhook-endpoints/${endpoint.id}/ping`);
  expect(res.json.data.delivered).toBe(true);
  const request = receiver.received[before];
  if (!request) throw new Error("no ping");
  return request;
}

describe("the rotation overlap follows the database's clock", () => {
  test("within the overlap on the database's clock the ping carries both signatures, though the process's clock is past it", async () => {
    setSystemTime(new Date(Date.now() + skewMs));
    const endpoint = await rotatedEndpoint();
    const request = await ping(endpoint);
    expect(request.headers["webhook-signature"]?.split(" ")).toHaveLength(2);
    expect(verifies(endpoint.old, request)).toBe(true);
    expect(verifies(endpoint.fresh, request)).toBe(true);
  });

  test("past the overlap on the database's clock the ping carries only the new signature, though the process's clock is within it", async () => {
    setSystemTime(new Date(Date.now() - skewMs));
    const endpoint = await rotatedEndpoint();
    await server.database.handle.db
      .update(webhookEndpoints)
      .set({ previousSecretExpiresAt: sql`now() - interval '1 minute'` })
      .where(eq(webhookEndpoints.id, endpoint.id));
    const request = await ping(endpoint);
    expect(request.headers["webhook-signature"]?.split(" ")).toHaveLength(1);
    expect(verifies(endpoint.old, request)).toBe(false);
    expect(verifies(endpoint.fresh, request)).toBe(true);
  });
});
