import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Config } from "../../src/config.ts";
import { webhookEndpoints } from "../../src/db/schema/index.ts";
import { webhookRunner } from "../../src/jobs/queues/delivery-queue.ts";
import { loadConfig } from "../../src/load-config.ts";
import { generateWebhookSecret } from "../../src/webhooks/secret.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { enqueueTestEvent, startWebhookReceiver, type WebhookReceiver } from "../helpers/webhook-receiver.ts";

/** What `npm start` gets with no DATABASE_URL and no WEBHOOK_ALLOW_PRIVATE_URLS. */
const embeddedDefault = loadConfig({}).webhooks;
const refusedMessage = "refused: private or loopback address";
const metadataUrl = "https://169.254.169.254/latest/meta-data";
const loopbackUrl = "https://127.0.0.1/hook";

let servers: Record<"embedded" | "both" | "neither", TestServer>;
let receiver: WebhookReceiver;

async function serverWith(allowPrivateUrls: Config["webhooks"]["allowPrivateUrls"]): Promise<TestServer> {
  return startTestServer({ webhooks: { ...embeddedDefault, allowPrivateUrls, retrySchedule: [0, 3600], timeoutMs: 2000 } });
}

beforeAll(async () => {
  servers = {
    embedded: await serverWith(embeddedDefault.allowPrivateUrls),
    both: await serverWith(true),
    neither: await serverWith(false),
  };
  receiver = startWebhookReceiver();
});
afterAll(async () => {
  await receiver.close();
  for (const server of Object.values(servers)) await server.close();
});

/** Creates an endpoint with the mode's key; returns the status and the endpoints the key then sees. */
async function create(server: TestServer, key: string, url: string) {
  const res = await server.client(key).post("/api/v1/webhook-endpoints", { url });
  const listed = (await server.client(key).get("/api/v1/webhook-endpoints")).json.data as unknown[];
  return { status: res.status, fields: res.json.data?.errors?.map((e: { field: string }) => e.field), listed: listed.length };
}

describe("embedded default (WEBHOOK_ALLOW_PRIVATE_URLS unset, no DATABASE_URL): private targets for test mode only", () => {
  test("the default is `test`", () => {
    expect(embeddedDefault.allowPrivateUrls).toBe("test");
  });

  test("a live key gets 400 naming url for the metadata address and 127.0.0.1; nothing is stored", async () => {
    const { liveKey } = await servers.embedded.createAccount();
    expect(await create(servers.embedded, liveKey, metadataUrl)).toEqual({ status: 400, fields: ["url"], listed: 0 });
    expect(await create(servers.embedded, liveKey, loopbackUrl)).toEqual({ status: 400, fields: ["url"], listed: 0 });
  });

  test("a test key gets 201 for the same addresses", async () => {
    const { testKey } = await servers.embedded.createAccount();
    expect((await create(servers.embedded, testKey, metadataUrl)).status).toBe(201);
    expect((await create(servers.embedded, testKey, loopbackUrl)).status).toBe(201);
  });

  test("a live endpoint cannot be PATCHed to a private address", async () => {
    const { liveKey } = await servers.embedded.createAccount();
    const client = servers.embedded.client(liveKey);
    const created = await client.post("/api/v1/webhook-endpoints", { url: "https://93.184.216.34/hooks" });
    expect(created.status).toBe(201);
    const patched = await client.request("PATCH", `/api/v1/webhook-endpoints/${created.json.data.id}`, { url: metadataUrl });
    expect(patched.status).toBe(400);
    expect((await client.get(`/api/v1/webhook-endpoints/${created.json.data.id}`)).json.data.url).toBe(
      "https://93.184.216.34/hooks",
    );
  });

  test("stored live endpoints inside are refused at ping and at delivery; test ones are delivered", async () => {
    const server = servers.embedded;
    const account = await server.createAccount();
    const port = new URL(receiver.url).port;
    // Stored as if registered under another setting: the send-time check is per the endpoint's mode.
    const [live] = await server.database.handle.db
      .insert(webhookEndpoints)
      .values({ accountId: account.id, mode: "live", url: `https://127.0.0.1:${port}/live`, secret: generateWebhookSecret() })
      .returning();
    await server.database.handle.db
      .insert(webhookEndpoints)
      .values({ accountId: account.id, mode: "test", url: `http://127.0.0.1:${port}/test`, secret: generateWebhookSecret() });
    const ping = await server.client(account.liveKey).post(`/api/v1/webhook-endpoints/${live?.id}/ping`);
    expect(ping.status).toBe(200);
    expect(ping.json.data).toMatchObject({ delivered: false, error: refusedMessage });

    const before = receiver.received.length;
    await enqueueTestEvent(server, account.id, "live");
    await enqueueTestEvent(server, account.id, "test");
    expect(await webhookRunner(server.deps, "by-mode").tick()).toBe(2);
    // Only the test-mode delivery reached the receiver; the live one never opened a connection.
    expect(receiver.received.slice(before).map((r) => r.path)).toEqual(["/test"]);
    const events = await server.client(account.liveKey).get("/api/v1/events", { query: { limit: 1 } });
    expect(events.json.data.items[0].deliveries.map((d: { last_error: string | null }) => d.last_error)).toEqual([
      refusedMessage,
    ]);
  });
});

describe("explicit settings", () => {
  test("`true` allows private targets in both modes", async () => {
    const { liveKey, testKey } = await servers.both.createAccount();
    for (const key of [liveKey, testKey]) {
      expect((await create(servers.both, key, metadataUrl)).status).toBe(201);
      expect((await create(servers.both, key, loopbackUrl)).status).toBe(201);
    }
  });

  test("`false` refuses private targets in both modes", async () => {
    const { liveKey, testKey } = await servers.neither.createAccount();
    for (const key of [liveKey, testKey]) {
      expect((await create(servers.neither, key, metadataUrl)).status).toBe(400);
      expect((await create(servers.neither, key, loopbackUrl)).status).toBe(400);
    }
  });
});
