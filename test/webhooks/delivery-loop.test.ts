import { afterAll, beforeAll, expect, test } from "bun:test";
import { webhookRunner } from "../../src/jobs/queues/delivery-queue.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { enqueueTestEvent, startWebhookReceiver, verifyWebhook, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

let server: TestServer;
let receiver: WebhookReceiver;

beforeAll(async () => {
  server = await startTestServer();
  receiver = startWebhookReceiver();
});
afterAll(async () => {
  await receiver.close();
  await server.close();
});

test("the delivery loop is woken by NOTIFY and stops when aborted", async () => {
  const account = await server.createAccount();
  const created = await server.client(account.testKey).post("/api/v1/webhook-endpoints", { url: receiver.url });
  const secret = created.json.data.secret as string;
  // A poll far beyond the test's waits: only a NOTIFY can wake the loop in time.
  const loop = webhookRunner(
    { database: server.database.handle, db: server.deps.db, config: server.deps.config, logger: server.deps.logger },
    "loop-test",
    { pollMs: 60_000 },
  );
  loop.start();
  let stopping: Promise<void> | undefined;
  try {
    const first = await enqueueTestEvent(server, account.id);
    await receiver.waitFor(1, 5_000);
    const second = await enqueueTestEvent(server, account.id, "test", "failed");
    const received = await receiver.waitFor(2, 5_000);
    expect(received.map((r) => r.headers["webhook-id"])).toEqual([first.eventId, second.eventId]);
    for (const request of received) expect(() => verifyWebhook(secret, request)).not.toThrow();
  } finally {
    stopping = loop.stop();
  }
  const stopped = await Promise.race([stopping.then(() => "stopped"), Bun.sleep(2_000).then(() => "still running")]);
  expect(stopped).toBe("stopped");
  await enqueueTestEvent(server, account.id);
  expect(receiver.received).toHaveLength(2);
});
